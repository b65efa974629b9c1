package org.transferqueue.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.codec.MsgpackValue;
import org.transferqueue.config.HostPort;

/**
 * A client of the shared-memory handshake of docs/PROTOCOL.md written from the wire contract alone
 * (HELLO with {@code want_shm}, the offer, mapping the segment through {@code /proc/<pid>/fd/<fd>},
 * the probe nonce, SHM_ATTACH, SHM_GRANT), with raw frames and no product transport code: it checks
 * that a third party can attach, and lets a test hold granted regions in a process it then kills.
 * Not thread-safe; test code only.
 */
public final class RawShmSession implements AutoCloseable {
  /** Message type SHM_ATTACH. */
  public static final int SHM_ATTACH = 4;

  /** Message type SHM_GRANT. */
  public static final int SHM_GRANT = 5;

  /** Message type SHM_RELEASE. */
  public static final int SHM_RELEASE = 6;

  private static final byte[] MAGIC = {0x54, 0x51, 0x53, 0x48, 0x4D, 0x00, 0x00, 0x01};
  private static final ValueLayout.OfLong SIZE =
      ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private final RawFrames.Connection connection;
  private final Arena arena = Arena.ofShared();
  private final List<Grant> grants = new ArrayList<>();
  private long nextId = 1;
  private boolean attached;

  /**
   * A region the server granted.
   *
   * @param id the grant id
   * @param fd the segment's descriptor in the server
   * @param offset the region's offset in the segment
   * @param length the region's length
   */
  public record Grant(long id, int fd, long offset, long length) {}

  /**
   * Connects, sends a HELLO asking for shared memory and, when the server offers it, maps the
   * segment, checks its header, writes the nonce and attaches.
   *
   * @param address the server
   * @param token the token, or null
   */
  public RawShmSession(HostPort address, String token) {
    connection = new RawFrames.Connection(address);
    try {
      MsgpackValue hello =
          MsgpackValue.newArray(
              token == null ? MsgpackValue.NIL : MsgpackValue.newString(token),
              MsgpackValue.newBoolean(true));
      RawFrames.Reply reply = call(1, hello);
      if (reply.isError() || !reply.meta().isArrayValue()) {
        return;
      }
      MsgpackValue offer = reply.meta().asArrayValue().get(0);
      if (offer.isNilValue()) {
        return;
      }
      MsgpackValue.ArrayValue o = offer.asArrayValue();
      long pid = o.get(0).asIntegerValue().toLong();
      MsgpackValue.ArrayValue segment = o.get(1).asArrayValue();
      long probe = o.get(2).asIntegerValue().toLong();
      MemorySegment memory = map(pid, segment);
      MsgpackValue nonce = MsgpackValue.NIL;
      if (memory != null) {
        byte[] bytes = new byte[16];
        new SecureRandom().nextBytes(bytes);
        MemorySegment.copy(bytes, 0, memory, ValueLayout.JAVA_BYTE, probe, bytes.length);
        nonce = MsgpackValue.newBinary(bytes);
      }
      RawFrames.Reply attach = call(SHM_ATTACH, MsgpackValue.newArray(nonce));
      attached =
          !attach.isError()
              && attach.meta().asArrayValue().get(0) instanceof MsgpackValue.BooleanValue b
              && b.value();
    } catch (IOException e) {
      connection.close();
      arena.close();
      throw new UncheckedIOException(e);
    }
  }

  /** Maps a segment reference {@code [fd, key, size]} of process {@code pid}; null if refused. */
  private MemorySegment map(long pid, MsgpackValue.ArrayValue reference) {
    int fd = reference.get(0).asIntegerValue().toInt();
    byte[] key = reference.get(1).asBinaryValue().asByteArray();
    long size = reference.get(2).asIntegerValue().toLong();
    Path file = Path.of("/proc", Long.toString(pid), "fd", Integer.toString(fd));
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      if (channel.size() != size) {
        return null;
      }
      MemorySegment memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
      byte[] magic = memory.asSlice(0, 8).toArray(ValueLayout.JAVA_BYTE);
      byte[] stored = memory.asSlice(8, 16).toArray(ValueLayout.JAVA_BYTE);
      if (!Arrays.equals(magic, MAGIC)
          || !Arrays.equals(stored, key)
          || memory.get(SIZE, 24) != size) {
        return null;
      }
      return memory;
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * Whether the server offered shared memory and accepted the proof.
   *
   * @return true once attached
   */
  public boolean attached() {
    return attached;
  }

  /**
   * Asks for a region of {@code length} bytes.
   *
   * @param length the bytes wanted
   * @return the grant
   * @throws IOException when the connection fails
   * @throws IllegalStateException with the error code when the server refuses
   */
  public Grant grant(long length) throws IOException {
    RawFrames.Reply reply = call(SHM_GRANT, MsgpackValue.newArray(MsgpackValue.newInteger(length)));
    if (reply.isError()) {
      throw new IllegalStateException("SHM_GRANT " + length + ": error " + reply.errorCode());
    }
    MsgpackValue.ArrayValue g = reply.meta().asArrayValue();
    Grant grant =
        new Grant(
            g.get(0).asIntegerValue().toLong(),
            g.get(1).asArrayValue().get(0).asIntegerValue().toInt(),
            g.get(2).asIntegerValue().toLong(),
            g.get(3).asIntegerValue().toLong());
    grants.add(grant);
    return grant;
  }

  /**
   * The grants taken so far.
   *
   * @return the grants, in order
   */
  public List<Grant> grants() {
    return List.copyOf(grants);
  }

  private RawFrames.Reply call(int type, MsgpackValue appMeta) throws IOException {
    long id = nextId++;
    connection.write(RawFrames.request(type, id, appMeta, List.of()));
    RawFrames.Reply reply = connection.read();
    if (reply == null) {
      throw new IOException("the server closed the connection after type " + type);
    }
    return reply;
  }

  @Override
  public void close() {
    connection.close();
    arena.close();
  }
}
