package org.transferqueue.bench;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
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
import org.transferqueue.objectstore.KvClientConfig;
import org.transferqueue.objectstore.MooncakeKvClient;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.storage.kv.KvValues;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * Put and get of 256 x 1 MiB float32 tensors through {@link MooncakeKvClient} on the embedded
 * engine, against {@code MemorySegment.copy} of the same 256 MiB in the same run.
 *
 * <ul>
 *   <li>{@code copyBaseline}: one copy of the 256 MiB (the floor of a one-copy store);
 *   <li>{@code put}, {@code get}: pooled registration (the source column registered once with
 *       {@link MooncakeKvClient#registerMemory}, destinations from the registered pool);
 *   <li>{@code putPerCallRegistration}, {@code getPerCallRegistration}: the same transfers with a
 *       client that registers and unregisters the same regions on every call (upstream).
 * </ul>
 *
 * <p>Throughput is {@code 256 MiB / score}; run with {@code -prof gc} for heap bytes per operation
 * ({@code gc.alloc.rate.norm}, divide by 268.4 for bytes per MB moved).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class MooncakeKvClientBenchmark {
  private static final int KEYS = 256;
  private static final long ROW_FLOATS = (1L << 20) / Float.BYTES;

  private RootAllocator allocator;
  private EmbeddedObjectStore store;
  private MooncakeKvClient pooled;
  private MooncakeKvClient perCall;
  private Tensor registeredColumn;
  private Tensor plainColumn;
  private NativeBuffer copyTarget;
  private List<String> keys;
  private List<String> perCallKeys;
  private List<Object> registeredRows;
  private List<Object> plainRows;
  private List<long[]> shapes;
  private List<DType> dtypes;
  private List<MemorySegment> intoRows;

  /** Sets up the store, both clients and the source data, and stores every key once. */
  @Setup(Level.Trial)
  public void setUp() {
    allocator = RootAllocator.builder().limitBytes(4L << 30).build();
    store = EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT);
    store.setup(
        StoreConfig.builder().globalSegmentSize(768L << 20).localBufferSize(1L << 20).build());
    KvClientConfig config = KvClientConfig.defaults();
    pooled = MooncakeKvClient.builder().store(store).allocator(allocator).config(config).build();
    perCall =
        MooncakeKvClient.builder()
            .store(store)
            .allocator(allocator)
            .config(config)
            .pooledRegistration(false)
            .build();
    registeredColumn = Tensor.zeros(allocator, DType.FLOAT32, KEYS, ROW_FLOATS);
    plainColumn = Tensor.zeros(allocator, DType.FLOAT32, KEYS, ROW_FLOATS);
    for (long i = 0; i < registeredColumn.numel(); i += 1024) {
      registeredColumn.setFloat(i, i);
      plainColumn.setFloat(i, -i);
    }
    copyTarget = allocator.allocate(registeredColumn.nbytes());
    pooled.registerMemory(registeredColumn.segment());
    keys = new ArrayList<>();
    perCallKeys = new ArrayList<>();
    registeredRows = new ArrayList<>();
    plainRows = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      keys.add(i + "@bench");
      perCallKeys.add(i + "@bench_per_call");
      registeredRows.add(registeredColumn.row(i));
      plainRows.add(plainColumn.row(i));
    }
    shapes = Collections.nCopies(KEYS, new long[] {ROW_FLOATS});
    long rowBytes = registeredColumn.nbytes() / KEYS;
    intoRows = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      intoRows.add(copyTarget.segment().asSlice(i * rowBytes, rowBytes));
    }
    dtypes = Collections.nCopies(KEYS, DType.FLOAT32);
    pooled.put(keys, registeredRows);
    perCall.put(perCallKeys, plainRows);
  }

  /** Closes everything in reverse order. */
  @TearDown(Level.Trial)
  public void tearDown() {
    perCall.close();
    pooled.close();
    store.close();
    copyTarget.close();
    plainColumn.close();
    registeredColumn.close();
    allocator.close();
  }

  /**
   * The baseline: one copy of the same 256 MiB.
   *
   * @return the target, so the copy is not eliminated
   */
  @Benchmark
  public MemorySegment copyBaseline() {
    MemorySegment.copy(
        registeredColumn.segment(), 0, copyTarget.segment(), 0, registeredColumn.nbytes());
    return copyTarget.segment();
  }

  /**
   * Upserts 256 x 1 MiB from a column registered once.
   *
   * @return the backend metadata
   */
  @Benchmark
  public Object put() {
    return pooled.put(keys, registeredRows);
  }

  /**
   * Reads 256 x 1 MiB into pooled registered destinations.
   *
   * @return the first value's size
   */
  @Benchmark
  public long get() {
    try (KvValues values = pooled.get(keys, shapes, dtypes, null)) {
      return ((Tensor) values.values().get(0)).nbytes();
    }
  }

  /**
   * Reads 256 x 1 MiB straight into one result column, as the key-value storage manager does: the
   * column is registered for the call and each key lands in its row.
   *
   * @return the column, so the reads are not eliminated
   */
  @Benchmark
  public MemorySegment getIntoColumn() {
    MemorySegment column = copyTarget.segment();
    pooled.getInto(keys, shapes, dtypes, null, intoRows, List.of(column));
    return column;
  }

  /**
   * Upserts 256 x 1 MiB registering the 256 source rows on every call.
   *
   * @return the backend metadata
   */
  @Benchmark
  public Object putPerCallRegistration() {
    return perCall.put(perCallKeys, plainRows);
  }

  /**
   * Reads 256 x 1 MiB registering the destination on every call.
   *
   * @return the first value's size
   */
  @Benchmark
  public long getPerCallRegistration() {
    try (KvValues values = perCall.get(perCallKeys, shapes, dtypes, null)) {
      return ((Tensor) values.values().get(0)).nbytes();
    }
  }
}
