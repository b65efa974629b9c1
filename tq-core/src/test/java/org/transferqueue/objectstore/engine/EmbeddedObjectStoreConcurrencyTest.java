package org.transferqueue.objectstore.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.testing.Seeds;

/**
 * Writers upsert and readers read the same keys from 8 threads: every successful read returns one
 * whole version of the key it asked for, never a mix of versions and never another key's bytes.
 */
@ExtendWith(LeakCheckExtension.class)
class EmbeddedObjectStoreConcurrencyTest {
  private static final int KEYS = 8;
  private static final int WRITERS = 4;
  private static final int READERS = 4;
  private static final int MAX_OPS_PER_THREAD = 20_000;
  private static final long RUN_NANOS = 1_500_000_000L;
  private static final long MAX_SIZE = 384 << 10;

  /** Three sizes, so that upserts hit both the same-size and the new-size path. */
  private static long sizeOf(long version) {
    return (256 + 64 * (version % 3)) << 10;
  }

  /** The 8-byte word every byte-group of one version of one key is filled with. */
  private static long word(int key, long version) {
    return ((long) key << 48) | version;
  }

  @Test
  @Timeout(60)
  void shouldReadWholeVersionsOfTheRightKeyWhenWritersAndReadersRace(BufferAllocator allocator)
      throws Exception {
    long seed = Seeds.seed();
    AtomicLong versions = new AtomicLong();
    Queue<String> failures = new ConcurrentLinkedQueue<>();
    AtomicLong goodReads = new AtomicLong();
    AtomicLong goodWrites = new AtomicLong();
    List<NativeBuffer> buffers = new ArrayList<>();
    ExecutorService threads = Executors.newFixedThreadPool(WRITERS + READERS);
    try (EmbeddedObjectStore store = EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT)) {
      assertThat(store.setup(StoreConfig.builder().globalSegmentSize(32L << 20).build())).isZero();
      for (int i = 0; i < WRITERS + READERS; i++) {
        NativeBuffer buffer = allocator.allocate(2 * MAX_SIZE);
        buffers.add(buffer);
        assertThat(store.registerBuffer(buffer.segment())).isZero();
      }
      for (int key = 0; key < KEYS; key++) {
        assertThat(write(store, buffers.get(0).segment(), key, versions.incrementAndGet()))
            .isZero();
      }
      CountDownLatch start = new CountDownLatch(1);
      long deadline = System.nanoTime() + RUN_NANOS;
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < WRITERS + READERS; t++) {
        MemorySegment own = buffers.get(t).segment();
        Random random = new Random(seed + t);
        boolean writer = t < WRITERS;
        done.add(
            threads.submit(
                () -> {
                  start.await();
                  for (int op = 0; op < MAX_OPS_PER_THREAD && System.nanoTime() < deadline; op++) {
                    int key = random.nextInt(KEYS);
                    if (writer) {
                      int rc = write(store, own, key, versions.incrementAndGet());
                      if (rc == 0) {
                        goodWrites.incrementAndGet();
                      } else if (rc != -601) {
                        failures.add("upsert of key " + key + " returned " + rc);
                      }
                    } else {
                      String problem = readAndCheck(store, own, key, random.nextBoolean());
                      if (problem == null) {
                        goodReads.incrementAndGet();
                      } else if (!problem.isEmpty()) {
                        failures.add(problem);
                      }
                    }
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> future : done) {
        future.get();
      }
      assertThat(failures).as("seed=%d", seed).isEmpty();
      assertThat(goodReads.get()).as("seed=%d", seed).isPositive();
      assertThat(goodWrites.get()).as("seed=%d", seed).isPositive();
      // Every pin was returned: only the committed values occupy memory.
      long committed = 0;
      for (int key = 0; key < KEYS; key++) {
        committed += SlabAllocator.aligned(store.getSize("k" + key));
      }
      assertThat(store.master().usedBytes()).as("seed=%d", seed).isEqualTo(committed);
      assertThat(store.master().unpinnedObjects()).isEqualTo(KEYS);
    } finally {
      threads.shutdown();
      assertThat(threads.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      buffers.forEach(NativeBuffer::close);
    }
  }

  private static int write(EmbeddedObjectStore store, MemorySegment own, int key, long version) {
    MemorySegment source = own.asSlice(0, sizeOf(version));
    source.fill((byte) 0);
    for (long offset = 0; offset < source.byteSize(); offset += 8) {
      source.set(ValueLayout.JAVA_LONG_UNALIGNED, offset, word(key, version));
    }
    return store.upsertFrom("k" + key, source, ReplicateConfig.DEFAULT);
  }

  /** Null for a good read, "" for an acceptable miss, else a description of the violation. */
  private static String readAndCheck(
      EmbeddedObjectStore store, MemorySegment own, int key, boolean batch) {
    MemorySegment destination = own.asSlice(0, MAX_SIZE);
    destination.fill((byte) 0xEE);
    long size =
        batch
            ? store.batchGetInto(List.of("k" + key), List.of(destination))[0]
            : store.getInto("k" + key, destination);
    if (size == -703) {
      return ""; // an in-place upsert was running: not readable, as Mooncake
    }
    if (size < 0) {
      return "read of key " + key + " returned " + size;
    }
    long first = destination.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
    int keyRead = (int) (first >>> 48);
    long version = first & ((1L << 48) - 1);
    if (keyRead != key) {
      return "read of key " + key + " returned bytes of key " + keyRead;
    }
    if (size != sizeOf(version)) {
      return "key " + key + " version " + version + " has size " + size;
    }
    for (long offset = 8; offset < size; offset += 8) {
      long value = destination.get(ValueLayout.JAVA_LONG_UNALIGNED, offset);
      if (value != first) {
        return "key "
            + key
            + " mixes version "
            + version
            + " with word 0x"
            + Long.toHexString(value)
            + " at offset "
            + offset;
      }
    }
    return null;
  }
}
