package org.transferqueue.storage.simple;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/** Builders and readers of small columns for storage tests. */
final class Cells {
  private Cells() {}

  /** A dense float32 column of equally long rows. */
  static DenseColumn dense(BufferAllocator allocator, float[]... rows) {
    int width = rows.length == 0 ? 0 : rows[0].length;
    float[] flat = new float[rows.length * width];
    for (int i = 0; i < rows.length; i++) {
      System.arraycopy(rows[i], 0, flat, i * width, width);
    }
    return new DenseColumn(Tensor.ofFloats(allocator, DType.FLOAT32, flat, rows.length, width));
  }

  /** A dense int64 column of equally long rows. */
  static DenseColumn denseLongs(BufferAllocator allocator, long[]... rows) {
    int width = rows.length == 0 ? 0 : rows[0].length;
    long[] flat = new long[rows.length * width];
    for (int i = 0; i < rows.length; i++) {
      System.arraycopy(rows[i], 0, flat, i * width, width);
    }
    return new DenseColumn(Tensor.ofLongs(allocator, DType.INT64, flat, rows.length, width));
  }

  /** A jagged float32 column of 1-d rows. */
  static JaggedColumn jagged(BufferAllocator allocator, float[]... rows) {
    List<Tensor> tensors = new ArrayList<>();
    try {
      for (float[] row : rows) {
        tensors.add(Tensor.ofFloats(allocator, DType.FLOAT32, row, row.length));
      }
      return JaggedColumn.copyOf(allocator, DType.FLOAT32, tensors);
    } finally {
      tensors.forEach(Tensor::close);
    }
  }

  /** An object column. */
  static ObjectColumn objects(Object... values) {
    return new ObjectColumn(Arrays.asList(values));
  }

  /** Row {@code i} of a dense or jagged column as floats. */
  static float[] row(Column column, int i) {
    return switch (column) {
      case DenseColumn dense -> dense.row(i).toFloatArray();
      case JaggedColumn jagged -> jagged.row(i).toFloatArray();
      case ObjectColumn objects -> throw new AssertionError("object column: " + objects);
    };
  }

  /** Row {@code i} of a dense or jagged column as longs. */
  static long[] longRow(Column column, int i) {
    return switch (column) {
      case DenseColumn dense -> dense.row(i).toLongArray();
      case JaggedColumn jagged -> jagged.row(i).toLongArray();
      case ObjectColumn objects -> throw new AssertionError("object column: " + objects);
    };
  }
}
