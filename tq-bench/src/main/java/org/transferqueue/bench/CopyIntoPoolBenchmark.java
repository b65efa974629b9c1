package org.transferqueue.bench;

import java.lang.foreign.Arena;
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
import org.openjdk.jmh.infra.Blackhole;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * Copies 400 tensors of 1 MiB each (400 MiB per operation) into destination memory obtained three
 * ways:
 *
 * <ul>
 *   <li>{@code pooled}: {@link Tensor#copyOf} from a {@link RootAllocator} whose pre-touched blocks
 *       are reused from one operation to the next (how the product copies);
 *   <li>{@code fresh}: a new confined arena per operation, allocating a new segment per tensor and
 *       freeing them all at the end (the baseline the pool replaces; allowed here only);
 *   <li>{@code copyOnly}: the same copies into destinations held for the whole run, with no
 *       allocation at all (the ceiling).
 * </ul>
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar
 * CopyIntoPoolBenchmark -f 1 -wi 2 -i 3}. Bandwidth = 400 MiB / (ms per op).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class CopyIntoPoolBenchmark {
  private static final int TENSORS = 400;
  private static final long TENSOR_BYTES = 1L << 20;

  private RootAllocator allocator;
  private final List<Tensor> sources = new ArrayList<>(TENSORS);
  private final List<Tensor> heldTargets = new ArrayList<>(TENSORS);

  /** Creates the sources, pre-touches the pool and holds the copy-only destinations. */
  @Setup(Level.Trial)
  public void setUp() {
    allocator = RootAllocator.builder().name("bench").build();
    allocator.preallocate(TENSOR_BYTES, 3 * TENSORS);
    long elements = TENSOR_BYTES / Float.BYTES;
    for (int i = 0; i < TENSORS; i++) {
      Tensor source = Tensor.allocate(allocator, DType.FLOAT32, elements);
      source.segment().fill((byte) i);
      sources.add(source);
      heldTargets.add(Tensor.allocate(allocator, DType.FLOAT32, elements));
    }
  }

  /** Frees everything. */
  @TearDown(Level.Trial)
  public void tearDown() {
    sources.forEach(Tensor::close);
    heldTargets.forEach(Tensor::close);
    allocator.close();
  }

  /**
   * Copies into pooled blocks and returns them to the pool.
   *
   * @param blackhole consumes the copies
   */
  @Benchmark
  public void pooled(Blackhole blackhole) {
    List<Tensor> copies = new ArrayList<>(TENSORS);
    for (Tensor source : sources) {
      copies.add(Tensor.copyOf(allocator, source));
    }
    blackhole.consume(copies);
    copies.forEach(Tensor::close);
  }

  /**
   * Copies into segments freshly allocated from a new arena.
   *
   * @param blackhole consumes the copies
   */
  @Benchmark
  public void fresh(Blackhole blackhole) {
    try (Arena arena = Arena.ofConfined()) {
      for (Tensor source : sources) {
        MemorySegment target = arena.allocate(TENSOR_BYTES, 64);
        MemorySegment.copy(source.segment(), 0, target, 0, TENSOR_BYTES);
        blackhole.consume(target);
      }
    }
  }

  /**
   * Copies into destinations held for the whole run.
   *
   * @param blackhole consumes the copies
   */
  @Benchmark
  public void copyOnly(Blackhole blackhole) {
    for (int i = 0; i < TENSORS; i++) {
      MemorySegment target = heldTargets.get(i).segment();
      MemorySegment.copy(sources.get(i).segment(), 0, target, 0, TENSOR_BYTES);
      blackhole.consume(target);
    }
  }
}
