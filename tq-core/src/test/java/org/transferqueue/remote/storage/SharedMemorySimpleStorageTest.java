package org.transferqueue.remote.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.remote.RemoteUnits;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerContract;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.testing.Await;
import org.transferqueue.testing.Seeds;
import org.transferqueue.transport.SharedMemoryStats;
import org.transferqueue.transport.TransportConfig;

/**
 * SimpleStorage over two remote units whose every frame body travels through shared memory
 * (docs/PROTOCOL.md section 4.2): the whole storage-manager contract, and the pools back to empty.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedMemorySimpleStorageTest extends StorageManagerContract {
  /**
   * Shared memory for every frame with a body, small segments so that the pools grow and shrink.
   */
  static TransportConfig sharedEverything() {
    return RemoteUnits.builder()
        .sharedMemory(true)
        .sharedMemoryMinBytes(1)
        .sharedMemorySegmentBytes(1 << 20)
        .build();
  }

  @Override
  protected StorageManager create(BufferAllocator allocator, ProductionNotifier notifier) {
    return new RemoteSimpleStorageContractTest.Closing(
        new RemoteUnits(allocator, 2, OptionalLong.empty(), notifier, sharedEverything()));
  }

  @Test
  void shouldMoveTheBytesThroughSharedMemoryAndFreeThePoolsAfterwards(BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    try (RemoteUnits remote =
        new RemoteUnits(allocator, 2, OptionalLong.empty(), update -> {}, sharedEverything())) {
      long[] gis = {0, 1, 2, 3, 4, 5};
      Tensor big = Tensor.allocate(allocator, DType.FLOAT32, 6, 300, 257);
      fill(big.segment(), random);
      Tensor small = Tensor.allocate(allocator, DType.INT64, 6, 3);
      fill(small.segment(), random);
      try (Batch batch =
          Batch.builder().rowCount(6).dense("big", big).dense("small", small).build()) {
        remote.manager.put(batch, meta(List.of(), gis));
        long bigRowBytes = big.nbytes() / 6;
        for (int u = 0; u < remote.servers.size(); u++) {
          SharedMemoryStats stats = remote.servers.get(u).transport().sharedMemoryStats();
          assertThat(stats.attachedConnections()).as(stats.toString()).isPositive();
          // Each unit holds 3 of the 6 rows. The client wrote each field's rows back to back into
          // the granted region, and the unit kept them there as its cells: no copy of its own.
          assertThat(stats.usedBytes() - stats.grantBytes())
              .as("unit " + u + " keeps its rows of 'big' in the pool: " + stats)
              .isGreaterThanOrEqualTo(3 * bigRowBytes);
          assertThat(remote.units.get(u).stats().allocatedBytes())
              .as("the unit accounts the cells it keeps in shared memory")
              .isGreaterThanOrEqualTo(3 * bigRowBytes);
        }
        try (Batch read = remote.manager.get(meta(List.of("big", "small"), gis), allocator)) {
          assertThat(read.column("big").contentEquals(batch.column("big"))).isTrue();
          assertThat(read.column("small").contentEquals(batch.column("small"))).isTrue();
        }
        remote.manager.clear(meta(List.of("big", "small"), gis));
      }
      for (StorageUnitServer server : remote.servers) {
        // Cleared, every lease released: only a spare grant holds pool memory.
        Await.until(
            () -> server.transport().sharedMemoryStats().idle(),
            "the pool of "
                + server.address()
                + " empty: "
                + server.transport().sharedMemoryStats());
      }
    }
  }

  private static BatchMeta meta(List<String> fields, long... gis) {
    BatchMeta.Builder builder = BatchMeta.builder().globalIndexes(gis).partitionId("p");
    fields.forEach(f -> builder.field(f, FieldSchema.placeholder()));
    return builder.build();
  }

  private static void fill(MemorySegment segment, Random random) {
    for (long i = 0; i + 8 <= segment.byteSize(); i += 8) {
      segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
    }
  }
}
