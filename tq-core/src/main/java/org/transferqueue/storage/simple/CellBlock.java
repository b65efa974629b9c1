package org.transferqueue.storage.simple;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * The cells of one field written by one put to one storage unit: the selected rows of a column,
 * copied once into a single buffer from the unit's allocator.
 *
 * <pre>
 *  DENSE   buffer = row 0 | row 1 | ... | row k-1      every row rowBytes long, one shared row shape
 *  JAGGED  buffer = row 0 | row 1 | ... | row k-1      row j at offsets[j], its own shape
 *  OBJECT  no buffer; values[j] is a frozen deep copy (see ObjectCells)
 * </pre>
 *
 * <p>A block is written completely before it is published to the unit's table and never changes
 * afterwards, so a reader sees either all of a put's bytes or none of them. Life cycle: the unit's
 * table holds one reference while any of the block's rows is still the current cell of its sample
 * ({@link #dropRow()} and {@link #reviveRow()} count them, under the unit's write lock); readers
 * and pending undo records hold further references with {@link #retain()} / {@link #release()}. The
 * memory is freed when the last reference goes.
 *
 * <p>Memory trade-off: a block is freed only when all its rows are overwritten or cleared, so one
 * surviving row keeps the whole block of its put alive; {@link StorageUnitStats} reports both.
 */
final class CellBlock {
  /** The column kind a block was written from; reads return the same kind. */
  enum Kind {
    DENSE,
    JAGGED,
    OBJECT
  }

  private final Kind kind;
  private final DType dtype;
  private final NativeBuffer buffer;
  private final long[] denseRowShape;
  private final long denseRowBytes;
  private final long[] offsets;
  private final long[][] rowShapes;
  private final Object[] values;
  private final List<Tensor> ownedTensors;
  private final AtomicInteger refs = new AtomicInteger(1);

  /** Rows that are still the current cell of their sample. Guarded by the unit's write lock. */
  private int liveRows;

  private CellBlock(
      Kind kind,
      DType dtype,
      NativeBuffer buffer,
      long[] denseRowShape,
      long denseRowBytes,
      long[] offsets,
      long[][] rowShapes,
      Object[] values,
      List<Tensor> ownedTensors,
      int rowCount) {
    this.kind = kind;
    this.dtype = dtype;
    this.buffer = buffer;
    this.denseRowShape = denseRowShape;
    this.denseRowBytes = denseRowBytes;
    this.offsets = offsets;
    this.rowShapes = rowShapes;
    this.values = values;
    this.ownedTensors = ownedTensors;
    this.liveRows = rowCount;
  }

  private static CellBlock dense(
      DType dtype, NativeBuffer buffer, long[] rowShape, long rowBytes, int rowCount) {
    return new CellBlock(
        Kind.DENSE, dtype, buffer, rowShape, rowBytes, null, null, null, null, rowCount);
  }

  private static CellBlock jagged(
      DType dtype, NativeBuffer buffer, long[] offsets, long[][] rowShapes, int rowCount) {
    return new CellBlock(
        Kind.JAGGED, dtype, buffer, null, 0, offsets, rowShapes, null, null, rowCount);
  }

  /**
   * Copies the rows at {@code positions} of a column into a new block of the same kind.
   *
   * @param allocator the unit's allocator
   * @param field the field name, for error messages
   * @param column the caller's column (only read)
   * @param positions ascending row numbers of {@code column}
   * @return a block the caller owns (one reference)
   * @throws TqException with {@code OUT_OF_MEMORY} when the unit's allocator is full, {@code
   *     INVALID_ARGUMENT} for an unsupported object value
   */
  static CellBlock copyOf(BufferAllocator allocator, String field, Column column, int[] positions) {
    return switch (column) {
      case DenseColumn dense -> copyDense(allocator, dense.tensor(), positions);
      case JaggedColumn jagged -> copyJagged(allocator, jagged, positions);
      case ObjectColumn objects -> freezeObjects(allocator, objects.values(), positions, field);
    };
  }

  /**
   * Copies rows of a dense column {@code [B, ...]}; runs of consecutive positions are copied at
   * once.
   *
   * @param allocator the unit's allocator
   * @param column the caller's tensor (only read)
   * @param positions ascending row numbers of {@code column}
   * @return a block the caller owns (one reference)
   */
  static CellBlock copyDense(BufferAllocator allocator, Tensor column, int[] positions) {
    long[] shape = column.shape();
    long rows = shape[0];
    long[] rowShape = Arrays.copyOfRange(shape, 1, shape.length);
    long rowBytes = rows == 0 ? 0 : column.nbytes() / rows;
    MemorySegment source = column.segment();
    NativeBuffer buffer = allocator.allocate(rowBytes * positions.length);
    MemorySegment target = buffer.segment();
    int j = 0;
    while (j < positions.length) {
      int run = 1;
      while (j + run < positions.length && positions[j + run] == positions[j] + run) {
        run++;
      }
      MemorySegment.copy(source, positions[j] * rowBytes, target, j * rowBytes, run * rowBytes);
      j += run;
    }
    return dense(column.dtype(), buffer, rowShape, rowBytes, positions.length);
  }

  /**
   * Copies rows of a jagged column; runs of consecutive positions are copied at once.
   *
   * @param allocator the unit's allocator
   * @param column the caller's column (only read)
   * @param positions ascending row numbers of {@code column}
   * @return a block the caller owns (one reference)
   */
  static CellBlock copyJagged(BufferAllocator allocator, JaggedColumn column, int[] positions) {
    long elementBytes = column.dtype().byteSize();
    long[] sourceOffsets = column.offsets();
    long[] offsets = new long[positions.length + 1];
    long[][] shapes = new long[positions.length][];
    for (int j = 0; j < positions.length; j++) {
      int p = positions[j];
      shapes[j] = column.rowShape(p);
      offsets[j + 1] = offsets[j] + (sourceOffsets[p + 1] - sourceOffsets[p]) * elementBytes;
    }
    MemorySegment source = column.values().segment();
    NativeBuffer buffer = allocator.allocate(offsets[positions.length]);
    MemorySegment target = buffer.segment();
    int j = 0;
    while (j < positions.length) {
      int run = 1;
      while (j + run < positions.length && positions[j + run] == positions[j] + run) {
        run++;
      }
      long from = sourceOffsets[positions[j]] * elementBytes;
      MemorySegment.copy(source, from, target, offsets[j], offsets[j + run] - offsets[j]);
      j += run;
    }
    return jagged(column.dtype(), buffer, offsets, shapes, positions.length);
  }

  /**
   * Stores frozen deep copies of object values.
   *
   * @param allocator the unit's allocator, for tensors nested in values
   * @param values the caller's values (only read)
   * @param positions row numbers of {@code values}
   * @param field the field name, for error messages
   * @return a block the caller owns (one reference)
   * @throws TqException with {@code INVALID_ARGUMENT} for an unsupported value type
   */
  static CellBlock freezeObjects(
      BufferAllocator allocator, List<?> values, int[] positions, String field) {
    Object[] frozen = new Object[positions.length];
    List<Tensor> owned = new ArrayList<>(0);
    try {
      for (int j = 0; j < positions.length; j++) {
        String where = "field '" + field + "' row " + positions[j];
        frozen[j] = ObjectCells.freeze(values.get(positions[j]), allocator, owned, where);
      }
    } catch (RuntimeException e) {
      owned.forEach(Tensor::close);
      throw e;
    }
    return new CellBlock(
        Kind.OBJECT, null, null, null, 0, null, null, frozen, owned, positions.length);
  }

  /**
   * Copies separate tensor rows (validated by {@link CellColumn}) into one new block, or keeps the
   * column's backing buffer as the block when the rows already lie in it back to back from its
   * start and it comes from {@code allocator} (the rows were received straight into it).
   *
   * @param allocator the unit's allocator
   * @param column the rows, of kind DENSE or JAGGED (only read)
   * @return a block the caller owns (one reference)
   */
  static CellBlock copyRows(BufferAllocator allocator, CellColumn column) {
    List<MemorySegment> rows = column.rows();
    long[] offsets = new long[rows.size() + 1];
    for (int j = 0; j < rows.size(); j++) {
      offsets[j + 1] = offsets[j] + rows.get(j).byteSize();
    }
    NativeBuffer buffer;
    if (laidOutIn(column.backing(), allocator, rows, offsets)) {
      buffer = column.backing().retain();
    } else {
      buffer = allocator.allocate(offsets[rows.size()]);
      MemorySegment target = buffer.segment();
      for (int j = 0; j < rows.size(); j++) {
        MemorySegment.copy(rows.get(j), 0, target, offsets[j], rows.get(j).byteSize());
      }
    }
    if (column.kind() == ColumnKind.DENSE) {
      long[] rowShape = rows.isEmpty() ? new long[0] : column.shapes().getFirst().clone();
      long rowBytes = rows.isEmpty() ? 0 : rows.getFirst().byteSize();
      return dense(column.dtype(), buffer, rowShape, rowBytes, rows.size());
    }
    long[][] shapes = new long[rows.size()][];
    for (int j = 0; j < shapes.length; j++) {
      shapes[j] = column.shapes().get(j).clone();
    }
    return jagged(column.dtype(), buffer, offsets, shapes, rows.size());
  }

  /** Whether {@code rows} are the bytes of {@code backing}, back to back from its start. */
  private static boolean laidOutIn(
      NativeBuffer backing, BufferAllocator allocator, List<MemorySegment> rows, long[] offsets) {
    if (backing == null || backing.allocator() != allocator || rows.isEmpty()) {
      return false;
    }
    MemorySegment whole = backing.segment();
    if (offsets[rows.size()] > whole.byteSize()) {
      return false;
    }
    long base = whole.address();
    for (int j = 0; j < rows.size(); j++) {
      MemorySegment row = rows.get(j);
      if (!row.isNative() || row.address() != base + offsets[j]) {
        return false;
      }
    }
    return true;
  }

  /**
   * A one-row tensor block over a buffer read from a checkpoint.
   *
   * @param kind DENSE or JAGGED, as the cell was put
   * @param dtype the element type
   * @param buffer the cell's bytes; the block takes ownership
   * @param shape the cell's shape
   * @return a block the caller owns (one reference)
   */
  static CellBlock tensorCell(Kind kind, DType dtype, NativeBuffer buffer, long[] shape) {
    if (kind == Kind.DENSE) {
      return dense(dtype, buffer, shape, buffer.lengthBytes(), 1);
    }
    long[] offsets = {0, buffer.lengthBytes()};
    return jagged(dtype, buffer, offsets, new long[][] {shape}, 1);
  }

  /**
   * A one-row object block holding a frozen copy of {@code value}.
   *
   * @param allocator the unit's allocator, for tensors nested in the value
   * @param value the value (only read)
   * @param field the field name, for error messages
   * @return a block the caller owns (one reference)
   */
  static CellBlock objectCell(BufferAllocator allocator, Object value, String field) {
    return freezeObjects(allocator, Collections.singletonList(value), new int[] {0}, field);
  }

  Kind kind() {
    return kind;
  }

  /** The dtype of tensor cells; null for object cells. */
  DType dtype() {
    return dtype;
  }

  /** The shape of row {@code row}; callers must not modify the array. */
  long[] rowShape(int row) {
    return kind == Kind.DENSE ? denseRowShape : rowShapes[row];
  }

  /** The byte size of tensor row {@code row}. */
  long rowBytes(int row) {
    return kind == Kind.DENSE ? denseRowBytes : offsets[row + 1] - offsets[row];
  }

  /** The bytes of tensor row {@code row}: a view valid while the block is retained. */
  MemorySegment rowSegment(int row) {
    long start = kind == Kind.DENSE ? row * denseRowBytes : offsets[row];
    return buffer.segment().asSlice(start, rowBytes(row));
  }

  /**
   * The bytes of tensor rows {@code row} to {@code row + count - 1}, which lie back to back: a view
   * valid while the block is retained.
   */
  MemorySegment rowsSegment(int row, int count) {
    long start = kind == Kind.DENSE ? row * denseRowBytes : offsets[row];
    long end = kind == Kind.DENSE ? (row + count) * denseRowBytes : offsets[row + count];
    return buffer.segment().asSlice(start, end - start);
  }

  /** Copies tensor row {@code row} to {@code target} at {@code offset}. */
  void copyRowTo(int row, MemorySegment target, long offset) {
    long start = kind == Kind.DENSE ? row * denseRowBytes : offsets[row];
    MemorySegment.copy(buffer.segment(), start, target, offset, rowBytes(row));
  }

  /** Copies tensor rows {@code row} to {@code row + count - 1} to {@code target} at once. */
  void copyRowsTo(int row, int count, MemorySegment target, long offset) {
    long start = kind == Kind.DENSE ? row * denseRowBytes : offsets[row];
    long end = kind == Kind.DENSE ? (row + count) * denseRowBytes : offsets[row + count];
    MemorySegment.copy(buffer.segment(), start, target, offset, end - start);
  }

  /** The frozen value of object row {@code row}; see {@link ObjectCells#thaw}. */
  Object value(int row) {
    return values[row];
  }

  /** Native bytes held, by block size. */
  long capacityBytes() {
    long bytes = buffer == null ? 0 : buffer.capacityBytes();
    if (ownedTensors != null) {
      for (Tensor t : ownedTensors) {
        bytes += t.nbytes();
      }
    }
    return bytes;
  }

  /** Marks one row as no longer current; the last one drops the table's reference. */
  void dropRow() {
    if (--liveRows == 0) {
      release();
    }
  }

  /** Marks one row as current again (undo of a put); the first one re-takes the reference. */
  void reviveRow() {
    if (liveRows++ == 0) {
      retain();
    }
  }

  /** Adds a reference for a reader or an undo record. */
  void retain() {
    int before = refs.getAndIncrement();
    if (before <= 0) {
      refs.getAndDecrement();
      throw new TqException(ErrorCode.INTERNAL, "retain of a freed cell block");
    }
  }

  /** Drops a reference; the last one frees the memory. */
  void release() {
    int after = refs.decrementAndGet();
    if (after == 0) {
      if (buffer != null) {
        buffer.release();
      }
      if (ownedTensors != null) {
        ownedTensors.forEach(Tensor::close);
      }
    } else if (after < 0) {
      throw new TqException(ErrorCode.INTERNAL, "release of a freed cell block");
    }
  }
}
