package org.transferqueue.bench;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;

/**
 * The embedded object store's batch paths against a plain copy of the same bytes, in one run.
 *
 * <ul>
 *   <li>{@code batchUpsertFrom} / {@code batchGetInto}: 256 objects of 1 MiB per call, from and
 *       into pre-registered memory;
 *   <li>{@code memorySegmentCopy}: the same 256 x 1 MiB copied with {@link MemorySegment#copy}, the
 *       baseline (ratio = store / baseline, goal at least 0.5);
 *   <li>{@code batchGetIntoRegisterPerCall}: registers every destination before the call and
 *       unregisters it after, against {@code batchGetInto} into pre-registered (pooled) regions.
 * </ul>
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar
 * ObjectStoreBenchmark -f 1 -wi 2 -i 3}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class ObjectStoreBenchmark {
  private static final int OBJECTS = 256;
  private static final long OBJECT_BYTES = 1L << 20;
  private static final long BATCH_BYTES = OBJECTS * OBJECT_BYTES;

  private RootAllocator allocator;
  private EmbeddedObjectStore store;
  private NativeBuffer sourceArena;
  private NativeBuffer destinationArena;
  private NativeBuffer unregisteredArena;
  private final List<String> keys = new ArrayList<>();
  private final List<MemorySegment> sources = new ArrayList<>();
  private final List<MemorySegment> destinations = new ArrayList<>();
  private final List<MemorySegment> perCallDestinations = new ArrayList<>();

  /** Allocates the store, the arenas and the objects. */
  @Setup(Level.Trial)
  public void setUp() {
    allocator = RootAllocator.builder().name("bench").limitBytes(4L << 30).build();
    store = EmbeddedObjectStore.create(allocator, MasterConfig.builder().asyncThreads(1).build());
    int rc =
        store.setup(
            StoreConfig.builder()
                .globalSegmentSize(2 * BATCH_BYTES)
                .localBufferSize(OBJECT_BYTES)
                .build());
    check(rc == 0, "setup returned " + rc);
    sourceArena = allocator.allocate(BATCH_BYTES);
    destinationArena = allocator.allocate(BATCH_BYTES);
    unregisteredArena = allocator.allocate(BATCH_BYTES);
    sourceArena.segment().fill((byte) 1);
    check(store.registerBuffer(sourceArena.segment()) == 0, "register sources");
    check(store.registerBuffer(destinationArena.segment()) == 0, "register destinations");
    for (int i = 0; i < OBJECTS; i++) {
      keys.add("bench/field/" + i);
      long offset = i * OBJECT_BYTES;
      sources.add(sourceArena.segment().asSlice(offset, OBJECT_BYTES));
      destinations.add(destinationArena.segment().asSlice(offset, OBJECT_BYTES));
      perCallDestinations.add(unregisteredArena.segment().asSlice(offset, OBJECT_BYTES));
    }
    for (int code : store.batchUpsertFrom(keys, sources, ReplicateConfig.DEFAULT)) {
      check(code == 0, "initial upsert returned " + code);
    }
  }

  /** Frees everything. */
  @TearDown(Level.Trial)
  public void tearDown() {
    store.close();
    sourceArena.close();
    destinationArena.close();
    unregisteredArena.close();
    allocator.close();
  }

  private static void check(boolean condition, String what) {
    if (!condition) {
      throw new IllegalStateException(what);
    }
  }

  /**
   * Baseline: copies 256 x 1 MiB from the sources to the destinations.
   *
   * @return bytes copied
   */
  @Benchmark
  public long memorySegmentCopy() {
    for (int i = 0; i < OBJECTS; i++) {
      MemorySegment.copy(sources.get(i), 0, destinations.get(i), 0, OBJECT_BYTES);
    }
    return BATCH_BYTES;
  }

  /**
   * Upserts 256 x 1 MiB (same size each time: in place).
   *
   * @return the per-key codes
   */
  @Benchmark
  public int[] batchUpsertFrom() {
    return store.batchUpsertFrom(keys, sources, ReplicateConfig.DEFAULT);
  }

  /**
   * Reads 256 x 1 MiB into pre-registered destinations.
   *
   * @return the per-key sizes
   */
  @Benchmark
  public long[] batchGetInto() {
    return store.batchGetInto(keys, destinations);
  }

  /**
   * Registers each of the 256 destinations, reads into them, and unregisters them again.
   *
   * @return the per-key sizes
   */
  @Benchmark
  public long[] batchGetIntoRegisterPerCall() {
    for (MemorySegment destination : perCallDestinations) {
      store.registerBuffer(destination);
    }
    try {
      return store.batchGetInto(keys, perCallDestinations);
    } finally {
      for (MemorySegment destination : perCallDestinations) {
        store.unregisterBuffer(destination);
      }
    }
  }
}
