package org.transferqueue.remote.storage;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;

/**
 * The result columns of a get, allocated before the request from the shapes the metadata expects,
 * so that every unit's reply bodies are read straight into their rows: regular fields become a
 * dense tensor {@code [B, shape...]}, nested fields a jagged column with the per-sample shapes.
 *
 * <p>Applies only when every requested field is a tensor field whose shapes are all known ({@link
 * #of} returns null otherwise). After the replies arrived, {@link #matches} checks that the units
 * reported exactly the expected kinds, dtypes and shapes; if not, the caller discards the columns
 * and reads again the general way. Owns the columns until {@link #toBatch} hands them over; {@link
 * #close()} frees them otherwise. Not thread-safe.
 */
final class ExpectedColumns implements AutoCloseable {
  private final List<String> fields;
  private final int rowCount;
  private final ColumnKind[] kinds;
  private final DType[] dtypes;
  private final long[][][] shapes;
  private final MemorySegment[][] rows;
  private final List<Column> columns;
  private boolean handedOver;

  private ExpectedColumns(
      List<String> fields,
      int rowCount,
      ColumnKind[] kinds,
      DType[] dtypes,
      long[][][] shapes,
      MemorySegment[][] rows,
      List<Column> columns) {
    this.fields = fields;
    this.rowCount = rowCount;
    this.kinds = kinds;
    this.dtypes = dtypes;
    this.shapes = shapes;
    this.rows = rows;
    this.columns = columns;
  }

  /**
   * Allocates the result columns expected by {@code meta}.
   *
   * @param meta the request; its field schemas give the shapes
   * @param allocator where the result memory comes from
   * @return the columns, or null when a field's kind or shapes are not known in advance
   */
  static ExpectedColumns of(BatchMeta meta, BufferAllocator allocator) {
    List<String> fields = meta.fieldNames();
    int n = meta.size();
    long[][][] shapes = new long[fields.size()][n][];
    for (int f = 0; f < fields.size(); f++) {
      FieldSchema schema = meta.field(fields.get(f));
      if (schema == null || schema.dtype() == null) {
        return null;
      }
      List<Long> previous = null;
      for (int j = 0; j < n; j++) {
        List<Long> shape = schema.shapeAt(j);
        if (shape == null) {
          return null;
        }
        // Rows of a regular field share one shape list: convert it once, share the read-only array.
        shapes[f][j] = shape == previous ? shapes[f][j - 1] : dims(shape);
        previous = shape;
      }
    }
    ColumnKind[] kinds = new ColumnKind[fields.size()];
    DType[] dtypes = new DType[fields.size()];
    MemorySegment[][] rows = new MemorySegment[fields.size()][n];
    List<Column> columns = new ArrayList<>(fields.size());
    try {
      for (int f = 0; f < fields.size(); f++) {
        FieldSchema schema = meta.field(fields.get(f));
        dtypes[f] = schema.dtype();
        kinds[f] = schema.nested() ? ColumnKind.JAGGED : ColumnKind.DENSE;
        columns.add(allocate(fields.get(f), kinds[f], dtypes[f], shapes[f], rows[f], allocator));
      }
    } catch (RuntimeException e) {
      columns.forEach(Column::close);
      throw e;
    }
    return new ExpectedColumns(fields, n, kinds, dtypes, shapes, rows, columns);
  }

  private static long[] dims(List<Long> shape) {
    long[] out = new long[shape.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = shape.get(i);
    }
    return out;
  }

  private static Column allocate(
      String field,
      ColumnKind kind,
      DType dtype,
      long[][] shapes,
      MemorySegment[] rows,
      BufferAllocator a) {
    int n = shapes.length;
    long[] bytes = new long[n];
    long total = 0;
    for (int j = 0; j < n; j++) {
      // The shapes come from the controller's reply: check them before any arithmetic.
      try {
        long numel = 1;
        for (long d : shapes[j]) {
          if (d < 0) {
            throw new ArithmeticException("negative dimension");
          }
          numel = Math.multiplyExact(numel, d);
        }
        bytes[j] = Math.multiplyExact(numel, (long) dtype.byteSize());
        total = Math.addExact(total, bytes[j]);
      } catch (ArithmeticException e) {
        throw new TqException(
            ErrorCode.CORRUPT_DATA,
            "field '"
                + field
                + "' row "
                + j
                + " shape="
                + Arrays.toString(shapes[j])
                + " of dtype "
                + dtype
                + " has no valid byte size ("
                + e.getMessage()
                + ")");
      }
    }
    Column column;
    MemorySegment memory;
    if (kind == ColumnKind.DENSE) {
      long[] rowShape = n == 0 ? new long[0] : shapes[0];
      long[] shape = new long[rowShape.length + 1];
      shape[0] = n;
      System.arraycopy(rowShape, 0, shape, 1, rowShape.length);
      Tensor tensor = Tensor.allocate(a, dtype, shape);
      column = new DenseColumn(tensor);
      memory = tensor.segment();
    } else {
      // fromValues owns the values from here on, also when it rejects the shapes.
      Tensor values = Tensor.allocate(a, dtype, total / dtype.byteSize());
      column = JaggedColumn.fromValues(values, Arrays.asList(shapes));
      memory = values.segment();
    }
    long offset = 0;
    for (int j = 0; j < n; j++) {
      rows[j] = memory.asSlice(offset, bytes[j]);
      offset += bytes[j];
    }
    return column;
  }

  /**
   * The destination segments of one unit's reply: field-major, the rows at {@code positions}.
   *
   * @param positions the request rows the unit serves
   * @return one segment per expected reply body
   */
  List<MemorySegment> targets(int[] positions) {
    List<MemorySegment> out = new ArrayList<>(fields.size() * positions.length);
    for (int f = 0; f < fields.size(); f++) {
      for (int p : positions) {
        out.add(rows[f][p]);
      }
    }
    return out;
  }

  /**
   * Whether a unit's reply is exactly what was expected for its rows.
   *
   * @param reply the unit's rows
   * @param positions the request rows the unit serves
   * @return true if every field, row, kind, dtype and shape matches
   */
  boolean matches(UnitRows reply, int[] positions) {
    for (int f = 0; f < fields.size(); f++) {
      UnitRows.FieldRows got = reply.field(f);
      if (got.objects() || got.rows().size() != positions.length) {
        return false;
      }
      for (int j = 0; j < positions.length; j++) {
        if (got.kinds()[j] != kinds[f]
            || got.dtypes()[j] != dtypes[f]
            || !Arrays.equals(got.shapes()[j], shapes[f][positions[j]])) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Hands the columns over as a batch.
   *
   * @return the batch, owned by the caller
   */
  Batch toBatch() {
    Batch.Builder builder = Batch.builder().rowCount(rowCount);
    for (int f = 0; f < fields.size(); f++) {
      builder.add(fields.get(f), columns.get(f));
    }
    Batch batch = builder.build();
    handedOver = true;
    return batch;
  }

  @Override
  public void close() {
    if (!handedOver) {
      handedOver = true;
      columns.forEach(Column::close);
    }
  }
}
