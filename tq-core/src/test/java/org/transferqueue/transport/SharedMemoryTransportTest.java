package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.SharedSegment;
import org.transferqueue.testing.Await;
import org.transferqueue.testing.Seeds;

/**
 * Frame bodies through shared memory (docs/PROTOCOL.md section 4.2): negotiation, round trips, zero
 * copy, fallbacks to the socket, hostile input and the release of everything a connection held.
 */
@ExtendWith({LeakCheckExtension.class, Seeds.class})
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedMemoryTransportTest {
  private static final int ECHO = 16;
  private static final int STORE = 17;
  private static final int LOAD = 18;
  private static final int DROP = 19;
  private static final Duration LONG = Duration.ofSeconds(20);

  private static TransportConfig.Builder config() {
    return TransportConfig.builder()
        .connectTimeout(Duration.ofSeconds(5))
        .defaultCallTimeout(LONG)
        .sharedMemoryMinBytes(1)
        .sharedMemorySegmentBytes(4L << 20)
        .sharedMemoryLimitBytes(64L << 20)
        .shutdownGracePeriod(Duration.ofSeconds(5));
  }

  /** Echoes metadata and bodies; the reply's bodies are the request's own. */
  private static final RequestHandler ECHO_HANDLER =
      RequestHandler.replying(
          r -> {
            List<MemorySegment> bodies = new ArrayList<>();
            for (int i = 0; i < r.bodyCount(); i++) {
              bodies.add(r.body(i));
            }
            return new Reply(r.metadata(), bodies, List.of());
          });

  /** A key-value store of single bodies that keeps the request's buffer as the cell (zero copy). */
  private static final class Cells implements AutoCloseable {
    final Map<String, Cell> cells = new ConcurrentHashMap<>();
    final AtomicReference<MemorySegment> lastStored = new AtomicReference<>();

    /** LOAD replies whose resources have not been closed yet. */
    final java.util.concurrent.atomic.AtomicInteger openLoads =
        new java.util.concurrent.atomic.AtomicInteger();

    record Cell(NativeBuffer holder, MemorySegment bytes) {}

    TransportServer.Builder register(TransportServer.Builder builder) {
      return builder
          .handler(
              STORE,
              RequestHandler.replying(
                  r -> {
                    NativeBuffer holder = r.bodyBuffers().getFirst().retain();
                    lastStored.set(r.body(0));
                    Cell old = cells.put(new String(r.metadata()), new Cell(holder, r.body(0)));
                    if (old != null) {
                      old.holder().close();
                    }
                    return Reply.empty();
                  }))
          .handler(
              LOAD,
              RequestHandler.replying(
                  r -> {
                    Cell cell = cells.get(new String(r.metadata()));
                    NativeBuffer hold = cell.holder().retain();
                    openLoads.incrementAndGet();
                    return Reply.of(new byte[0], cell.bytes())
                        .releasing(hold, openLoads::decrementAndGet);
                  }))
          .handler(
              DROP,
              RequestHandler.replying(
                  r -> {
                    Cell cell = cells.remove(new String(r.metadata()));
                    if (cell != null) {
                      cell.holder().close();
                    }
                    return Reply.empty();
                  }));
    }

    @Override
    public void close() {
      cells.values().forEach(c -> c.holder().close());
      cells.clear();
    }
  }

  private static NativeBuffer random(BufferAllocator allocator, long length, Random random) {
    NativeBuffer buffer = allocator.allocate(length);
    MemorySegment s = buffer.segment();
    long i = 0;
    for (; i + 8 <= length; i += 8) {
      s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
    }
    for (; i < length; i++) {
      s.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
    }
    return buffer;
  }

  /** No lease left; the regions in use are at most the clients' spare grants. */
  private static void awaitIdle(TransportServer server) {
    Await.until(
        () -> server.sharedMemoryStats().idle(),
        "every lease released: " + server.sharedMemoryStats());
  }

  /** Nothing held at all: what a server holds once its clients have gone. */
  private static void awaitEmpty(TransportServer server) {
    Await.until(
        () -> {
          SharedMemoryStats stats = server.sharedMemoryStats();
          return stats.leases() == 0 && stats.grants() == 0 && stats.usedBytes() == 0;
        },
        "every shared region released: " + server.sharedMemoryStats());
  }

  @Test
  void shouldAttachEveryConnectionWhenBothSidesHaveSharedMemory(BufferAllocator allocator) {
    try (TransportServer server = TransportServer.builder(config().build(), allocator).start();
        TransportClient client =
            new TransportClient(config().connectionsPerPeer(1).build(), allocator)) {
      client.ping(server.address(), LONG);
      assertThat(client.sharedMemoryConnections(server.address())).isEqualTo(1);
      SharedMemoryStats stats = server.sharedMemoryStats();
      assertThat(stats.enabled()).isTrue();
      assertThat(stats.attachedConnections()).isEqualTo(1);
      assertThat(stats.segments()).isEqualTo(1);
      assertThat(stats.segmentBytes()).isEqualTo(4L << 20);
      assertThat(client.mappedSharedSegments()).isEqualTo(1);
      awaitIdle(server);
    }
  }

  @Test
  void shouldRoundTripBodiesOfManySizesByteForByte(BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, ECHO_HANDLER)
                .start();
        TransportClient client = new TransportClient(config().build(), allocator)) {
      for (int round = 0; round < 40; round++) {
        int count = 1 + random.nextInt(5);
        List<NativeBuffer> sent = new ArrayList<>();
        try {
          for (int i = 0; i < count; i++) {
            long length =
                switch (random.nextInt(4)) {
                  case 0 -> random.nextInt(64);
                  case 1 -> random.nextInt(5000);
                  case 2 -> random.nextInt(300_000);
                  default -> random.nextInt(6 << 20);
                };
            sent.add(random(allocator, length, random));
          }
          byte[] metadata = ("round " + round).getBytes();
          Request request =
              new Request(ECHO, metadata, sent.stream().map(NativeBuffer::segment).toList());
          try (Response response = client.call(server.address(), request)) {
            assertThat(response.metadata()).isEqualTo(metadata);
            assertThat(response.bodyCount()).isEqualTo(count);
            for (int i = 0; i < count; i++) {
              assertThat(response.body(i).mismatch(sent.get(i).segment()))
                  .as("round %d body %d of %d bytes", round, i, sent.get(i).lengthBytes())
                  .isEqualTo(-1L);
            }
          }
        } finally {
          sent.forEach(NativeBuffer::close);
        }
      }
      assertThat(client.sharedMemoryConnections(server.address())).isPositive();
      awaitIdle(server);
    }
  }

  @Test
  void shouldKeepSharedRequestBodiesAsCellsAndLeaseThemInPlace(BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    try (Cells cells = new Cells();
        TransportServer server =
            cells.register(TransportServer.builder(config().build(), allocator)).start();
        TransportClient client = new TransportClient(config().build(), allocator);
        NativeBuffer value = random(allocator, 1 << 20, random)) {
      client.call(server.address(), Request.of(STORE, "k".getBytes(), value.segment())).close();
      // The client asks for a spare grant (1 MiB) for its next request after this one.
      Await.until(() -> server.sharedMemoryStats().grants() == 1, "the spare grant");
      SharedMemoryStats stored = server.sharedMemoryStats();
      assertThat(stored.usedBytes() - stored.grantBytes()).isEqualTo(1 << 20);
      // The body the handler kept lies in the pool: the cell is the shared region itself.
      MemorySegment kept = cells.lastStored.get();
      assertThat(kept.address()).isNotZero();

      try (Response response = client.call(server.address(), Request.of(LOAD, "k".getBytes()))) {
        assertThat(response.body(0).mismatch(value.segment())).isEqualTo(-1L);
        SharedMemoryStats leased = server.sharedMemoryStats();
        assertThat(leased.leases()).isEqualTo(1);
        // Leased in place: no copy region, no growth.
        assertThat(leased.usedBytes()).isEqualTo(stored.usedBytes());
        assertThat(leased.segmentBytes()).isEqualTo(stored.segmentBytes());
        // The client reads the server's bytes: a write through the server's cell shows.
        kept.set(ValueLayout.JAVA_BYTE, 7, (byte) (kept.get(ValueLayout.JAVA_BYTE, 7) + 1));
        assertThat(response.body(0).get(ValueLayout.JAVA_BYTE, 7))
            .isEqualTo(kept.get(ValueLayout.JAVA_BYTE, 7));
        // The view is the stored cell itself: it is read-only, so no reader can change what the
        // next one gets.
        org.assertj.core.api.Assertions.assertThatThrownBy(
                () -> response.body(0).set(ValueLayout.JAVA_BYTE, 0, (byte) 1))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("read-only");
        assertThat(kept.mismatch(value.segment())).isEqualTo(7L);
        // Dropping the cell while the client still reads it keeps the bytes.
        client.call(server.address(), Request.of(DROP, "k".getBytes())).close();
        SharedMemoryStats dropped = server.sharedMemoryStats();
        assertThat(dropped.usedBytes() - dropped.grantBytes()).isEqualTo(1 << 20);
        // The lease holds what the reply held (for a store, the read pins) until it is released,
        // not only until the frame was written.
        assertThat(cells.openLoads.get()).as("the reply's resources, held by the lease").isOne();
      }
      awaitIdle(server);
      Await.until(() -> cells.openLoads.get() == 0, "the reply's resources closed with the lease");
    }
  }

  @Test
  void shouldCopyOnceIntoCallerSegmentsAndReleaseTheLeaseAtOnce(BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    try (Cells cells = new Cells();
        TransportServer server =
            cells.register(TransportServer.builder(config().build(), allocator)).start();
        TransportClient client = new TransportClient(config().build(), allocator);
        NativeBuffer value = random(allocator, 300_000, random);
        NativeBuffer into = allocator.allocate(300_000)) {
      client.call(server.address(), Request.of(STORE, "k".getBytes(), value.segment())).close();
      try (Response response =
          client.call(
              server.address(),
              Request.of(LOAD, "k".getBytes()),
              BodyDestination.into(List.of(into.segment())),
              LONG)) {
        assertThat(response.buffers()).isEmpty();
        assertThat(into.segment().mismatch(value.segment())).isEqualTo(-1L);
        Await.until(() -> server.sharedMemoryStats().leases() == 0, "lease released at once");
      }
      client.call(server.address(), Request.of(DROP, "k".getBytes())).close();
      awaitIdle(server);
    }
  }

  @Test
  void shouldStayOnTheSocketWhenEitherSideHasSharedMemoryOff(BufferAllocator allocator) {
    for (boolean serverOn : new boolean[] {false, true}) {
      TransportConfig serverConfig = config().sharedMemory(serverOn).build();
      TransportConfig clientConfig = config().sharedMemory(!serverOn).build();
      try (TransportServer server =
              TransportServer.builder(serverConfig, allocator).handler(ECHO, ECHO_HANDLER).start();
          TransportClient client = new TransportClient(clientConfig, allocator);
          NativeBuffer body = random(allocator, 200_000, new Random(Seeds.seed()))) {
        try (Response response =
            client.call(server.address(), Request.of(ECHO, new byte[0], body.segment()))) {
          assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
        }
        assertThat(client.sharedMemoryConnections(server.address())).isZero();
        assertThat(client.mappedSharedSegments()).isZero();
        assertThat(server.sharedMemoryStats().usedBytes()).isZero();
        assertThat(server.sharedMemoryStats().segments()).isZero();
      }
    }
  }

  @Test
  void shouldAnswerAPlainHelloExactlyAsWithoutSharedMemory(BufferAllocator allocator)
      throws IOException {
    try (TransportServer server = TransportServer.builder(config().build(), allocator).start();
        RawConnection raw = new RawConnection(server.address())) {
      raw.write(RawConnection.hello(1, null));
      RawConnection.RawReply reply = raw.readReply();
      assertThat(reply.flags()).isEqualTo(FrameDescriptor.FLAG_RESPONSE);
      assertThat(reply.meta()).isEmpty();
      assertThat(server.sharedMemoryStats().segments()).isZero();
    }
  }

  @Test
  void shouldFallBackToTheSocketWhenTheClientCannotMapTheSegment(BufferAllocator allocator) {
    ClientMappings.Mapper refuses =
        (pid, fd, key, size) -> {
          throw new TqException(ErrorCode.CONNECTION_FAILED, "simulated: other user");
        };
    ClientMappings.Mapper wrongKey =
        (pid, fd, key, size) -> SharedSegment.open(pid, fd, new byte[16], size);
    for (ClientMappings.Mapper mapper : List.of(refuses, wrongKey)) {
      try (TransportServer server =
              TransportServer.builder(config().build(), allocator)
                  .handler(ECHO, ECHO_HANDLER)
                  .start();
          TransportClient client = new TransportClient(config().build(), allocator, mapper);
          NativeBuffer body = random(allocator, 200_000, new Random(Seeds.seed()))) {
        try (Response response =
            client.call(server.address(), Request.of(ECHO, new byte[0], body.segment()))) {
          assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
        }
        assertThat(client.sharedMemoryConnections(server.address())).isZero();
        assertThat(server.sharedMemoryStats().attachedConnections()).isZero();
        awaitIdle(server);
      }
    }
  }

  @Test
  void shouldSendOverTheSocketWhenThePoolIsFull(BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    TransportConfig small =
        config().sharedMemorySegmentBytes(1 << 20).sharedMemoryLimitBytes(1 << 20).build();
    try (TransportServer server =
            TransportServer.builder(small, allocator).handler(ECHO, ECHO_HANDLER).start();
        TransportClient client = new TransportClient(small, allocator);
        NativeBuffer big = random(allocator, 3 << 20, random);
        NativeBuffer fits = random(allocator, 100_000, random)) {
      try (Response response =
          client.call(server.address(), Request.of(ECHO, new byte[0], big.segment()))) {
        assertThat(response.body(0).mismatch(big.segment())).isEqualTo(-1L);
      }
      try (Response response =
          client.call(server.address(), Request.of(ECHO, new byte[0], fits.segment()))) {
        assertThat(response.body(0).mismatch(fits.segment())).isEqualTo(-1L);
        assertThat(server.sharedMemoryStats().leases()).isEqualTo(1);
      }
      assertThat(server.sharedMemoryStats().segmentBytes()).isEqualTo(1 << 20);
      awaitIdle(server);
    }
  }

  @Test
  void shouldUnmapWhenTheClientClosesAndNoViewIsLeft(BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, ECHO_HANDLER)
                .start();
        NativeBuffer body = random(allocator, 200_000, random)) {
      TransportClient client = new TransportClient(config().build(), allocator);
      Response response =
          client.call(server.address(), Request.of(ECHO, new byte[0], body.segment()));
      assertThat(client.mappedSharedSegments()).isPositive();
      client.close();
      // The view still reads the server's bytes after its client closed.
      assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
      assertThat(client.mappedSharedSegments()).isPositive();
      response.close();
      assertThat(client.mappedSharedSegments()).isZero();
      awaitEmpty(server);
    }
  }

  @Test
  void shouldUnmapIdleSegmentsTheServerClosed(BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    // A pool of 4 MiB: each new dedicated segment makes the server close the empty ones first.
    TransportConfig server =
        config().sharedMemorySegmentBytes(1 << 20).sharedMemoryLimitBytes(4L << 20).build();
    TransportConfig client = config().connectionsPerPeer(1).build();
    try (TransportServer s =
            TransportServer.builder(server, allocator).handler(ECHO, ECHO_HANDLER).start();
        TransportClient c = new TransportClient(client, allocator)) {
      for (int round = 0; round < 12; round++) {
        // Each size needs a dedicated segment of its own: the client maps a new one every round.
        try (NativeBuffer body = random(allocator, (1 << 20) + round * 100_000L, random);
            Response response =
                c.call(s.address(), Request.of(ECHO, new byte[0], body.segment()))) {
          assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
        }
        // What the server closed is unmapped here too; what it holds (at most 4 MiB) stays.
        assertThat(c.mappedSharedSegments())
            .as("round %d: %s", round, s.sharedMemoryStats())
            .isLessThanOrEqualTo(s.sharedMemoryStats().segments() + 1);
      }
      awaitIdle(s);
    }
  }

  @Test
  void shouldKeepMappingEverySegmentTheServerStillHolds(BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    TransportConfig server = config().sharedMemorySegmentBytes(1 << 20).build();
    // The client's own limit is far below what it maps: it bounds nothing the server holds.
    TransportConfig client =
        config().connectionsPerPeer(1).sharedMemoryLimitBytes(2L << 20).build();
    try (TransportServer s =
            TransportServer.builder(server, allocator).handler(ECHO, ECHO_HANDLER).start();
        TransportClient c = new TransportClient(client, allocator)) {
      int mapped = 0;
      for (int round = 0; round < 8; round++) {
        try (NativeBuffer body = random(allocator, (1 << 20) + round * 100_000L, random);
            Response response =
                c.call(s.address(), Request.of(ECHO, new byte[0], body.segment()))) {
          assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
        }
        // Nothing the server still holds is unmapped (it would be faulted in again on its next
        // use), however far the mappings exceed the client's own limit.
        assertThat(c.mappedSharedSegments()).as("round %d", round).isGreaterThanOrEqualTo(mapped);
        mapped = c.mappedSharedSegments();
      }
      // The server keeps its emptied segments for reuse, and so does the client's mapping: a
      // store node's slabs, say, are mapped once and never faulted in again.
      assertThat(mapped).isGreaterThanOrEqualTo(4);
      awaitIdle(s);
    }
  }

  @Test
  void shouldKeepViewsReadableWhenTheServerGoesAwayAndUnmapThemAfterwards(
      BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    try (TransportClient client = new TransportClient(config().build(), allocator);
        NativeBuffer body = random(allocator, 300_000, random)) {
      TransportServer server =
          TransportServer.builder(config().build(), allocator).handler(ECHO, ECHO_HANDLER).start();
      HostPort address = server.address();
      Response response;
      try (server) {
        response = client.call(address, Request.of(ECHO, new byte[0], body.segment()));
      }
      try (response) {
        // The server freed its lease and segments at close; this side's mapping keeps the bytes.
        assertThat(response.body(0).mismatch(body.segment())).isEqualTo(-1L);
        TqException failed =
            catchTqException(() -> client.call(address, Request.of(ECHO, new byte[0])).close());
        assertThat(failed.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
      }
      Await.until(() -> client.mappedSharedSegments() == 0, "the dead server's segments unmapped");
    }
  }

  private static TqException catchTqException(Runnable call) {
    try {
      call.run();
    } catch (TqException e) {
      return e;
    }
    throw new AssertionError("no TqException");
  }

  @Test
  void shouldAnswerBadSharedMemoryInputWithTypedErrorsAndKeepServing(BufferAllocator allocator)
      throws IOException {
    TransportConfig limited = config().connectionMemoryLimitBytes(1 << 20).build();
    try (TransportServer server =
        TransportServer.builder(limited, allocator).handler(ECHO, ECHO_HANDLER).start()) {
      try (RawAttached unattached = new RawAttached(server.address(), false)) {
        RawConnection.RawReply grant =
            unattached.call(MessageDescriptor.TYPE_SHM_GRANT, SharedMessages.grantRequest(100));
        assertThat(grant.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
        RawConnection.RawReply flagged = unattached.shared(ECHO, new long[] {10}, 1, new byte[0]);
        assertThat(flagged.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
        RawConnection.RawReply release =
            unattached.call(
                MessageDescriptor.TYPE_SHM_RELEASE, SharedMessages.releaseRequest(new long[] {5}));
        assertThat(release.isError()).isFalse();
      }
      try (RawAttached client = new RawAttached(server.address(), true)) {
        assertThat(
                client
                    .call(MessageDescriptor.TYPE_SHM_GRANT, SharedMessages.grantRequest(0))
                    .errorCode())
            .isEqualTo(ErrorCode.INVALID_ARGUMENT.value());
        assertThat(
                client
                    .call(MessageDescriptor.TYPE_SHM_GRANT, SharedMessages.grantRequest(1L << 40))
                    .errorCode())
            .isEqualTo(ErrorCode.INVALID_ARGUMENT.value());
        RawConnection.RawReply unknown = client.shared(ECHO, new long[] {10}, 999, new byte[0]);
        assertThat(unknown.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
        assertThat(unknown.errorMessage()).contains("grant_id=999");

        SharedMessages.Grant small = client.grant(100);
        RawConnection.RawReply overflow =
            client.shared(ECHO, new long[] {100, 100}, small.grantId(), new byte[0]);
        assertThat(overflow.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
        assertThat(overflow.errorMessage()).contains("overflow");
        RawConnection.RawReply reused =
            client.shared(ECHO, new long[] {10}, small.grantId(), new byte[0]);
        assertThat(reused.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());

        SharedMessages.Grant good = client.grant(100);
        SharedSegment segment = client.map(good.segment());
        segment.memory().asSlice(good.offset(), 10).fill((byte) 42);
        RawConnection.RawReply echoed =
            client.shared(ECHO, new long[] {10}, good.grantId(), new byte[] {(byte) 0x90});
        assertThat(echoed.isError()).as(String.valueOf(echoed.errorMessage())).isFalse();
        assertThat(
                client
                    .call(
                        MessageDescriptor.TYPE_SHM_RELEASE,
                        SharedMessages.releaseRequest(new long[] {12345, -1}))
                    .isError())
            .isFalse();
        client.grant(5000); // never used: freed by the close
        // Unused grants count against the connection's memory limit (1 MiB in this test).
        assertThat(
                client
                    .call(MessageDescriptor.TYPE_SHM_GRANT, SharedMessages.grantRequest(2 << 20))
                    .errorCode())
            .isEqualTo(ErrorCode.OUT_OF_MEMORY.value());
        assertThat(client.call(MessageDescriptor.TYPE_PING, new byte[0]).isError()).isFalse();
        assertThat(server.sharedMemoryStats().grants()).isEqualTo(1);
      }
      awaitEmpty(server);
      assertThat(server.openConnections()).isZero();
    }
  }

  @Test
  void shouldReadBodiesAtTheirExplicitOffsetsAndRefuseBadOffsets(BufferAllocator allocator)
      throws IOException {
    AtomicReference<List<byte[]>> received = new AtomicReference<>();
    RequestHandler recording =
        RequestHandler.replying(
            r -> {
              List<byte[]> bodies = new ArrayList<>();
              for (int i = 0; i < r.bodyCount(); i++) {
                bodies.add(r.body(i).toArray(ValueLayout.JAVA_BYTE));
              }
              received.set(bodies);
              return Reply.empty();
            });
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator).handler(ECHO, recording).start();
        RawAttached client = new RawAttached(server.address(), true)) {
      long[] lengths = {100, 100, 10};
      long[] layout = SharedMessages.requestLayout(lengths);
      // docs/PROTOCOL.md's example: same-length bodies back to back, others at the next 64.
      assertThat(layout).containsExactly(0, 100, 256, 266);
      long[] offsets = java.util.Arrays.copyOf(layout, 3);
      SharedMessages.Grant grant = client.grant(4096);
      SharedSegment segment = client.map(grant.segment());
      for (int i = 0; i < 3; i++) {
        segment.memory().asSlice(grant.offset() + offsets[i], lengths[i]).fill((byte) (i + 1));
      }
      RawConnection.RawReply placed =
          client.sharedAt(ECHO, lengths, grant.grantId(), offsets, new byte[0]);
      assertThat(placed.isError()).as(String.valueOf(placed.errorMessage())).isFalse();
      for (int i = 0; i < 3; i++) {
        byte[] expected = new byte[(int) lengths[i]];
        java.util.Arrays.fill(expected, (byte) (i + 1));
        assertThat(received.get().get(i)).as("body " + i).isEqualTo(expected);
      }
      // The unused tail of the 4096-byte grant went back to the pool with the request.
      Await.until(
          () -> server.sharedMemoryStats().usedBytes() == 0, "the request's region released");

      RawConnection.RawReply overlap =
          client.sharedAt(
              ECHO, lengths, client.grant(4096).grantId(), new long[] {0, 50, 256}, new byte[0]);
      assertThat(overlap.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
      assertThat(overlap.errorMessage()).contains("body 1").contains("overlaps");
      SharedMessages.Grant small = client.grant(256);
      RawConnection.RawReply overflow =
          client.sharedAt(ECHO, lengths, small.grantId(), new long[] {0, 100, 250}, new byte[0]);
      assertThat(overflow.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
      assertThat(overflow.errorMessage())
          .contains("body 2")
          .contains("overflows grant_id=" + small.grantId());
      RawConnection.RawReply count =
          client.sharedAt(
              ECHO, lengths, client.grant(4096).grantId(), new long[] {0, 100}, new byte[0]);
      assertThat(count.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
      assertThat(count.errorMessage()).contains("2 offsets");
      assertThat(client.call(MessageDescriptor.TYPE_PING, new byte[0]).isError()).isFalse();
      // Every refused request consumed its grant.
      assertThat(server.sharedMemoryStats().grants()).isZero();
    }
  }

  @Test
  void shouldFreeEveryGrantAndLeaseWhenTheConnectionCloses(BufferAllocator allocator)
      throws IOException {
    Random random = new Random(Seeds.seed());
    try (TransportServer server =
            TransportServer.builder(config().build(), allocator)
                .handler(ECHO, ECHO_HANDLER)
                .start();
        NativeBuffer body = random(allocator, 500_000, random)) {
      TransportClient client = new TransportClient(config().build(), allocator);
      List<Response> held = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        held.add(client.call(server.address(), Request.of(ECHO, new byte[0], body.segment())));
      }
      try (RawAttached raw = new RawAttached(server.address(), true)) {
        raw.grant(1 << 20);
        raw.grant(10);
        Await.until(() -> server.sharedMemoryStats().grants() >= 2, "two grants");
      }
      assertThat(server.sharedMemoryStats().leases()).isEqualTo(3);
      // What is left is at most the client's spare grants: 512 KiB for its 500,000-byte requests on
      // each of its two connections (the raw grants alone held 1 MiB + 128 bytes).
      Await.until(
          () -> server.sharedMemoryStats().grantBytes() <= 1 << 20,
          "raw grants freed by the close");
      // A client that goes away holding views: the server frees the leases with the connection.
      client.close();
      awaitEmpty(server);
      assertThat(client.mappedSharedSegments()).isPositive();
      held.forEach(Response::close);
      assertThat(client.mappedSharedSegments()).isZero();
    }
  }
}
