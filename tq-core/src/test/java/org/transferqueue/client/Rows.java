package org.transferqueue.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;

/** Literal tensors and columns for the scenarios, and their values read back as arrays. */
final class Rows {
  private Rows() {}

  /** An int64 tensor {@code [rows, width]} from row literals. */
  static Tensor i64(BufferAllocator allocator, long[]... rows) {
    int width = rows.length == 0 ? 0 : rows[0].length;
    long[] flat = new long[rows.length * width];
    for (int r = 0; r < rows.length; r++) {
      System.arraycopy(rows[r], 0, flat, r * width, width);
    }
    return Tensor.ofLongs(allocator, DType.INT64, flat, rows.length, width);
  }

  /** A float32 tensor {@code [rows, width]} from row literals. */
  static Tensor f32(BufferAllocator allocator, float[]... rows) {
    int width = rows.length == 0 ? 0 : rows[0].length;
    float[] flat = new float[rows.length * width];
    for (int r = 0; r < rows.length; r++) {
      System.arraycopy(rows[r], 0, flat, r * width, width);
    }
    return Tensor.ofFloats(allocator, DType.FLOAT32, flat, rows.length, width);
  }

  /** A 1-D int64 tensor. */
  static Tensor vector(BufferAllocator allocator, long... values) {
    return Tensor.ofLongs(allocator, DType.INT64, values, values.length);
  }

  /** A tensor of ones. */
  static Tensor ones(BufferAllocator allocator, DType dtype, long... shape) {
    Tensor tensor = Tensor.zeros(allocator, dtype, shape);
    for (long i = 0; i < tensor.numel(); i++) {
      tensor.setDouble(i, 1.0);
    }
    return tensor;
  }

  /** A float32 jagged column, one row per array. */
  static JaggedColumn jaggedF32(BufferAllocator allocator, float[]... rows) {
    List<long[]> shapes = new ArrayList<>();
    int total = 0;
    for (float[] row : rows) {
      shapes.add(new long[] {row.length});
      total += row.length;
    }
    float[] flat = new float[total];
    int at = 0;
    for (float[] row : rows) {
      System.arraycopy(row, 0, flat, at, row.length);
      at += row.length;
    }
    return JaggedColumn.fromValues(
        Tensor.ofFloats(allocator, DType.FLOAT32, flat, flat.length), shapes);
  }

  /** An int64 jagged column whose rows all have shape {@code rowShape}. */
  static JaggedColumn jaggedI64(BufferAllocator allocator, long[] rowShape, long[]... rows) {
    List<long[]> shapes = new ArrayList<>();
    long[] flat = Arrays.stream(rows).flatMapToLong(Arrays::stream).toArray();
    for (int r = 0; r < rows.length; r++) {
      shapes.add(rowShape.clone());
    }
    return JaggedColumn.fromValues(
        Tensor.ofLongs(allocator, DType.INT64, flat, flat.length), shapes);
  }

  /** A one-field batch over a tensor (rows first); the batch owns the tensor. */
  static Batch batch(String field, Tensor tensor) {
    return Batch.builder().dense(field, tensor).build();
  }

  /** A two-field batch over tensors (rows first); the batch owns the tensors. */
  static Batch batch(String field1, Tensor tensor1, String field2, Tensor tensor2) {
    return Batch.builder().dense(field1, tensor1).dense(field2, tensor2).build();
  }

  /** Every row of a tensor column as longs. */
  static long[][] longRows(Column column) {
    long[][] out = new long[column.rowCount()][];
    for (int r = 0; r < out.length; r++) {
      out[r] = Eq.longs(column, r);
    }
    return out;
  }

  /** Every row of a tensor column as doubles. */
  static double[][] doubleRows(Column column) {
    double[][] out = new double[column.rowCount()][];
    for (int r = 0; r < out.length; r++) {
      out[r] = Eq.doubles(column, r);
    }
    return out;
  }

  /** The shape of every row of a tensor column. */
  static List<List<Long>> rowShapes(Column column) {
    List<List<Long>> out = new ArrayList<>();
    for (int r = 0; r < column.rowCount(); r++) {
      out.add(Arrays.stream(((Tensor) Eq.rowValue(column, r)).shape()).boxed().toList());
    }
    return out;
  }
}
