package org.transferqueue.bench;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.PackedValueCodec;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * Packed-value codec throughput: encode to msgpack, pack into a store buffer and decode again.
 *
 * <ul>
 *   <li>{@code small*}: 10,000 small object values (a map of id, text, score, tags, flag); the
 *       score is values per second. Baseline: {@code MemorySegment.copy} of each value's packed
 *       bytes.
 *   <li>{@code tensors*}: 256 float32 tensors of 1 MiB; the score is tensors (MiB) per second, so
 *       GB/s = score x 1.048576 / 1000. Baseline: {@code MemorySegment.copy} of each tensor into a
 *       reused target. {@code tensorsPackUnpackViews} copies each byte once (pack) and decodes a
 *       view; {@code tensorsPackUnpackCopies} copies a second time into pooled memory on decode.
 * </ul>
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar
 * PackedCodecBenchmark -f 1 -wi 2 -i 3}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class PackedCodecBenchmark {
  private static final int SMALL_VALUES = 10_000;
  private static final int TENSORS = 256;
  private static final int TENSOR_BYTES = 1 << 20;
  private static final String NAME = "bench";

  private RootAllocator allocator;
  private final List<Object> smallValues = new ArrayList<>();
  private long[] smallOffsets;
  private long[] smallSizes;
  private NativeBuffer smallSource;
  private NativeBuffer smallTarget;
  private final List<Tensor> tensors = new ArrayList<>();
  private final List<NativeBuffer> tensorTargets = new ArrayList<>();

  /** Builds the values and pre-allocates every target so the loops only encode and copy. */
  @Setup(Level.Trial)
  public void setUp() {
    allocator =
        RootAllocator.builder()
            .name("bench")
            .limitBytes(4L << 30)
            .leakPolicy(LeakPolicy.LOG)
            .build();
    smallOffsets = new long[SMALL_VALUES];
    smallSizes = new long[SMALL_VALUES];
    long total = 0;
    for (int i = 0; i < SMALL_VALUES; i++) {
      Map<String, Object> value = new LinkedHashMap<>();
      value.put("id", (long) i);
      value.put("text", "sample-" + i + " prompt text");
      value.put("score", i * 0.25);
      value.put("tags", List.of("math", "level-" + (i % 5)));
      value.put("ok", i % 2 == 0);
      smallValues.add(value);
      smallOffsets[i] = total;
      smallSizes[i] = ValueEncoder.encode(value).packedSize();
      total += smallSizes[i];
    }
    smallSource = allocator.allocate(total);
    smallTarget = allocator.allocate(total);
    for (int i = 0; i < SMALL_VALUES; i++) {
      ValueEncoder.encode(smallValues.get(i)).packInto(smallSlot(smallSource, i));
    }
    for (int i = 0; i < TENSORS; i++) {
      Tensor tensor = Tensor.allocate(allocator, DType.FLOAT32, TENSOR_BYTES / 4);
      tensor.segment().fill((byte) i);
      tensors.add(tensor);
      NativeBuffer target = allocator.allocate(ValueEncoder.encode(tensor).packedSize());
      target.segment().fill((byte) 0);
      tensorTargets.add(target);
    }
  }

  /** Frees everything. */
  @TearDown(Level.Trial)
  public void tearDown() {
    tensors.forEach(Tensor::close);
    tensorTargets.forEach(NativeBuffer::close);
    smallSource.close();
    smallTarget.close();
    allocator.close();
  }

  /**
   * Encodes, packs and decodes each small value.
   *
   * @param blackhole sink
   */
  @Benchmark
  @OperationsPerInvocation(SMALL_VALUES)
  public void smallPackUnpack(Blackhole blackhole) {
    for (int i = 0; i < SMALL_VALUES; i++) {
      MemorySegment slot = smallSlot(smallTarget, i);
      ValueEncoder.encode(smallValues.get(i)).packInto(slot);
      blackhole.consume(PackedValueCodec.unpack(slot, NAME));
    }
  }

  /** Baseline: copies each small value's packed bytes. */
  @Benchmark
  @OperationsPerInvocation(SMALL_VALUES)
  public void smallCopyBaseline() {
    MemorySegment source = smallSource.segment();
    MemorySegment target = smallTarget.segment();
    for (int i = 0; i < SMALL_VALUES; i++) {
      MemorySegment.copy(source, smallOffsets[i], target, smallOffsets[i], smallSizes[i]);
    }
  }

  /**
   * Encodes and packs each tensor, then decodes a read-only view of it.
   *
   * @param blackhole sink
   */
  @Benchmark
  @OperationsPerInvocation(TENSORS)
  public void tensorsPackUnpackViews(Blackhole blackhole) {
    for (int i = 0; i < TENSORS; i++) {
      MemorySegment target = tensorTargets.get(i).segment();
      EncodedValue encoded = ValueEncoder.encode(tensors.get(i));
      encoded.packInto(target);
      blackhole.consume(PackedValueCodec.unpack(target, NAME));
    }
  }

  /**
   * Encodes and packs each tensor, then decodes an independent copy from the pool.
   *
   * @param blackhole sink
   */
  @Benchmark
  @OperationsPerInvocation(TENSORS)
  public void tensorsPackUnpackCopies(Blackhole blackhole) {
    for (int i = 0; i < TENSORS; i++) {
      MemorySegment target = tensorTargets.get(i).segment();
      ValueEncoder.encode(tensors.get(i)).packInto(target);
      Object copy = PackedValueCodec.unpackCopying(target, NAME, allocator);
      blackhole.consume(copy);
      ValueDecoder.closeTensors(copy);
    }
  }

  /** Baseline: copies each tensor's bytes into its target. */
  @Benchmark
  @OperationsPerInvocation(TENSORS)
  public void tensorsCopyBaseline() {
    for (int i = 0; i < TENSORS; i++) {
      MemorySegment.copy(
          tensors.get(i).segment(), 0, tensorTargets.get(i).segment(), 0, TENSOR_BYTES);
    }
  }

  private MemorySegment smallSlot(NativeBuffer buffer, int i) {
    return buffer.segment().asSlice(smallOffsets[i], smallSizes[i]);
  }
}
