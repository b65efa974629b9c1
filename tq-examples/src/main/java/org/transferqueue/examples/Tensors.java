package org.transferqueue.examples;

import java.util.Arrays;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;

/** Small helpers the examples share: literal tensors and readable rows. */
final class Tensors {
  private Tensors() {}

  /**
   * An int64 tensor {@code [rows, width]} from row literals.
   *
   * @param allocator where the memory comes from
   * @param rows the rows, all of one width
   * @return a tensor the caller owns
   */
  static Tensor longs(BufferAllocator allocator, long[]... rows) {
    int width = rows[0].length;
    long[] flat = Arrays.stream(rows).flatMapToLong(Arrays::stream).toArray();
    return Tensor.ofLongs(allocator, DType.INT64, flat, rows.length, width);
  }

  /**
   * A tensor of ones.
   *
   * @param allocator where the memory comes from
   * @param dtype the element type
   * @param shape the dimensions
   * @return a tensor the caller owns
   */
  static Tensor ones(BufferAllocator allocator, DType dtype, long... shape) {
    Tensor tensor = Tensor.zeros(allocator, dtype, shape);
    for (long i = 0; i < tensor.numel(); i++) {
      tensor.setDouble(i, 1.0);
    }
    return tensor;
  }

  /**
   * One row of a tensor column as a tensor view.
   *
   * @param column a dense or jagged column
   * @param row the row
   * @return a view of the row
   */
  static Tensor row(Column column, int row) {
    return switch (column) {
      case DenseColumn dense -> dense.row(row);
      case JaggedColumn jagged -> jagged.row(row);
      default -> throw new IllegalArgumentException("not a tensor column: " + column.kind());
    };
  }

  /**
   * Every row of a tensor column as longs.
   *
   * @param column a dense or jagged column
   * @return one array per row
   */
  static long[][] longRows(Column column) {
    long[][] out = new long[column.rowCount()][];
    for (int r = 0; r < out.length; r++) {
      out[r] = row(column, r).toLongArray();
    }
    return out;
  }

  /**
   * Every row of a tensor column as doubles.
   *
   * @param column a dense or jagged column
   * @return one array per row
   */
  static double[][] doubleRows(Column column) {
    double[][] out = new double[column.rowCount()][];
    for (int r = 0; r < out.length; r++) {
      out[r] = row(column, r).toDoubleArray();
    }
    return out;
  }

  /**
   * Rows as text, for printing.
   *
   * @param rows the rows
   * @return for example {@code [[1, 2], [3, 4]]}
   */
  static String text(long[][] rows) {
    return Arrays.deepToString(rows);
  }
}
