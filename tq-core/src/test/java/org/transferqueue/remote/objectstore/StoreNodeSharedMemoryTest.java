package org.transferqueue.remote.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.RemoteUnits;
import org.transferqueue.testing.Await;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.Response;
import org.transferqueue.transport.SharedMemoryStats;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * A store node whose engine keeps its slabs in the node's shared-memory pool (docs/PROTOCOL.md
 * section 4.2): every object lies in memory a same-host client maps, a READ is lent in place (no
 * copy on the node) and pins the objects it read until the client releases the lease or its
 * connection closes, whatever happens to the keys meanwhile.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StoreNodeSharedMemoryTest {
  private static final long GLOBAL = 1L << 20;
  private static final int OBJECT = 64 << 10;

  private final TransportConfig config = RemoteUnits.sharedMemoryConfig();
  private BufferAllocator allocator;
  private SharedMemoryPool pool;
  private EmbeddedObjectStore engine;
  private StoreNodeServer server;
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeEach
  void start(BufferAllocator allocator) {
    this.allocator = allocator;
    pool = StoreNodeServer.newSharedMemoryPool(config, allocator, "node");
    assumeTrue(pool != null, "shared memory needs Linux");
    // No lease protection: eviction and plain removal may take a key the moment it was read.
    engine =
        EmbeddedObjectStore.create(
            allocator,
            MasterConfig.builder().asyncThreads(1).leaseTtl(Duration.ofNanos(1)).build(),
            pool);
    assertThat(
            engine.setup(
                StoreConfig.builder()
                    .localHostname("node")
                    .globalSegmentSize(GLOBAL)
                    .localBufferSize(GLOBAL)
                    .build()))
        .isZero();
    server = StoreNodeServer.start(engine, config, allocator, StorageRequests.NOOP, pool);
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : toClose.reversed()) {
      c.close();
    }
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

  @Test
  void shouldKeepEverySlabInTheServersSharedMemory() {
    assertThat(engine.sharedSlabBytes()).isEqualTo(GLOBAL);
    SharedMemoryStats stats = server.sharedMemoryStats();
    assertThat(stats.storageBytes()).isGreaterThanOrEqualTo(GLOBAL);
    assertThat(stats.usedBytes()).as("slabs are not transfer regions").isZero();
  }

  @Test
  void shouldLendAReadInPlaceAndKeepItsBytesWhileTheKeyIsOverwrittenRemovedAndEvicted() {
    TransportClient client = open();
    write(client, "k", OBJECT, (byte) 1);
    assertThat(server.sharedMemoryStats().requestBytesPlaced())
        .as("the put went straight into the engine")
        .isEqualTo(OBJECT);
    assertThat(server.sharedMemoryStats().requestBytesGranted()).isZero();
    try (Response leased = read(client, "k", OBJECT)) {
      SharedMemoryStats lent = server.sharedMemoryStats();
      assertThat(lent.leases()).isEqualTo(1);
      assertThat(lent.replyBytesLent()).isEqualTo(OBJECT);
      assertThat(lent.replyBytesCopied()).isZero();
      MemorySegment view = leased.body(0);
      assertFilled(view, (byte) 1);

      // Overwritten: the upsert must not write into the leased bytes.
      write(client, "k", OBJECT, (byte) 2);
      try (Response fresh = read(client, "k", OBJECT)) {
        assertFilled(fresh.body(0), (byte) 2);
      }
      assertFilled(view, (byte) 1);
      // Removed, then the store filled several times over: evictions reuse every free byte.
      assertThat(engine.remove("k", true)).isZero();
      for (int i = 0; i < 4 * GLOBAL / OBJECT; i++) {
        write(client, "filler-" + i, OBJECT, (byte) (10 + i));
      }
      assertThat(engine.statistics().evictedObjects()).isPositive();
      assertFilled(view, (byte) 1);
      assertThat(engine.removeAll(true)).isPositive();
      assertThat(engine.statistics().usedBytes())
          .as("the leased object's memory stays reserved")
          .isEqualTo(OBJECT);
    }
    Await.until(
        () -> engine.statistics().usedBytes() == 0,
        "the lease's release frees the object: " + engine.statistics());
    Await.until(() -> server.sharedMemoryStats().leases() == 0, "no lease left");
  }

  @Test
  void shouldFreeTheObjectsALeaseHoldsWhenTheConnectionCloses() {
    TransportClient client = open();
    write(client, "k", OBJECT, (byte) 3);
    Response leased = read(client, "k", OBJECT);
    assertThat(server.sharedMemoryStats().leases()).isEqualTo(1);
    assertThat(engine.removeAll(true)).isEqualTo(1);
    assertThat(engine.statistics().usedBytes()).isEqualTo(OBJECT);
    // The client goes away without releasing (its views stay readable until it unmaps them).
    assertFilled(leased.body(0), (byte) 3);
    leased.close();
    toClose.remove(client);
    client.close();
    Await.until(
        () -> engine.statistics().usedBytes() == 0 && server.sharedMemoryStats().leases() == 0,
        "the closed connection's lease gone: " + server.sharedMemoryStats());
  }

  private TransportClient open() {
    TransportClient client = new TransportClient(config, allocator);
    toClose.add(client);
    return client;
  }

  private void write(TransportClient client, String key, int size, byte fill) {
    try (NativeBuffer source = allocator.allocate(size)) {
      source.segment().fill(fill);
      byte[] meta =
          new StoreNodeProtocol.Write(true, ReplicateConfig.DEFAULT, List.of(key)).encode();
      Request request =
          new Request(StoreNodeProtocol.WRITE.typeId(), meta, List.of(source.segment()), true);
      try (Response reply = client.call(server.address(), request)) {
        assertThat(StoreNodeProtocol.decodeCodes(reply.metadata(), "WRITE reply", 1))
            .containsExactly(0);
      }
    }
  }

  /** A READ whose reply bodies are views of the node's shared memory (a lease until closed). */
  private Response read(TransportClient client, String key, long size) {
    byte[] meta = new StoreNodeProtocol.Read(List.of(key), new long[] {size}).encode();
    Response reply =
        client.call(server.address(), Request.of(StoreNodeProtocol.READ.typeId(), meta));
    assertThat(StoreNodeProtocol.decodeResults(reply, 1)).containsExactly(size);
    return reply;
  }

  private static void assertFilled(MemorySegment segment, byte value) {
    MemorySegment expected = MemorySegment.ofArray(new byte[(int) segment.byteSize()]);
    expected.fill(value);
    assertThat(segment.mismatch(expected))
        .as("first byte that differs from %d", value)
        .isEqualTo(-1);
  }
}
