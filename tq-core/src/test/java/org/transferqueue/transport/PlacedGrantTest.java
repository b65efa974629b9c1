package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.MsgpackWriter;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.memory.SharedSegment;
import org.transferqueue.testing.Await;

/**
 * Placed grants (docs/PROTOCOL.md section 4.2): an SHM_GRANT that announces its request gets the
 * destinations the handler's body allocator chose when they all lie in the pool, the client writes
 * each body there and the request is dispatched with them; a request that does not match, a release
 * and a closed connection abandon the placing; destinations outside the pool get an ordinary
 * region.
 *
 * <p>The handler here stores bodies in a "slab" (a storage region of the server's pool), as a store
 * node's engine does: its allocator bump-allocates in the slab, the metadata {@code refuse} puts a
 * body in a connection buffer instead, {@code decline} places nothing.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PlacedGrantTest {
  private static final int PUT = 20;
  private static final int ECHO = 21;

  private final TransportConfig config =
      TransportConfig.builder()
          .connectTimeout(Duration.ofSeconds(5))
          .defaultCallTimeout(Duration.ofSeconds(20))
          .sharedMemoryMinBytes(1)
          .sharedMemorySegmentBytes(1L << 20)
          .shutdownGracePeriod(Duration.ofSeconds(5))
          .build();
  private SharedMemoryPool pool;
  private NativeBuffer slab;
  private TransportServer server;
  private final AtomicLong cursor = new AtomicLong();
  private final AtomicInteger abandoned = new AtomicInteger();
  private final AtomicInteger dispatched = new AtomicInteger();
  private final AtomicInteger dispatchedWithPlacedMetadata = new AtomicInteger();
  private final Map<byte[], Boolean> placedMetadata =
      Collections.synchronizedMap(new IdentityHashMap<>());

  @BeforeEach
  void start(BufferAllocator allocator) {
    pool = TransportServer.newSharedMemoryPool(config, allocator, "placed");
    assumeTrue(pool != null, "shared memory needs Linux");
    slab = pool.allocateStorage(1 << 20);
    server =
        TransportServer.builder(config, allocator)
            .name("placed")
            .sharedMemoryPool(pool)
            .handler(PUT, this::onPut, this::place)
            .handler(ECHO, RequestHandler.replying(r -> Reply.of(r.metadata(), r.body(0))))
            .start();
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    if (slab != null) {
      slab.close();
    }
    if (pool != null) {
      pool.close();
    }
  }

  private RequestBodyAllocator.Placed place(
      byte[] metadata, long[] lengths, BufferAllocator connection) {
    String what = new String(metadata, StandardCharsets.UTF_8);
    if (what.equals("decline")) {
      return null;
    }
    List<MemorySegment> segments = new ArrayList<>();
    List<NativeBuffer> owned = new ArrayList<>();
    for (long length : lengths) {
      if (what.equals("refuse")) {
        NativeBuffer buffer = connection.allocate(length);
        owned.add(buffer);
        segments.add(buffer.segment());
      } else {
        long at = cursor.getAndAdd((length + 63) & -64);
        segments.add(slab.segment().asSlice(at, length));
      }
    }
    placedMetadata.put(metadata, true);
    return new RequestBodyAllocator.Placed(segments, owned, abandoned::incrementAndGet);
  }

  private void onPut(ReceivedRequest request, Responder responder) {
    dispatched.incrementAndGet();
    if (placedMetadata.containsKey(request.metadata())) {
      dispatchedWithPlacedMetadata.incrementAndGet();
    }
    responder.reply(Reply.empty());
  }

  private static byte[] text(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static RawConnection.RawReply placedGrant(
      RawAttached client, int type, byte[] meta, long... lengths) throws IOException {
    long total = 0;
    for (long length : lengths) {
      total += (length + 63) & -64;
    }
    return client.call(
        MessageDescriptor.TYPE_SHM_GRANT,
        SharedMessages.placedGrantRequest(Math.max(1, total), type, meta, lengths));
  }

  private static SharedMessages.Grant decode(RawConnection.RawReply reply, int bodies) {
    assertThat(reply.isError()).as(String.valueOf(reply.errorMessage())).isFalse();
    return SharedMessages.decodeGrantReply(reply.meta(), "test", bodies);
  }

  /** A request frame with shared bodies and the given item (before the metadata). */
  private static RawConnection.RawReply sendShared(
      RawAttached client, int type, long[] lengths, long grantId, long[] offsets, byte[] meta)
      throws IOException {
    MsgpackWriter item = new MsgpackWriter(32 + meta.length);
    item.writeArrayHeader(offsets == null ? 1 : 2);
    item.writeLong(grantId);
    if (offsets != null) {
      item.writeArrayHeader(offsets.length);
      for (long offset : offsets) {
        item.writeLong(offset);
      }
    }
    item.writeRaw(meta, 0, meta.length);
    client.raw.write(
        RawConnection.frame(
            type, FrameDescriptor.FLAG_SHARED_BODY, client.nextId++, lengths, item.toByteArray()));
    return client.raw.readReply();
  }

  @Test
  void shouldDispatchWithTheBodiesWhereTheAllocatorPlacedThem() throws IOException {
    try (RawAttached client = new RawAttached(server.address(), true)) {
      byte[] meta = text("put");
      SharedMessages.Grant grant = decode(placedGrant(client, PUT, meta, 100, 5000), 2);
      assertThat(grant.placed()).isTrue();
      assertThat(server.sharedMemoryStats().grants()).isEqualTo(1);
      long[] lengths = {100, 5000};
      for (int i = 0; i < 2; i++) {
        SharedMessages.Placement placement = grant.placements().get(i);
        SharedSegment segment = client.map(placement.segment());
        segment.memory().asSlice(placement.offset(), lengths[i]).fill((byte) (i + 1));
      }
      RawConnection.RawReply reply = sendShared(client, PUT, lengths, grant.grantId(), null, meta);
      assertThat(reply.isError()).as(String.valueOf(reply.errorMessage())).isFalse();
      assertThat(dispatchedWithPlacedMetadata.get()).isEqualTo(1);
      assertThat(abandoned.get()).isZero();
      // The bodies were written straight into the slab: no region was granted for them.
      assertFilled(slab.segment().asSlice(0, 100), (byte) 1);
      assertFilled(slab.segment().asSlice(128, 5000), (byte) 2);
      SharedMemoryStats stats = server.sharedMemoryStats();
      assertThat(stats.requestBytesPlaced()).isEqualTo(5100);
      assertThat(stats.requestBytesGranted()).isZero();
      assertThat(stats.grants()).isZero();
      // A grant is used once.
      RawConnection.RawReply again = sendShared(client, PUT, lengths, grant.grantId(), null, meta);
      assertThat(again.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
      assertThat(again.errorMessage()).contains("grant_id=" + grant.grantId());
      assertThat(dispatched.get()).isEqualTo(1);
    }
  }

  @Test
  void shouldRefuseARequestThatDoesNotMatchItsPlacedGrantAndAbandonThePlacing() throws IOException {
    try (RawAttached client = new RawAttached(server.address(), true)) {
      SharedMessages.Grant other = decode(placedGrant(client, PUT, text("put"), 64), 1);
      RawConnection.RawReply metadata =
          sendShared(client, PUT, new long[] {64}, other.grantId(), null, text("pot"));
      assertThat(metadata.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
      assertThat(metadata.errorMessage()).contains("application metadata");
      assertThat(abandoned.get()).isEqualTo(1);

      SharedMessages.Grant shorter = decode(placedGrant(client, PUT, text("put"), 64), 1);
      RawConnection.RawReply lengths =
          sendShared(client, PUT, new long[] {63}, shorter.grantId(), null, text("put"));
      assertThat(lengths.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
      assertThat(lengths.errorMessage()).contains("[63]").contains("[64]");
      assertThat(abandoned.get()).isEqualTo(2);

      SharedMessages.Grant offsets = decode(placedGrant(client, PUT, text("put"), 64), 1);
      RawConnection.RawReply withOffsets =
          sendShared(client, PUT, new long[] {64}, offsets.grantId(), new long[] {0}, text("put"));
      assertThat(withOffsets.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
      assertThat(abandoned.get()).isEqualTo(3);

      RawConnection.RawReply unknown =
          sendShared(client, PUT, new long[] {64}, 999_999, null, text("put"));
      assertThat(unknown.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
      assertThat(dispatched.get()).isZero();
      assertThat(server.sharedMemoryStats().grants()).isZero();
      // The connection goes on.
      SharedMessages.Grant ok = decode(placedGrant(client, PUT, text("put"), 64), 1);
      assertThat(
              sendShared(client, PUT, new long[] {64}, ok.grantId(), null, text("put")).isError())
          .isFalse();
      assertThat(dispatched.get()).isEqualTo(1);
    }
  }

  @Test
  void shouldAbandonAPlacedGrantReleasedUnusedOrLeftOnAClosedConnection() throws IOException {
    try (RawAttached client = new RawAttached(server.address(), true)) {
      SharedMessages.Grant grant = decode(placedGrant(client, PUT, text("put"), 64), 1);
      RawConnection.RawReply release =
          client.call(
              MessageDescriptor.TYPE_SHM_RELEASE,
              SharedMessages.releaseRequest(new long[] {grant.grantId()}));
      assertThat(release.isError()).isFalse();
      assertThat(abandoned.get()).isEqualTo(1);
      assertThat(server.sharedMemoryStats().grants()).isZero();
      decode(placedGrant(client, PUT, text("put"), 64), 1);
      assertThat(server.sharedMemoryStats().grants()).isEqualTo(1);
    }
    Await.until(() -> abandoned.get() == 2, "the closed connection's placed grant abandoned");
    assertThat(dispatched.get()).isZero();
  }

  @Test
  void shouldGrantARegionWhenTheBodiesAreNotAllPlacedInThePool() throws IOException {
    try (RawAttached client = new RawAttached(server.address(), true)) {
      SharedMessages.Grant refused = decode(placedGrant(client, PUT, text("refuse"), 64), 1);
      assertThat(refused.placed()).isFalse();
      assertThat(refused.length()).isGreaterThanOrEqualTo(64);
      assertThat(abandoned.get()).as("the refused placing is undone at once").isEqualTo(1);
      SharedMessages.Grant declined = decode(placedGrant(client, PUT, text("decline"), 64), 1);
      assertThat(declined.placed()).isFalse();
      SharedMessages.Grant noAllocator = decode(placedGrant(client, ECHO, text("x"), 64), 1);
      assertThat(noAllocator.placed()).isFalse();
      // The region is used as any grant: the request is placed as without shared memory.
      RawConnection.RawReply reply =
          sendShared(client, PUT, new long[] {64}, refused.grantId(), null, text("refuse"));
      assertThat(reply.isError()).as(String.valueOf(reply.errorMessage())).isFalse();
      assertThat(dispatched.get()).isEqualTo(1);
      assertThat(dispatchedWithPlacedMetadata.get()).isZero();
    }
  }

  @Test
  void shouldSendPlacedRequestsFromTheJavaClientWithOneCopy(BufferAllocator allocator) {
    try (TransportClient client = new TransportClient(config, allocator);
        NativeBuffer body = allocator.allocate(3000)) {
      body.segment().fill((byte) 7);
      for (int i = 0; i < 3; i++) {
        Request put = new Request(PUT, text("put"), List.of(body.segment()), true);
        client.call(server.address(), put).close();
      }
      assertThat(dispatchedWithPlacedMetadata.get()).isEqualTo(3);
      assertFilled(slab.segment().asSlice(0, 3000), (byte) 7);
      SharedMemoryStats stats = server.sharedMemoryStats();
      assertThat(stats.requestBytesPlaced()).isEqualTo(9000);
      assertThat(stats.requestBytesGranted()).isZero();
      // Not placed where the server cannot: the client falls back to a region.
      Request refused = new Request(PUT, text("refuse"), List.of(body.segment()), true);
      client.call(server.address(), refused).close();
      try (Response echo =
          client.call(
              server.address(), new Request(ECHO, text("e"), List.of(body.segment()), true))) {
        assertFilled(echo.body(0), (byte) 7);
      }
      assertThat(server.sharedMemoryStats().requestBytesGranted()).isEqualTo(6000);
      assertThat(abandoned.get()).isEqualTo(1);
    }
  }

  private static void assertFilled(MemorySegment segment, byte value) {
    for (long i = 0; i < segment.byteSize(); i++) {
      if (segment.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) != value) {
        throw new AssertionError("byte " + i + " is not " + value);
      }
    }
  }
}
