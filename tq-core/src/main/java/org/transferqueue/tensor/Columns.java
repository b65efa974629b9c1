package org.transferqueue.tensor;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;

/** Operations over several columns: position checks and concatenation. */
final class Columns {
  private Columns() {}

  static void checkPositions(int[] positions, int rowCount) {
    for (int i = 0; i < positions.length; i++) {
      if (positions[i] < 0 || positions[i] >= rowCount) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "position " + positions[i] + " at index " + i + " is outside [0, " + rowCount + ")");
      }
    }
  }

  /**
   * Concatenates the columns of one field into new memory. Dense columns of one dtype and row shape
   * stay dense; tensor columns of one dtype otherwise become jagged; object columns stay object
   * columns; anything else is a schema conflict.
   */
  static Column concat(BufferAllocator allocator, String field, List<Column> parts) {
    if (parts.stream().allMatch(c -> c instanceof ObjectColumn)) {
      List<Object> values = new ArrayList<>();
      parts.forEach(c -> values.addAll(((ObjectColumn) c).values()));
      return ObjectColumn.copyOf(allocator, values);
    }
    if (parts.stream().anyMatch(c -> c instanceof ObjectColumn)) {
      throw new TqException(
          ErrorCode.SCHEMA_CONFLICT,
          "field '" + field + "' mixes object and tensor columns: " + kinds(parts));
    }
    DType dtype = dtype(parts.getFirst());
    for (Column part : parts) {
      if (dtype(part) != dtype) {
        throw new TqException(
            ErrorCode.SCHEMA_CONFLICT,
            "field '" + field + "' has columns of dtypes " + dtype + " and " + dtype(part));
      }
    }
    if (parts.stream().allMatch(c -> c instanceof DenseColumn)) {
      long[] rowShape = ((DenseColumn) parts.getFirst()).rowShape();
      if (parts.stream().allMatch(c -> Arrays.equals(((DenseColumn) c).rowShape(), rowShape))) {
        return concatDense(allocator, parts, rowShape);
      }
    }
    List<Tensor> rows = new ArrayList<>();
    for (Column part : parts) {
      for (int i = 0; i < part.rowCount(); i++) {
        rows.add(part instanceof DenseColumn d ? d.row(i) : ((JaggedColumn) part).row(i));
      }
    }
    return JaggedColumn.copyOf(allocator, dtype, rows);
  }

  private static DenseColumn concatDense(
      BufferAllocator allocator, List<Column> parts, long[] rowShape) {
    long rows = parts.stream().mapToLong(Column::rowCount).sum();
    long[] shape = new long[rowShape.length + 1];
    shape[0] = rows;
    System.arraycopy(rowShape, 0, shape, 1, rowShape.length);
    List<MemorySegment> sources = new ArrayList<>(parts.size());
    for (Column part : parts) {
      sources.add(((DenseColumn) part).tensor().segment());
    }
    Tensor out = Tensor.allocate(allocator, dtype(parts.getFirst()), shape);
    long offset = 0;
    for (MemorySegment source : sources) {
      MemorySegment.copy(source, 0, out.segment(), offset, source.byteSize());
      offset += source.byteSize();
    }
    return new DenseColumn(out);
  }

  private static DType dtype(Column column) {
    return switch (column) {
      case DenseColumn dense -> dense.dtype();
      case JaggedColumn jagged -> jagged.dtype();
      case ObjectColumn object -> throw new IllegalArgumentException("object column " + object);
    };
  }

  private static List<ColumnKind> kinds(List<Column> parts) {
    return parts.stream().map(Column::kind).toList();
  }
}
