package org.transferqueue.storage.kv;

import java.lang.foreign.MemorySegment;
import java.util.AbstractList;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;

/**
 * The cell values of one put over its columns, field-major: value {@code f * rows + r} is row
 * {@code r} of column {@code f}. As a list it behaves like the values of {@link KvClient#put(List,
 * List, List)}: a tensor cell is a row view ({@link DenseColumn#row}, {@link JaggedColumn#row}),
 * made on each {@link #get}, an object cell is the column's value.
 *
 * <p>A client that only needs the bytes of a tensor cell reads them with {@link #tensorBytes(int)}
 * and {@link #kind(int)}, which build no tensor view: a put of many rows then allocates one segment
 * slice per tensor cell instead of a tensor, its shape and its bookkeeping.
 *
 * <p>A view over the caller's columns, which must stay open while it is used; it owns nothing.
 * Immutable and thread-safe as long as the columns are not closed.
 */
public final class KvCellValues extends AbstractList<Object> implements RandomAccess {
  private final Column[] columns;
  private final int rows;
  private final MemorySegment[] data;
  private final long[] denseRowBytes;
  private final long[][] jaggedByteOffsets;

  /**
   * Creates the cells of {@code columns}, each with {@code rows} rows.
   *
   * @param columns the columns in key order (fields in code-point order); the caller keeps them
   * @param rows the row count of every column
   * @throws IllegalArgumentException when a column has a different row count
   */
  public KvCellValues(List<? extends Column> columns, int rows) {
    this.columns = columns.toArray(Column[]::new);
    this.rows = rows;
    this.data = new MemorySegment[this.columns.length];
    this.denseRowBytes = new long[this.columns.length];
    this.jaggedByteOffsets = new long[this.columns.length][];
    for (int f = 0; f < this.columns.length; f++) {
      Column column = Objects.requireNonNull(this.columns[f], "column");
      if (column.rowCount() != rows) {
        throw new IllegalArgumentException(
            "column " + f + " has " + column.rowCount() + " rows, expected " + rows);
      }
      switch (column) {
        case DenseColumn dense -> {
          data[f] = dense.tensor().segment();
          denseRowBytes[f] = rows == 0 ? 0 : dense.tensor().nbytes() / rows;
        }
        case JaggedColumn jagged -> {
          data[f] = jagged.values().segment();
          long[] offsets = jagged.offsets();
          long elementBytes = jagged.dtype().byteSize();
          for (int r = 0; r < offsets.length; r++) {
            offsets[r] *= elementBytes;
          }
          jaggedByteOffsets[f] = offsets;
        }
        case ObjectColumn objects -> {}
      }
    }
  }

  /**
   * How cell {@code i} is stored: {@link KvCellKind#OBJECT} for an object column, else {@link
   * KvCellKind#TENSOR}.
   *
   * @param i the cell
   * @return its kind
   */
  public KvCellKind kind(int i) {
    return columns[Objects.checkIndex(i, size()) / rows] instanceof ObjectColumn
        ? KvCellKind.OBJECT
        : KvCellKind.TENSOR;
  }

  /**
   * The kinds of all cells, as a view.
   *
   * @return one kind per cell
   */
  public List<KvCellKind> kinds() {
    return new Kinds();
  }

  /**
   * The bytes of tensor cell {@code i}: a slice of its column's memory.
   *
   * @param i a tensor cell
   * @return a view that owns nothing
   * @throws IllegalArgumentException when cell {@code i} is an object cell
   */
  public MemorySegment tensorBytes(int i) {
    int f = Objects.checkIndex(i, size()) / rows;
    int r = i - f * rows;
    if (jaggedByteOffsets[f] != null) {
      long[] offsets = jaggedByteOffsets[f];
      return data[f].asSlice(offsets[r], offsets[r + 1] - offsets[r]);
    }
    if (data[f] == null) {
      throw new IllegalArgumentException("cell " + i + " is an object cell");
    }
    return data[f].asSlice(r * denseRowBytes[f], denseRowBytes[f]);
  }

  @Override
  public Object get(int i) {
    int f = Objects.checkIndex(i, size()) / rows;
    int r = i - f * rows;
    return switch (columns[f]) {
      case DenseColumn dense -> dense.row(r);
      case JaggedColumn jagged -> jagged.row(r);
      case ObjectColumn objects -> objects.get(r);
    };
  }

  @Override
  public int size() {
    return columns.length * rows;
  }

  private final class Kinds extends AbstractList<KvCellKind> implements RandomAccess {
    @Override
    public KvCellKind get(int i) {
      return kind(i);
    }

    @Override
    public int size() {
      return KvCellValues.this.size();
    }
  }
}
