package org.transferqueue.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
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
import org.transferqueue.codec.PackedValueCodec;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.RootAllocator;

/**
 * Object-value codec throughput on long strings: 1024 rows of one 32 KiB ASCII string each, the
 * shape of the string fields of {@code tq bench --complex}.
 *
 * <ul>
 *   <li>{@code packedEncode}: {@link PackedValueCodec#batchEncodeInto} of the rows into native
 *       slots (the key-value put path).
 *   <li>{@code packedDecode}: {@link PackedValueCodec#batchDecodeFrom} of those native slots (the
 *       key-value get path).
 *   <li>{@code columnEncode}: {@link ValueEncoder#encodeColumn} of all rows to one main frame (the
 *       storage-unit transport path).
 *   <li>{@code columnDecode}: {@link ValueDecoder#decodeColumn} of that frame from native memory.
 *   <li>{@code copyBaseline}: {@code MemorySegment.copy} of each row's UTF-8 bytes from the heap
 *       into a native slot, the one copy a codec cannot avoid.
 * </ul>
 *
 * <p>The score is rows per second for every method, so ratios to {@code copyBaseline} compare like
 * with like (MB/s = score x 32768 / 10^6).
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar
 * StringCodecBenchmark -f 1 -wi 2 -i 3}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class StringCodecBenchmark {
  private static final int ROWS = 1024;
  private static final int CHARS = 32 * 1024;

  private RootAllocator allocator;
  private final List<Object> rows = new ArrayList<>();
  private final List<String> names = new ArrayList<>();
  private final List<byte[]> utf8 = new ArrayList<>();
  private NativeBuffer slots;
  private List<MemorySegment> packed;
  private NativeBuffer columnFrame;

  /** Builds the rows, the packed slots and the column frame decoded by the decode methods. */
  @Setup(Level.Trial)
  public void setUp() {
    allocator =
        RootAllocator.builder()
            .name("bench")
            .limitBytes(1L << 30)
            .leakPolicy(LeakPolicy.LOG)
            .build();
    Random random = new Random(42);
    for (int i = 0; i < ROWS; i++) {
      char[] chars = new char[CHARS];
      for (int c = 0; c < CHARS; c++) {
        chars[c] = (char) (' ' + random.nextInt(95));
      }
      String row = new String(chars);
      rows.add(row);
      names.add("row " + i);
      utf8.add(row.getBytes(StandardCharsets.UTF_8));
    }
    slots = allocator.allocate((long) ROWS * (CHARS + 64));
    packed = packedEncodeOnce();
    byte[] column = ValueEncoder.encodeColumn(rows).mainFrame();
    columnFrame = allocator.allocate(column.length);
    MemorySegment.copy(column, 0, columnFrame.segment(), ValueLayout.JAVA_BYTE, 0, column.length);
  }

  /** Frees everything. */
  @TearDown(Level.Trial)
  public void tearDown() {
    slots.close();
    columnFrame.close();
    allocator.close();
  }

  /**
   * Encodes every row into its own packed native slot.
   *
   * @return the packed slots
   */
  @Benchmark
  @OperationsPerInvocation(ROWS)
  public List<MemorySegment> packedEncode() {
    return packedEncodeOnce();
  }

  /**
   * Decodes every packed native slot.
   *
   * @return the rows
   */
  @Benchmark
  @OperationsPerInvocation(ROWS)
  public List<Object> packedDecode() {
    return PackedValueCodec.batchDecodeFrom(packed, names);
  }

  /**
   * Encodes all rows as one column main frame.
   *
   * @return the main frame
   */
  @Benchmark
  @OperationsPerInvocation(ROWS)
  public byte[] columnEncode() {
    return ValueEncoder.encodeColumn(rows).mainFrame();
  }

  /**
   * Decodes the column main frame from native memory.
   *
   * @return the rows
   */
  @Benchmark
  @OperationsPerInvocation(ROWS)
  public List<Object> columnDecode() {
    return ValueDecoder.decodeColumn(columnFrame.segment(), List.of(), "column");
  }

  /**
   * Baseline: copies each row's UTF-8 bytes into its native slot.
   *
   * @param blackhole sink
   */
  @Benchmark
  @OperationsPerInvocation(ROWS)
  public void copyBaseline(Blackhole blackhole) {
    MemorySegment target = slots.segment();
    long offset = 0;
    for (byte[] bytes : utf8) {
      MemorySegment.copy(bytes, 0, target, ValueLayout.JAVA_BYTE, offset, bytes.length);
      offset += bytes.length + 64;
    }
    blackhole.consume(target);
  }

  private List<MemorySegment> packedEncodeOnce() {
    return PackedValueCodec.batchEncodeInto(
        rows,
        sizes -> {
          List<MemorySegment> targets = new ArrayList<>(sizes.length);
          long offset = 0;
          for (long size : sizes) {
            targets.add(slots.segment().asSlice(offset, size));
            offset += size;
          }
          return targets;
        });
  }
}
