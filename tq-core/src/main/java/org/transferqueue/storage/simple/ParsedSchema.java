package org.transferqueue.storage.simple;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.tensor.DType;

/**
 * The field schema of what a put with a data parser actually stores, read from the staged cell
 * blocks of every unit: the parser may change column kinds, dtypes and shapes, and each unit parses
 * only its own rows.
 *
 * <pre>
 *  staged cells of a field (all units)          schema
 *  all dense, one dtype, one row shape          regular
 *  all tensors, one dtype                       nested, per-sample shapes in batch order
 *  all objects                                  non-tensor
 *  anything else                                DATA_PARSER_FAILED
 * </pre>
 *
 * <p>Stateless.
 */
final class ParsedSchema {
  private ParsedSchema() {}

  /**
   * Builds the schema.
   *
   * @param fields the put's fields, in staging order
   * @param staged the staged parts
   * @param positions per staged part, the batch positions of its rows
   * @param rowCount the put's row count
   * @return the schema by field name
   * @throws StorageException with {@code DATA_PARSER_FAILED} when units' parsed rows of a field
   *     disagree in kind or dtype
   */
  static SortedMap<String, FieldSchema> of(
      String[] fields, List<StagedPut> staged, List<int[]> positions, int rowCount) {
    SortedMap<String, FieldSchema> schema = new TreeMap<>();
    for (int f = 0; f < fields.length; f++) {
      schema.put(fields[f], field(fields[f], f, staged, positions, rowCount));
    }
    return schema;
  }

  private static FieldSchema field(
      String name, int f, List<StagedPut> staged, List<int[]> positions, int rowCount) {
    CellBlock first = staged.getFirst().block(f);
    boolean allDense = true;
    long[][] shapes = new long[rowCount][];
    for (int s = 0; s < staged.size(); s++) {
      CellBlock block = staged.get(s).block(f);
      if ((block.kind() == CellBlock.Kind.OBJECT) != (first.kind() == CellBlock.Kind.OBJECT)
          || block.dtype() != first.dtype()) {
        throw new StorageException(
            ErrorCode.DATA_PARSER_FAILED,
            "data_parser returned field '"
                + name
                + "' as "
                + describe(first.kind(), first.dtype())
                + " on one storage unit and as "
                + describe(block.kind(), block.dtype())
                + " on another");
      }
      allDense &= block.kind() == CellBlock.Kind.DENSE;
      int[] rows = positions.get(s);
      for (int j = 0; j < rows.length; j++) {
        shapes[rows[j]] = block.kind() == CellBlock.Kind.OBJECT ? null : block.rowShape(j);
      }
    }
    if (first.kind() == CellBlock.Kind.OBJECT) {
      return FieldSchema.nonTensorField();
    }
    boolean uniform = true;
    for (long[] shape : shapes) {
      uniform &= Arrays.equals(shape, shapes[0]);
    }
    if (allDense && uniform) {
      return FieldSchema.regular(first.dtype(), FieldSchema.shapeOf(shapes[0]));
    }
    List<List<Long>> perSample = new ArrayList<>(rowCount);
    for (long[] shape : shapes) {
      perSample.add(FieldSchema.shapeOf(shape));
    }
    return FieldSchema.nestedOf(first.dtype(), perSample);
  }

  private static String describe(CellBlock.Kind kind, DType dtype) {
    return kind == CellBlock.Kind.OBJECT ? "objects" : dtype + " tensors";
  }
}
