package org.transferqueue.storage.simple;

import java.lang.foreign.MemorySegment;
import java.util.List;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;

/**
 * The cells of one read from one storage unit, as of one instant, exposed without copying: for each
 * (field, row) the kind, dtype, shape and bytes (tensor cells) or the value (object cells). The
 * cells stay valid until {@link #close()}; a server writes its reply straight from them.
 *
 * <p>Everything returned is read-only: segments are views of the stored cells, object values the
 * stored values (nested tensors included). Not thread-safe; closing is idempotent.
 */
public final class UnitCells implements AutoCloseable {
  private final CellSnapshot snapshot;
  private final List<String> fields;

  UnitCells(CellSnapshot snapshot, List<String> fields) {
    this.snapshot = snapshot;
    this.fields = List.copyOf(fields);
  }

  /**
   * The fields read, in request order.
   *
   * @return the field names
   */
  public List<String> fields() {
    return fields;
  }

  /**
   * The number of rows read, one per requested global index.
   *
   * @return the row count
   */
  public int rowCount() {
    return snapshot.rowCount();
  }

  /**
   * The kind of cell ({@code field}, {@code row}): the kind of the column it was put with.
   *
   * @param field the field's position in {@link #fields()}
   * @param row the row
   * @return the kind
   */
  public ColumnKind kind(int field, int row) {
    return switch (snapshot.block(field, row).kind()) {
      case DENSE -> ColumnKind.DENSE;
      case JAGGED -> ColumnKind.JAGGED;
      case OBJECT -> ColumnKind.OBJECT;
    };
  }

  /**
   * The dtype of a tensor cell.
   *
   * @param field the field's position
   * @param row the row
   * @return the dtype; null for object cells
   */
  public DType dtype(int field, int row) {
    return snapshot.block(field, row).dtype();
  }

  /**
   * The shape of a tensor cell.
   *
   * @param field the field's position
   * @param row the row
   * @return a copy of the shape
   */
  public long[] shape(int field, int row) {
    return snapshot.block(field, row).rowShape(snapshot.blockRow(field, row)).clone();
  }

  /**
   * The bytes of a tensor cell.
   *
   * @param field the field's position
   * @param row the row
   * @return a read-only view valid until {@link #close()}
   */
  public MemorySegment bytes(int field, int row) {
    return snapshot.block(field, row).rowSegment(snapshot.blockRow(field, row)).asReadOnly();
  }

  /**
   * The value of an object cell.
   *
   * @param field the field's position
   * @param row the row
   * @return the stored value in plain value types; must not be modified or kept past {@link
   *     #close()}
   */
  public Object value(int field, int row) {
    return ObjectCells.plain(snapshot.block(field, row).value(snapshot.blockRow(field, row)));
  }

  /** Releases the cells. Idempotent. */
  @Override
  public void close() {
    snapshot.close();
  }
}
