package org.transferqueue.remote.objectstore;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.objectstore.ObjectStoreContract;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.RemoteUnits;
import org.transferqueue.testing.Await;
import org.transferqueue.transport.SharedMemoryStats;
import org.transferqueue.transport.TransportConfig;

/**
 * The object-store contract against two store nodes whose every frame body travels through shared
 * memory (docs/PROTOCOL.md section 4.2).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedMemoryObjectStoreTest extends ObjectStoreContract<RemoteObjectStore> {
  private final List<EmbeddedObjectStore> engines = new ArrayList<>();
  private final List<StoreNodeServer> servers = new ArrayList<>();
  private final List<SharedMemoryPool> pools = new ArrayList<>();

  private static TransportConfig sharedEverything() {
    return RemoteUnits.builder()
        .sharedMemory(true)
        .sharedMemoryMinBytes(1)
        .sharedMemorySegmentBytes(1 << 20)
        .build();
  }

  @Override
  protected void startEngine(BufferAllocator allocator) {
    for (int i = 0; i < 2; i++) {
      SharedMemoryPool pool =
          StoreNodeServer.newSharedMemoryPool(sharedEverything(), allocator, "node-" + i);
      pools.add(pool);
      EmbeddedObjectStore engine =
          EmbeddedObjectStore.create(
              allocator, MasterConfig.builder().asyncThreads(1).build(), pool);
      engines.add(engine);
      assertThat(
              engine.setup(
                  StoreConfig.builder()
                      .localHostname("node-" + i)
                      .globalSegmentSize(4 * SEGMENT)
                      .localBufferSize(SEGMENT)
                      .build()))
          .isZero();
      servers.add(
          StoreNodeServer.start(engine, sharedEverything(), allocator, StorageRequests.NOOP, pool));
    }
  }

  @Override
  protected RemoteObjectStore newStore(BufferAllocator allocator) {
    List<HostPort> nodes = servers.stream().map(StoreNodeServer::address).toList();
    return RemoteObjectStore.connect(nodes, sharedEverything(), allocator);
  }

  @Override
  protected void stopEngine() {
    servers.reversed().forEach(StoreNodeServer::close);
    engines.reversed().forEach(EmbeddedObjectStore::close);
    pools.forEach(SharedMemoryPool::close);
  }

  @Test
  void shouldWriteAndReadThroughSharedMemoryAndFreeThePools() {
    for (long size : new long[] {1, 4096, 100_001, 3 * SEGMENT / 4}) {
      String key = "k" + size;
      assertThat(store.putFrom(key, source(size, 7), PLAIN)).isZero();
      MemorySegment dst = destination(size + 100);
      assertThat(store.getInto(key, dst)).isEqualTo(size);
      assertFilled(dst.asSlice(0, size), 7);
    }
    int attached = 0;
    for (StoreNodeServer server : servers) {
      attached += (int) server.transport().sharedMemoryStats().attachedConnections();
      Await.until(
          () -> server.transport().sharedMemoryStats().idle(),
          "the pool of " + server.address() + " empty: " + server.transport().sharedMemoryStats());
      SharedMemoryStats stats = server.transport().sharedMemoryStats();
      assertThat(stats.leases()).isZero();
    }
    assertThat(attached).isPositive();
  }
}
