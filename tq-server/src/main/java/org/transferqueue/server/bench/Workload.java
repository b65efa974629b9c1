package org.transferqueue.server.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * The data of one size, generated once and put in every iteration: {@code batch} keys {@code
 * test_key_0 ..} and one batch of {@code fields} columns.
 *
 * <p>Simple case: every field is a dense float32 tensor {@code [batch, seqLen]} of seeded random
 * values ({@code field_i}). Complex case: a third regular tensors as above, a third jagged float32
 * columns ({@code nested_field_i}) whose row {@code j} is {@code 0, 1, .., len(j) - 1} with lengths
 * rising from 1 to {@code seqLen} in an arithmetic progression, and the rest object columns of
 * strings of {@code 4 * seqLen} characters ({@code nontensor_field_i}), as upstream's perftest.
 *
 * <p>Tensor memory comes from the given allocator (pooled blocks, touched when they were made and
 * again when filled). The workload owns its batch; close it once. Not thread-safe to close while a
 * put or get is using it.
 */
public final class Workload implements AutoCloseable {
  private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;

  private final BenchSize size;
  private final boolean complex;
  private final List<String> keys;
  private final Batch batch;
  private final long bytes;

  private Workload(BenchSize size, boolean complex, List<String> keys, Batch batch, long bytes) {
    this.size = size;
    this.complex = complex;
    this.keys = keys;
    this.batch = batch;
    this.bytes = bytes;
  }

  /**
   * How the fields of the complex case split into kinds.
   *
   * @param regular dense float32 fields
   * @param jagged jagged float32 fields
   * @param strings string fields
   */
  public record FieldCounts(int regular, int jagged, int strings) {}

  /**
   * The split of {@code fields} fields: all regular in the simple case; in the complex case {@code
   * ceil(fields / 3)} regular, as many jagged as remain up to the same number, and the rest strings
   * (so 4 fields give 2 regular, 2 jagged and no string, as upstream).
   *
   * @param fields the field count, at least 1
   * @param complex whether the complex case is wanted
   * @return the split
   */
  public static FieldCounts fieldCounts(int fields, boolean complex) {
    if (!complex) {
      return new FieldCounts(fields, 0, 0);
    }
    int regular = (fields + 2) / 3;
    int jagged = Math.min(regular, fields - regular);
    return new FieldCounts(regular, jagged, fields - regular - jagged);
  }

  /**
   * The row lengths of a jagged field: row {@code j} has {@code round(1 + j * (seqLen - 1) / (batch
   * - 1))} elements (rounding half to even), so the first row has 1 and the last {@code seqLen}; a
   * batch of one row has length 1.
   *
   * @param batch the row count, at least 1
   * @param seqLen the longest length, at least 1
   * @return the lengths, each in {@code 1..seqLen}, non-decreasing
   */
  public static int[] jaggedLengths(int batch, int seqLen) {
    int[] lengths = new int[batch];
    double step = batch > 1 ? (seqLen - 1) / (double) (batch - 1) : 0;
    for (int j = 0; j < batch; j++) {
      long length = (long) Math.rint(1 + j * step);
      lengths[j] = (int) Math.max(1, Math.min(length, seqLen));
    }
    return lengths;
  }

  /**
   * The bytes one batch of a size will hold, computed without generating it.
   *
   * @param size the size
   * @param complex the complex case
   * @return what {@link #bytes()} of the generated workload will be
   */
  public static long expectedBytes(BenchSize size, boolean complex) {
    FieldCounts counts = fieldCounts(size.fields(), complex);
    long row = 4L * size.seqLen();
    long total = counts.regular() * size.batch() * row;
    total += counts.strings() * size.batch() * row;
    if (counts.jagged() > 0) {
      long elements = 0;
      for (int length : jaggedLengths(size.batch(), size.seqLen())) {
        elements += length;
      }
      total += counts.jagged() * elements * 4L;
    }
    return total;
  }

  /**
   * The value of every row of a string field: {@code 4 * seqLen} ASCII characters, the footprint of
   * one float32 row.
   *
   * @param seqLen the sequence length
   * @return the string
   */
  public static String stringValue(int seqLen) {
    return "x".repeat(Math.multiplyExact(4, seqLen));
  }

