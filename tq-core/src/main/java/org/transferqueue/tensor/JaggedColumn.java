package org.transferqueue.tensor;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;

/**
 * A column of one tensor per row, all of one dtype, whose shapes may differ (in any dimension, and
 * in rank too). The rows are stored back to back, without padding, in one contiguous values
 * segment, with a shape and an element offset per row:
 *
 * <pre>
 *   values:  | row 0 (numel n0) | row 1 (numel n1) | ... | row B-1 |
 *   offsets:   0                  n0                 n0+n1  ...      total
 * </pre>
 *
 * <p>Takes ownership of its values tensor: {@link #close()} closes it. Row views, {@link #slice}
 * and {@link #toDense} own nothing.
 */
public final class JaggedColumn implements Column {
  private final DType dtype;
  private final Tensor values;
  private final long[][] shapes;
  private final long[] offsets;

  private JaggedColumn(DType dtype, Tensor values, long[][] shapes, long[] offsets) {
    this.dtype = dtype;
    this.values = values;
    this.shapes = shapes;
    this.offsets = offsets;
  }

  /**
   * Copies row tensors into one new allocation.
   *
   * @param allocator where the values memory comes from
   * @param dtype the dtype every row must have
   * @param rows the row tensors (not closed; they may be views or owned, of any rank)
   * @return a column the caller owns and must close
   * @throws TqException with {@code INVALID_ARGUMENT} naming the row whose dtype differs
   */
  public static JaggedColumn copyOf(BufferAllocator allocator, DType dtype, List<Tensor> rows) {
    Objects.requireNonNull(dtype, "dtype");
    long[][] shapes = new long[rows.size()][];
    MemorySegment[] sources = new MemorySegment[shapes.length];
    for (int i = 0; i < shapes.length; i++) {
      Tensor row = Objects.requireNonNull(rows.get(i), "rows[" + i + "]");
      sources[i] = row.segment();
      if (row.dtype() != dtype) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "row " + i + " has dtype " + row.dtype() + ", the jagged column's dtype is " + dtype);
      }
      shapes[i] = row.shape();
    }
    long[] offsets = offsets(shapes);
    Tensor values = Tensor.allocate(allocator, dtype, offsets[shapes.length]);
    MemorySegment target = values.segment();
    for (int i = 0; i < shapes.length; i++) {
      MemorySegment.copy(
          sources[i], 0, target, offsets[i] * dtype.byteSize(), sources[i].byteSize());
    }
    return new JaggedColumn(dtype, values, shapes, offsets);
  }

  /**
   * Creates a column over existing values and per-row shapes.
   *
   * <p>Takes ownership of {@code values} in every outcome: the returned column owns it, and if the
   * shapes are rejected it is closed before the exception is thrown. Callers never close {@code
   * values} themselves after this call.
   *
   * @param values the rows' elements back to back (any shape; only its element count matters);
   *     takes ownership, do not close
   * @param shapes one shape per row
   * @return a column that owns {@code values}
   * @throws TqException with {@code SHAPE_MISMATCH} if the shapes' total element count differs from
   *     the values', {@code INVALID_ARGUMENT} for a bad shape; {@code values} is closed then
   */
  public static JaggedColumn fromValues(Tensor values, List<long[]> shapes) {
    Objects.requireNonNull(values, "values");
    try {
      long[][] copies = new long[shapes.size()][];
      for (int i = 0; i < copies.length; i++) {
        copies[i] = Objects.requireNonNull(shapes.get(i), "shapes[" + i + "]").clone();
      }
      long[] offsets = offsets(copies);
      if (offsets[copies.length] != values.numel()) {
        throw new TqException(
            ErrorCode.SHAPE_MISMATCH,
            copies.length
                + " row shapes hold "
                + offsets[copies.length]
                + " elements, values hold "
                + values.numel());
      }
      return new JaggedColumn(values.dtype(), values, copies, offsets);
    } catch (RuntimeException e) {
      values.close();
      throw e;
    }
  }

  private static long[] offsets(long[][] shapes) {
    if (shapes.length == Integer.MAX_VALUE) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "too many rows: " + shapes.length);
    }
    long[] offsets = new long[shapes.length + 1];
    for (int i = 0; i < shapes.length; i++) {
      offsets[i + 1] = Math.addExact(offsets[i], TensorUtils.numel(shapes[i]));
    }
    return offsets;
  }

  /**
   * The element type of every row.
   *
   * @return the dtype
   */
  public DType dtype() {
    return dtype;
  }

  /**
   * A zero-copy view of one row.
   *
   * @param i the row
   * @return a view of shape {@link #rowShape(int)} that owns nothing
   * @throws IndexOutOfBoundsException for a row outside {@code [0, rowCount())}
   */
  public Tensor row(int i) {
    Objects.checkIndex(i, shapes.length);
    long from = offsets[i] * dtype.byteSize();
    long length = (offsets[i + 1] - offsets[i]) * dtype.byteSize();
    return Tensor.wrap(dtype, values.segment().asSlice(from, length), shapes[i]);
  }

  /**
   * The shape of one row.
   *
   * @param i the row
   * @return a copy of its shape
   * @throws IndexOutOfBoundsException for a row outside {@code [0, rowCount())}
   */
  public long[] rowShape(int i) {
    return shapes[Objects.checkIndex(i, shapes.length)].clone();
  }

  /**
   * The shapes of all rows.
   *
   * @return copies, one per row
   */
  public List<long[]> rowShapes() {
    List<long[]> out = new ArrayList<>(shapes.length);
    for (long[] shape : shapes) {
      out.add(shape.clone());
    }
    return out;
  }

  /**
   * The element offset of each row in {@link #values()}, plus the total at the end.
   *
   * @return {@code rowCount() + 1} offsets, a copy
   */
  public long[] offsets() {
    return offsets.clone();
  }

  /**
   * All rows' elements back to back, as a 1-d view.
   *
   * @return a view that owns nothing
   */
  public Tensor values() {
    return values.reshape(values.numel());
  }

  /**
   * Whether every row has the same shape (true when there are no rows).
   *
   * @return true if {@link #toDense()} succeeds
   */
  public boolean isUniform() {
    return firstShapeMismatch() < 0;
  }

  /**
   * A zero-copy dense view of a uniform column: shape {@code [rows, rowShape...]}, or {@code [0]}
   * when there are no rows.
   *
   * @return a view that owns nothing
   * @throws TqException with {@code SHAPE_MISMATCH} naming the first two differing row shapes
   */
  public Tensor toDense() {
    int mismatch = firstShapeMismatch();
    if (mismatch >= 0) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "jagged column is not uniform: row 0 has shape "
              + Arrays.toString(shapes[0])
              + ", row "
              + mismatch
              + " has shape "
              + Arrays.toString(shapes[mismatch]));
    }
    long[] rowShape = shapes.length == 0 ? new long[0] : shapes[0];
    long[] dense = new long[rowShape.length + 1];
    dense[0] = shapes.length;
    System.arraycopy(rowShape, 0, dense, 1, rowShape.length);
    return values.reshape(dense);
  }

  private int firstShapeMismatch() {
    for (int i = 1; i < shapes.length; i++) {
      if (!Arrays.equals(shapes[0], shapes[i])) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public int rowCount() {
    return shapes.length;
  }

  @Override
  public ColumnKind kind() {
    return ColumnKind.JAGGED;
  }

  @Override
  public JaggedColumn slice(int from, int to) {
    Objects.checkFromToIndex(from, to, shapes.length);
    long[] sliceOffsets = new long[to - from + 1];
    for (int i = 0; i < sliceOffsets.length; i++) {
      sliceOffsets[i] = offsets[from + i] - offsets[from];
    }
    long numel = offsets[to] - offsets[from];
    Tensor view =
        Tensor.wrap(
            dtype,
            values.segment().asSlice(offsets[from] * dtype.byteSize(), numel * dtype.byteSize()),
            numel);
    return new JaggedColumn(dtype, view, Arrays.copyOfRange(shapes, from, to), sliceOffsets);
  }

  @Override
  public JaggedColumn selectRows(BufferAllocator allocator, int[] positions) {
    Columns.checkPositions(positions, shapes.length);
    List<Tensor> rows = new ArrayList<>(positions.length);
    for (int position : positions) {
      rows.add(row(position));
    }
    return copyOf(allocator, dtype, rows);
  }

  @Override
  public boolean contentEquals(Column other) {
    if (!(other instanceof JaggedColumn jagged)
        || jagged.dtype != dtype
        || jagged.shapes.length != shapes.length) {
      return false;
    }
    for (int i = 0; i < shapes.length; i++) {
      if (!Arrays.equals(shapes[i], jagged.shapes[i])) {
        return false;
      }
    }
    return values().contentEquals(jagged.values());
  }

  @Override
  public void close() {
    values.close();
  }

  @Override
  public String toString() {
    return "JaggedColumn[dtype="
        + dtype
        + ", rows="
        + shapes.length
        + ", numel="
        + offsets[shapes.length]
        + "]";
  }
}
