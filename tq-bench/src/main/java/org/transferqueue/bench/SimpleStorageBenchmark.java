package org.transferqueue.bench;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.simple.DataParserRegistry;
import org.transferqueue.storage.simple.SimpleStorageManager;
import org.transferqueue.storage.simple.SimpleStorageSettings;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * Embedded SimpleStorage put and get throughput, against {@code MemorySegment.copy} of the same
 * bytes measured in the same run.
 *
 * <p>Each operation moves {@code rows x elements x 4 x fields} bytes: a put of the whole batch
 * (overwriting the previous put, so cell blocks are reused from the pool), a get of the whole batch
 * into a fresh result (freed at once), or a plain copy of every field's tensor into a pre-allocated
 * segment. GB/s = ops/s x bytes per op; the put and get ratios are their ops/s over the copy's. Run
 * with {@code -prof gc}: {@code gc.alloc.rate.norm} divided by the MB per op is the heap allocated
 * per MB moved. Two storage units, a no-op notifier.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar \
 *     SimpleStorageBenchmark -f 1 -wi 2 -i 3 -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class SimpleStorageBenchmark {

  /** Rows x float32 elements per row x fields. */
  @Param({"256x262144x1", "1024x8192x9"})
  public String layout;

  private RootAllocator allocator;
  private SimpleStorageManager manager;
  private Batch batch;
  private BatchMeta putMeta;
  private BatchMeta getMeta;
  private final List<MemorySegment> sources = new ArrayList<>();
  private final List<NativeBuffer> copyTargets = new ArrayList<>();

  /** Builds the batch, stores it once, and allocates the copy baseline's targets. */
  @Setup(Level.Trial)
  public void setUp() {
    String[] parts = layout.split("x");
    int rows = Integer.parseInt(parts[0]);
    int elements = Integer.parseInt(parts[1]);
    int fields = Integer.parseInt(parts[2]);
    allocator = RootAllocator.builder().name("bench").limitBytes(12L << 30).build();
    manager =
        new SimpleStorageManager(
            SimpleStorageSettings.builder()
                .unitCount(2)
                .totalStorageSize(OptionalLong.empty())
                .build(),
            allocator,
            ProductionNotifier.NO_OP,
            new DataParserRegistry());
    Batch.Builder builder = Batch.builder();
    long[] gis = new long[rows];
    for (int i = 0; i < rows; i++) {
      gis[i] = i;
    }
    BatchMeta.Builder getMetaBuilder = BatchMeta.builder().globalIndexes(gis).partitionId("bench");
    for (int f = 0; f < fields; f++) {
      Tensor tensor = Tensor.allocate(allocator, DType.FLOAT32, rows, elements);
      tensor.segment().fill((byte) (f + 1));
      sources.add(tensor.segment());
      copyTargets.add(allocator.allocate(tensor.nbytes()));
      builder.dense("field_" + f, tensor);
      getMetaBuilder.field("field_" + f, FieldSchema.placeholder());
    }
    batch = builder.build();
    putMeta = BatchMeta.builder().globalIndexes(gis).partitionId("bench").build();
    getMeta = getMetaBuilder.build();
    manager.put(batch, putMeta);
  }

  /** Frees everything. */
  @TearDown(Level.Trial)
  public void tearDown() {
    manager.close();
    batch.close();
    copyTargets.forEach(NativeBuffer::close);
    allocator.close();
  }

  /**
   * Puts the whole batch, replacing the stored one.
   *
   * @return the result, so that it is not optimised away
   */
  @Benchmark
  public Object put() {
    return manager.put(batch, putMeta);
  }

  /**
   * Gets the whole batch into new memory and frees it.
   *
   * @param blackhole consumes the result
   */
  @Benchmark
  public void get(Blackhole blackhole) {
    try (Batch read = manager.get(getMeta, allocator)) {
      blackhole.consume(read);
    }
  }

  /**
   * Copies the same bytes with {@code MemorySegment.copy}: the baseline.
   *
   * @return a target, so that the copy is not optimised away
   */
  @Benchmark
  public Object copyBaseline() {
    for (int f = 0; f < sources.size(); f++) {
      MemorySegment source = sources.get(f);
      MemorySegment.copy(source, 0, copyTargets.get(f).segment(), 0, source.byteSize());
    }
    return copyTargets;
  }
}