  /**
   * Generates the data of a size.
   *
   * @param allocator where tensor memory comes from
   * @param size the size
   * @param complex the complex case (mixed field kinds) instead of the simple one
   * @param seed seeds the random values of regular fields
   * @return the workload; the caller owns it
   */
  public static Workload generate(
      BufferAllocator allocator, BenchSize size, boolean complex, long seed) {
    Objects.requireNonNull(allocator, "allocator");
    FieldCounts counts = fieldCounts(size.fields(), complex);
    List<String> keys = new ArrayList<>(size.batch());
    for (int i = 0; i < size.batch(); i++) {
      keys.add("test_key_" + i);
    }
    Batch.Builder builder = Batch.builder().rowCount(size.batch());
    List<Column> made = new ArrayList<>();
    long bytes = 0;
    try {
      SplittableRandom random = new SplittableRandom(seed);
      for (int i = 0; i < counts.regular(); i++) {
        Column column = regular(allocator, size, random.split());
        made.add(column);
        builder.add("field_" + i, column);
        bytes += ((DenseColumn) column).tensor().nbytes();
      }
      for (int i = 0; i < counts.jagged(); i++) {
        JaggedColumn column = jagged(allocator, size);
        made.add(column);
        builder.add("nested_field_" + i, column);
        bytes += column.values().nbytes();
      }
      String value = stringValue(size.seqLen());
      for (int i = 0; i < counts.strings(); i++) {
        builder.add(
            "nontensor_field_" + i, new ObjectColumn(Collections.nCopies(size.batch(), value)));
        bytes += (long) size.batch() * value.getBytes(StandardCharsets.UTF_8).length;
      }
      return new Workload(size, complex, List.copyOf(keys), builder.build(), bytes);
    } catch (RuntimeException | Error e) {
      for (Column column : made) {
        column.close();
      }
      throw e;
    }
  }

  private static Column regular(
      BufferAllocator allocator, BenchSize size, SplittableRandom random) {
    Tensor tensor = Tensor.allocate(allocator, DType.FLOAT32, size.batch(), size.seqLen());
    MemorySegment segment = tensor.segment();
    long count = tensor.numel();
    for (long i = 0; i < count; i++) {
      segment.setAtIndex(F32, i, (float) random.nextGaussian());
    }
    return new DenseColumn(tensor);
  }

  private static JaggedColumn jagged(BufferAllocator allocator, BenchSize size) {
    int[] lengths = jaggedLengths(size.batch(), size.seqLen());
    long total = 0;
    List<long[]> shapes = new ArrayList<>(lengths.length);
    for (int length : lengths) {
      shapes.add(new long[] {length});
      total += length;
    }
    Tensor values = Tensor.allocate(allocator, DType.FLOAT32, total);
    MemorySegment segment = values.segment();
    long offset = 0;
    for (int length : lengths) {
      for (int k = 0; k < length; k++) {
        segment.setAtIndex(F32, offset++, k);
      }
    }
    return JaggedColumn.fromValues(values, shapes);
  }

  /**
   * The size this data was generated for.
   *
   * @return the size
   */
  public BenchSize size() {
    return size;
  }

  /**
   * Whether this is the complex case.
   *
   * @return true for mixed field kinds
   */
  public boolean complex() {
    return complex;
  }

  /**
   * The keys, {@code test_key_0 .. test_key_(batch - 1)}.
   *
   * @return an immutable list
   */
  public List<String> keys() {
    return keys;
  }

  /**
   * The batch put in every iteration.
   *
   * @return the batch; owned by this workload
   */
  public Batch batch() {
    return batch;
  }

  /**
   * The bytes one put or get moves: tensor bytes plus the UTF-8 bytes of the strings.
   *
   * @return the byte count
   */
  public long bytes() {
    return bytes;
  }

  /**
   * The byte count of each field, in field order, as a memory copy of the same data would move.
   *
   * @return one entry per field
   */
  public long[] fieldBytes() {
    List<String> fields = batch.fields();
    long[] out = new long[fields.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] =
          switch (batch.column(fields.get(i))) {
            case DenseColumn dense -> dense.tensor().nbytes();
            case JaggedColumn jagged -> jagged.values().nbytes();
            case ObjectColumn objects -> {
              long total = 0;
              for (Object value : objects.values()) {
                total += ((String) value).getBytes(StandardCharsets.UTF_8).length;
              }
              yield total;
            }
          };
    }
    return out;
  }

  /**
   * The tensor memory of a field, or null for a string field.
   *
   * @param field the field name
   * @return the segment holding the field's values, owned by this workload
   */
  public MemorySegment tensorSegment(String field) {
    return switch (batch.column(field)) {
      case DenseColumn dense -> dense.tensor().segment();
      case JaggedColumn jagged -> jagged.values().segment();
      case ObjectColumn objects -> null;
    };
  }

  /** Frees the tensor memory. Idempotent. */
  @Override
  public void close() {
    batch.close();
  }
}
