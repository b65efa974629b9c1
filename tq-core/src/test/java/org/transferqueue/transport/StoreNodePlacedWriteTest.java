package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.codec.MsgpackReader;
import org.transferqueue.codec.MsgpackWriter;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.memory.SharedSegment;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.StoreStatus;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.objectstore.StoreNodeProtocol;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.testing.Await;

/**
 * A store node's WRITE through placed grants, on the wire (docs/PROTOCOL.md sections 4.2 and 9):
 * the bodies land in the engine's slabs, and a write whose bodies never come (placed grant released
 * unused, a closed connection, a mismatched request, a TCP connection lost mid-body) is rolled back
 * at once: the key stays absent and its memory is free.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StoreNodePlacedWriteTest {
  private static final int WRITE = StoreNodeProtocol.WRITE.typeId();
  private static final int SIZE = 4096;

  private final TransportConfig config =
      TransportConfig.builder()
          .connectTimeout(Duration.ofSeconds(5))
          .defaultCallTimeout(Duration.ofSeconds(20))
          .sharedMemoryMinBytes(1)
          .sharedMemorySegmentBytes(1L << 20)
          .shutdownGracePeriod(Duration.ofSeconds(5))
          .build();
  private SharedMemoryPool pool;
  private EmbeddedObjectStore engine;
  private StoreNodeServer server;

  @BeforeEach
  void start(BufferAllocator allocator) {
    pool = StoreNodeServer.newSharedMemoryPool(config, allocator, "node");
    assumeTrue(pool != null, "shared memory needs Linux");
    engine = EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT, pool);
    assertThat(
            engine.setup(
                StoreConfig.builder()
                    .localHostname("node")
                    .globalSegmentSize(1L << 20)
                    .localBufferSize(1L << 20)
                    .build()))
        .isZero();
    server = StoreNodeServer.start(engine, config, allocator, StorageRequests.NOOP, pool);
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    if (engine != null) {
      engine.close();
    }
    if (pool != null) {
      pool.close();
    }
  }

  /** WRITE metadata {@code [upsert, replicaNum, hardPin, softPin, keys]}. */
  private static byte[] write(boolean upsert, String... keys) {
    MsgpackWriter out = new MsgpackWriter(64);
    out.writeArrayHeader(5);
    out.writeBoolean(upsert);
    out.writeLong(1);
    out.writeBoolean(false);
    out.writeBoolean(false);
    out.writeArrayHeader(keys.length);
    for (String key : keys) {
      out.writeString(key, "key");
    }
    return out.toByteArray();
  }

  private static long[] codes(byte[] meta) {
    MsgpackReader in = new MsgpackReader(meta, "WRITE reply");
    assertThat(in.readArrayHeader()).isEqualTo(1);
    long[] codes = new long[in.readArrayHeader()];
    for (int i = 0; i < codes.length; i++) {
      codes[i] = in.readLong();
    }
    return codes;
  }

  private static SharedMessages.Grant grant(RawAttached client, byte[] meta, long... lengths)
      throws IOException {
    RawConnection.RawReply reply =
        client.call(
            MessageDescriptor.TYPE_SHM_GRANT,
            SharedMessages.placedGrantRequest(
                Arrays.stream(lengths).map(l -> (l + 63) & -64).sum(), WRITE, meta, lengths));
    assertThat(reply.isError()).as(String.valueOf(reply.errorMessage())).isFalse();
    return SharedMessages.decodeGrantReply(reply.meta(), "test", lengths.length);
  }

  private static RawConnection.RawReply sendPlaced(
      RawAttached client, long grantId, byte[] meta, long... lengths) throws IOException {
    MsgpackWriter item = new MsgpackWriter(16 + meta.length);
    item.writeArrayHeader(1);
    item.writeLong(grantId);
    item.writeRaw(meta, 0, meta.length);
    client.raw.write(
        RawConnection.frame(
            WRITE,
            org.transferqueue.codec.FrameDescriptor.FLAG_SHARED_BODY,
            client.nextId++,
            lengths,
            item.toByteArray()));
    return client.raw.readReply();
  }

  private void assertAbsentAndFree(String key) {
    assertThat(engine.getSize(key)).isEqualTo(StoreStatus.OBJECT_NOT_FOUND.code());
    assertThat(engine.statistics().usedBytes()).as("the write's memory is free").isZero();
  }

  @Test
  void shouldWriteTheBodiesStraightIntoTheEngine() throws IOException {
    try (RawAttached client = new RawAttached(server.address(), true)) {
      byte[] meta = write(true, "a", "b");
      SharedMessages.Grant grant = grant(client, meta, SIZE, 100);
      assertThat(grant.placed()).isTrue();
      assertThat(engine.statistics().usedBytes())
          .as("reserved in the engine")
          .isEqualTo(SIZE + 128);
      for (int i = 0; i < 2; i++) {
        SharedMessages.Placement at = grant.placements().get(i);
        SharedSegment segment = client.map(at.segment());
        segment.memory().asSlice(at.offset(), i == 0 ? SIZE : 100).fill((byte) (i + 5));
      }
      RawConnection.RawReply reply = sendPlaced(client, grant.grantId(), meta, SIZE, 100);
      assertThat(reply.isError()).as(String.valueOf(reply.errorMessage())).isFalse();
      assertThat(codes(reply.meta())).containsExactly(0, 0);
      try (org.transferqueue.memory.NativeBuffer read = engine.get("a")) {
        byte[] expected = new byte[SIZE];
        Arrays.fill(expected, (byte) 5);
        assertThat(read.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
            .isEqualTo(expected);
      }
      assertThat(server.sharedMemoryStats().requestBytesPlaced()).isEqualTo(SIZE + 100);
      assertThat(server.sharedMemoryStats().requestBytesGranted()).isZero();
    }
  }

  @Test
  void shouldRollTheWriteBackWhenThePlacedGrantIsReleasedUnused() throws IOException {
    try (RawAttached client = new RawAttached(server.address(), true)) {
      SharedMessages.Grant grant = grant(client, write(true, "k"), SIZE);
      assertThat(engine.statistics().usedBytes()).isEqualTo(SIZE);
      client.call(
          MessageDescriptor.TYPE_SHM_RELEASE,
          SharedMessages.releaseRequest(new long[] {grant.grantId()}));
      assertAbsentAndFree("k");
    }
  }

  @Test
  void shouldRollTheWriteBackWhenTheConnectionClosesBeforeTheRequest() throws IOException {
    try (RawAttached client = new RawAttached(server.address(), true)) {
      grant(client, write(true, "k"), SIZE);
      assertThat(engine.statistics().usedBytes()).isEqualTo(SIZE);
    }
    Await.until(
        () -> engine.statistics().usedBytes() == 0, "the closed connection's write rolled back");
    assertAbsentAndFree("k");
  }

  @Test
  void shouldRollTheWriteBackWhenTheRequestDoesNotMatchItsPlacedGrant() throws IOException {
    try (RawAttached client = new RawAttached(server.address(), true)) {
      SharedMessages.Grant grant = grant(client, write(true, "k"), SIZE);
      RawConnection.RawReply reply = sendPlaced(client, grant.grantId(), write(true, "j"), SIZE);
      assertThat(reply.errorCode()).isEqualTo(ErrorCode.PROTOCOL_ERROR.value());
      assertAbsentAndFree("k");
      assertAbsentAndFree("j");
    }
  }

  @Test
  void shouldGrantARegionForABatchWithARefusedKeyAndKeepItsCodes() throws IOException {
    try (RawAttached client = new RawAttached(server.address(), true)) {
      byte[] first = write(false, "k");
      SharedMessages.Grant placed = grant(client, first, SIZE);
      assertThat(codes(sendPlaced(client, placed.grantId(), first, SIZE).meta()))
          .containsExactly(0);
      // A put on a present key is refused: its body would go to a connection buffer, so the grant
      // is an ordinary region and the batch keeps its per-key codes.
      byte[] again = write(false, "k", "m");
      SharedMessages.Grant region = grant(client, again, SIZE, 64);
      assertThat(region.placed()).isFalse();
      assertThat(engine.statistics().usedBytes()).as("the placing was undone").isEqualTo(SIZE);
      RawConnection.RawReply reply = sendPlaced(client, region.grantId(), again, SIZE, 64);
      assertThat(codes(reply.meta())).containsExactly(StoreStatus.OBJECT_ALREADY_EXISTS.code(), 0);
    }
  }

  @Test
  void shouldRollTheWriteBackWhenATcpConnectionIsLostMidBody() throws IOException {
    byte[] frame =
        RawConnection.frame(WRITE, 2, new long[] {SIZE}, write(true, "k"), new byte[SIZE]);
    try (RawConnection raw = new RawConnection(server.address())) {
      raw.write(Arrays.copyOf(frame, frame.length - SIZE / 2));
      Await.until(() -> engine.statistics().usedBytes() == SIZE, "the write placed in the engine");
    }
    Await.until(() -> engine.statistics().usedBytes() == 0, "the unfinished write rolled back");
    assertAbsentAndFree("k");
    assertThat(List.of(server.sharedMemoryStats().grants())).containsExactly(0L);
  }
}
