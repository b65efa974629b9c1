package org.transferqueue.storage.simple;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;

/**
 * The incoming cells of one field for {@link StorageUnit#putCells}: one row per sample, given as
 * separate row segments (tensor kinds) or values (object kind) rather than as one column, so that
 * cells received over the network are copied once, straight from the received bytes into the unit's
 * memory.
 *
 * <p>Borrowed: the unit only reads the segments and values during the call, except that when the
 * rows lie back to back from the start of {@code backing}, a buffer of the unit's own allocator,
 * the unit keeps that buffer (with a reference of its own) as the cells' block instead of copying
 * the rows: the storage unit server reads a put's rows straight into such a buffer.
 *
 * @param field the field name
 * @param kind the column kind the rows were put with; reads return the same kind
 * @param dtype the element type of tensor rows; null for {@link ColumnKind#OBJECT}
 * @param shapes the shape of each tensor row; empty for objects
 * @param rows the bytes of each tensor row, row-major; empty for objects
 * @param values the value of each object row; empty for tensors
 * @param backing the buffer the tensor rows are slices of, or null; not owned by the column
 */
public record CellColumn(
    String field,
    ColumnKind kind,
    DType dtype,
    List<long[]> shapes,
    List<MemorySegment> rows,
    List<Object> values,
    NativeBuffer backing) {

  /**
   * Checks that the parts fit the kind.
   *
   * @throws StorageException with {@code SHAPE_MISMATCH} when shapes and rows disagree in count or
   *     a row's byte length differs from its shape's, or dense rows differ in shape
   */
  public CellColumn {
    Objects.requireNonNull(field, "field");
    Objects.requireNonNull(kind, "kind");
    shapes = List.copyOf(shapes);
    rows = List.copyOf(rows);
    values = values == null ? List.of() : java.util.Collections.unmodifiableList(values);
    if (kind != ColumnKind.OBJECT) {
      checkRows(field, kind, Objects.requireNonNull(dtype, "dtype"), shapes, rows);
    }
  }

  /** The bytes a row of this shape needs; a shape whose size overflows a long is a mismatch. */
  private static long rowBytes(String field, int j, DType dtype, long[] shape) {
    long numel = 1;
    for (long d : shape) {
      if (d < 0) {
        throw mismatch(field, "row " + j + " has a negative dimension " + d);
      }
      try {
        numel = Math.multiplyExact(numel, d);
      } catch (ArithmeticException e) {
        throw mismatch(
            field, "row " + j + " shape " + java.util.Arrays.toString(shape) + " overflows");
      }
    }
    try {
      return Math.multiplyExact(numel, (long) dtype.byteSize());
    } catch (ArithmeticException e) {
      throw mismatch(
          field, "row " + j + " shape " + java.util.Arrays.toString(shape) + " overflows");
    }
  }

  private static void checkRows(
      String field, ColumnKind kind, DType dtype, List<long[]> shapes, List<MemorySegment> rows) {
    if (shapes.size() != rows.size()) {
      throw mismatch(field, "shapes=" + shapes.size() + " != rows=" + rows.size());
    }
    for (int j = 0; j < rows.size(); j++) {
      long expected = rowBytes(field, j, dtype, shapes.get(j));
      if (rows.get(j).byteSize() != expected) {
        throw mismatch(
            field,
            "row " + j + " has " + rows.get(j).byteSize() + " bytes, its shape needs " + expected);
      }
      if (kind == ColumnKind.DENSE && !java.util.Arrays.equals(shapes.get(j), shapes.get(0))) {
        throw mismatch(field, "dense row " + j + " differs in shape from row 0");
      }
    }
  }

  /**
   * Tensor rows of one kind.
   *
   * @param field the field name
   * @param kind {@link ColumnKind#DENSE} or {@link ColumnKind#JAGGED}
   * @param dtype the element type
   * @param shapes each row's shape
   * @param rows each row's bytes
   * @return the column
   */
  public static CellColumn tensors(
      String field, ColumnKind kind, DType dtype, List<long[]> shapes, List<MemorySegment> rows) {
    if (kind == ColumnKind.OBJECT) {
      throw new StorageException(
          ErrorCode.INVALID_ARGUMENT, "field '" + field + "': tensor rows of kind " + kind);
    }
    return tensors(field, kind, dtype, shapes, rows, null);
  }

  /**
   * Tensor rows that are slices of one buffer, which the unit may keep instead of copying them.
   *
   * @param field the field name
   * @param kind {@link ColumnKind#DENSE} or {@link ColumnKind#JAGGED}
   * @param dtype the element type
   * @param shapes each row's shape
   * @param rows each row's bytes
   * @param backing the buffer the rows are slices of, or null; not owned by the column
   * @return the column
   */
  public static CellColumn tensors(
      String field,
      ColumnKind kind,
      DType dtype,
      List<long[]> shapes,
      List<MemorySegment> rows,
      NativeBuffer backing) {
    if (kind == ColumnKind.OBJECT) {
      throw new StorageException(
          ErrorCode.INVALID_ARGUMENT, "field '" + field + "': tensor rows of kind " + kind);
    }
    return new CellColumn(field, kind, dtype, shapes, rows, List.of(), backing);
  }

  /**
   * Object rows.
   *
   * @param field the field name
   * @param values one value per row (nulls allowed)
   * @return the column
   */
  public static CellColumn objects(String field, List<Object> values) {
    return new CellColumn(field, ColumnKind.OBJECT, null, List.of(), List.of(), values, null);
  }

  /**
   * The number of rows.
   *
   * @return the count
   */
  public int rowCount() {
    return kind == ColumnKind.OBJECT ? values.size() : rows.size();
  }

  private static StorageException mismatch(String field, String what) {
    return new StorageException(ErrorCode.SHAPE_MISMATCH, "field '" + field + "': " + what);
  }
}
