package org.transferqueue.storage.simple;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Concurrent puts and gets on the same samples: every get must see, for each unit, the cells of
 * exactly one put (all samples of a unit, all fields, every byte of a cell from that put).
 */
@ExtendWith(LeakCheckExtension.class)
class SimpleStorageConcurrencyTest {
  private static final int SAMPLES = 8;
  private static final int ELEMENTS = 64 * 1024;
  private static final int WRITERS = 3;
  private static final int READERS = 3;
  private static final int ROUNDS = 100;

  private static Tensor filled(BufferAllocator allocator, int value) {
    Tensor tensor = Tensor.allocate(allocator, DType.INT32, SAMPLES, ELEMENTS);
    MemorySegment segment = tensor.segment();
    for (long i = 0; i < (long) SAMPLES * ELEMENTS; i++) {
      segment.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, value);
    }
    return tensor;
  }

  @Test
  @Timeout(120)
  void shouldNeverObserveAPartialPut(BufferAllocator allocator) throws Exception {
    long[] gis = new long[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
      gis[i] = i;
    }
    BatchMeta putMeta = BatchMeta.builder().globalIndexes(gis).partitionId("p").build();
    BatchMeta getMeta =
        BatchMeta.builder()
            .globalIndexes(gis)
            .partitionId("p")
            .field("x", FieldSchema.placeholder())
            .field("y", FieldSchema.placeholder())
            .build();
    SimpleStorageSettings config =
        SimpleStorageSettings.builder().unitCount(2).totalStorageSize(OptionalLong.empty()).build();
    ExecutorService threads = Executors.newFixedThreadPool(WRITERS + READERS);
    try (SimpleStorageManager manager =
        new SimpleStorageManager(
            config, allocator, ProductionNotifier.NO_OP, new DataParserRegistry())) {
      try (Batch first =
          Batch.builder()
              .dense("x", filled(allocator, -1))
              .dense("y", filled(allocator, -1))
              .build()) {
        manager.put(first, putMeta);
      }
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> tasks = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        tasks.add(
            threads.submit(
                () -> {
                  // Two batches per writer, reused: values differ per writer and per batch.
                  Batch[] batches = new Batch[2];
                  for (int b = 0; b < 2; b++) {
                    int value = writer * 2 + b;
                    batches[b] =
                        Batch.builder()
                            .dense("x", filled(allocator, value))
                            .dense("y", filled(allocator, value))
                            .build();
                  }
                  try {
                    start.await();
                    for (int round = 0; round < ROUNDS; round++) {
                      manager.put(batches[round % 2], putMeta);
                    }
                  } finally {
                    batches[0].close();
                    batches[1].close();
                  }
                  return null;
                }));
      }
      for (int r = 0; r < READERS; r++) {
        tasks.add(
            threads.submit(
                () -> {
                  start.await();
                  for (int round = 0; round < ROUNDS; round++) {
                    try (Batch read = manager.get(getMeta, allocator)) {
                      checkConsistent(read);
                    }
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> task : tasks) {
        task.get(100, TimeUnit.SECONDS);
      }
      try (Batch last = manager.get(getMeta, allocator)) {
        checkConsistent(last);
      }
    } finally {
      threads.shutdownNow();
    }
  }

  /** For each unit (gi parity), every element of both fields of its samples holds one value. */
  private static void checkConsistent(Batch read) {
    MemorySegment x = ((DenseColumn) read.column("x")).tensor().segment();
    MemorySegment y = ((DenseColumn) read.column("y")).tensor().segment();
    for (int unit = 0; unit < 2; unit++) {
      int expected = x.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, (long) unit * ELEMENTS);
      for (int sample = unit; sample < SAMPLES; sample += 2) {
        for (int e = 0; e < ELEMENTS; e++) {
          long index = (long) sample * ELEMENTS + e;
          int xv = x.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, index);
          int yv = y.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, index);
          if (xv != expected || yv != expected) {
            throw new AssertionError(
                "unit "
                    + unit
                    + " sample "
                    + sample
                    + " element "
                    + e
                    + ": x="
                    + xv
                    + " y="
                    + yv
                    + ", expected "
                    + expected
                    + " like the unit's first cell");
          }
        }
      }
    }
  }
}
