package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.MsgpackWriter;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.SharedSegment;

/** A HELLO asking for shared memory, the offer decoded, the probe proved (or not). */
final class RawAttached implements AutoCloseable {
  final RawConnection raw;
  final SharedMessages.Offer offer;
  final List<SharedSegment> mapped = new ArrayList<>();
  long nextId = 2;

  RawAttached(HostPort address, boolean prove) throws IOException {
    raw = new RawConnection(address);
    raw.write(RawConnection.frame(MessageDescriptor.TYPE_HELLO, 1, new long[0], helloMeta()));
    offer = SharedMessages.decodeHelloReply(raw.readReply().meta(), "test");
    byte[] nonce = null;
    if (prove) {
      SharedSegment segment = map(offer.segment());
      nonce = new byte[16];
      new Random(1).nextBytes(nonce);
      MemorySegment.copy(
          nonce, 0, segment.memory(), ValueLayout.JAVA_BYTE, offer.probeOffset(), 16);
    }
    RawConnection.RawReply attach =
        call(MessageDescriptor.TYPE_SHM_ATTACH, SharedMessages.attachRequest(nonce));
    assertThat(SharedMessages.decodeAttachReply(attach.meta(), "test")).isEqualTo(prove);
  }

  private static byte[] helloMeta() {
    MsgpackWriter out = new MsgpackWriter(8);
    out.writeArrayHeader(2);
    out.writeNil();
    out.writeBoolean(true);
    return out.toByteArray();
  }

  SharedSegment map(SharedMessages.SegmentRef ref) {
    SharedSegment segment = SharedSegment.open(offer.pid(), ref.fd(), ref.key(), ref.size());
    mapped.add(segment);
    return segment;
  }

  RawConnection.RawReply call(int type, byte[] appMeta) throws IOException {
    raw.write(RawConnection.frame(type, nextId++, new long[0], appMeta));
    return raw.readReply();
  }

  RawConnection.RawReply shared(int type, long[] lengths, long grantId, byte[] appMeta)
      throws IOException {
    MsgpackWriter item = new MsgpackWriter(16 + appMeta.length);
    item.writeArrayHeader(1);
    item.writeLong(grantId);
    item.writeRaw(appMeta, 0, appMeta.length);
    raw.write(
        RawConnection.frame(
            type, FrameDescriptor.FLAG_SHARED_BODY, nextId++, lengths, item.toByteArray()));
    return raw.readReply();
  }

  /** A flagged request whose item names explicit body offsets: {@code [grant_id, offsets]}. */
  RawConnection.RawReply sharedAt(
      int type, long[] lengths, long grantId, long[] offsets, byte[] appMeta) throws IOException {
    MsgpackWriter item = new MsgpackWriter(32 + 9 * offsets.length + appMeta.length);
    item.writeArrayHeader(2);
    item.writeLong(grantId);
    item.writeArrayHeader(offsets.length);
    for (long offset : offsets) {
      item.writeLong(offset);
    }
    item.writeRaw(appMeta, 0, appMeta.length);
    raw.write(
        RawConnection.frame(
            type, FrameDescriptor.FLAG_SHARED_BODY, nextId++, lengths, item.toByteArray()));
    return raw.readReply();
  }

  SharedMessages.Grant grant(long length) throws IOException {
    RawConnection.RawReply reply =
        call(MessageDescriptor.TYPE_SHM_GRANT, SharedMessages.grantRequest(length));
    assertThat(reply.isError()).as(String.valueOf(reply.errorMessage())).isFalse();
    return SharedMessages.decodeGrantReply(reply.meta(), "test", -1);
  }

  @Override
  public void close() throws IOException {
    mapped.forEach(SharedSegment::close);
    raw.close();
  }
}
