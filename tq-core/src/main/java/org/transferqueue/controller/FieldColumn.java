package org.transferqueue.controller;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.tensor.DType;

/**
 * One registered field of a partition: its production bitset and its recorded schema.
 *
 * <p>The schema exists only while at least one sample has the field; its index set is exactly the
 * production bitset. Schema updates follow two passes: {@link #check} rejects a conflicting
 * notification before anything changes, {@link #apply} then cannot fail. Ragged transitions: a
 * regular field that receives another shape, or any nested notification, becomes nested with a
 * shape per sample; a nested field whose remaining samples share one shape after a clear becomes
 * regular again.
 *
 * <p><b>Column kinds.</b> The field also remembers which samples were put as rows of a jagged
 * column, so that the schema exported for a batch gives every reader the kind the producer put,
 * whatever the other samples of the partition did: a batch is regular (read dense) exactly when
 * none of its produced samples was put jagged and they all share one shape, otherwise nested (read
 * jagged), as SimpleStorage units decide from their cells. Not thread-safe: used only under the
 * controller lock.
 */
final class FieldColumn {
  enum Kind {
    REGULAR,
    NESTED,
    NON_TENSOR
  }

  final String name;
  final BitSet produced = new BitSet();
  int producedCount;

  private Kind kind;
  private DType dtype;
  private List<Long> shape;
  private final Map<Integer, List<Long>> perSampleShapes = new HashMap<>();
  // The produced samples whose cell was put as a row of a jagged column.
  private final BitSet jagged = new BitSet();

  FieldColumn(String name) {
    this.name = name;
  }

  boolean hasSchema() {
    return producedCount > 0;
  }

  /**
   * Rejects an incoming schema that cannot be merged into this field.
   *
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a placeholder or a per-sample list
   *     of the wrong length, {@link ErrorCode#SCHEMA_CONFLICT} for a dtype or kind conflict
   */
  void check(String partitionId, FieldSchema incoming, int indexCount) {
    Objects.requireNonNull(incoming, () -> "schema of field " + name);
    if (incoming.isPlaceholder()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "receiving a regular tensor without 'shape': field="
              + name
              + " partition="
              + partitionId);
    }
    if (incoming.nested()) {
      List<List<Long>> shapes = incoming.perSampleShapes();
      if (shapes.size() != indexCount) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "per_sample_shapes length="
                + shapes.size()
                + " != indexes="
                + indexCount
                + " for field="
                + name);
      }
      if (shapes.contains(null)) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "receiving a nested field without 'per_sample_shapes' for every sample: field=" + name);
      }
    }
    if (!hasSchema()) {
      return;
    }
    Kind incomingKind = kindOf(incoming);
    if ((kind == Kind.NON_TENSOR) != (incomingKind == Kind.NON_TENSOR)) {
      throw new TqException(
          ErrorCode.SCHEMA_CONFLICT,
          "kind mismatch for field="
              + name
              + " in partition="
              + partitionId
              + ": existing="
              + kind
              + " incoming="
              + incomingKind);
    }
    if (incoming.dtype() != null && dtype != null && incoming.dtype() != dtype) {
      throw new TqException(
          ErrorCode.SCHEMA_CONFLICT,
          "dtype mismatch for field="
              + name
              + " in partition="
              + partitionId
              + ": existing="
              + dtype.torchName()
              + " incoming="
              + incoming.dtype().torchName());
    }
  }

  /** Marks {@code indexes} produced and merges the schema; {@link #check} must have passed. */
  void apply(int[] indexes, FieldSchema incoming) {
    Kind incomingKind = kindOf(incoming);
    if (!hasSchema()) {
      kind = incomingKind;
      dtype = incoming.dtype();
      shape = incoming.shape();
      perSampleShapes.clear();
      if (kind == Kind.NESTED) {
        putShapes(indexes, incoming);
      }
    } else if (incomingKind == Kind.NESTED) {
      nest();
      putShapes(indexes, incoming);
    } else if (incomingKind == Kind.REGULAR) {
      if (kind == Kind.REGULAR && !shape.equals(incoming.shape())) {
        nest();
      }
      if (kind == Kind.NESTED) {
        for (int index : indexes) {
          perSampleShapes.put(index, incoming.shape());
        }
      }
    }
    for (int index : indexes) {
      if (!produced.get(index)) {
        produced.set(index);
        producedCount++;
      }
      jagged.set(index, incomingKind == Kind.NESTED);
    }
  }

  /** Clears {@code index} from production and schema; de-nests when one shape remains. */
  void remove(int[] indexes) {
    for (int index : indexes) {
      if (produced.get(index)) {
        produced.clear(index);
        producedCount--;
      }
      perSampleShapes.remove(index);
      jagged.clear(index);
    }
    if (producedCount == 0) {
      kind = null;
      dtype = null;
      shape = null;
      perSampleShapes.clear();
    } else if (kind == Kind.NESTED
        && new HashSet<>(perSampleShapes.values()).size() == 1
        && perSampleShapes.size() == producedCount) {
      kind = Kind.REGULAR;
      shape = perSampleShapes.values().iterator().next();
      perSampleShapes.clear();
    }
  }

  /**
   * The schema of this field for a batch of samples, in batch order: regular when the batch's
   * produced samples share one shape and none was put jagged, nested (with a shape per sample, null
   * where not produced) otherwise; for a batch without produced samples, the field's own kind.
   *
   * @return the schema, or null when no sample has the field
   */
  FieldSchema export(long[] batchIndexes) {
    if (!hasSchema()) {
      return null;
    }
    if (kind == Kind.NON_TENSOR) {
      return new FieldSchema(null, null, false, true, null);
    }
    if (kind == Kind.REGULAR && jagged.isEmpty()) {
      return new FieldSchema(dtype, shape, false, false, null);
    }
    List<Long> common = null;
    boolean nested = false;
    boolean anyProduced = false;
    for (long gi : batchIndexes) {
      int index = (int) gi;
      if (!produced.get(index)) {
        continue;
      }
      List<Long> sampleShape = shapeOf(index);
      nested |= jagged.get(index) || anyProduced && !common.equals(sampleShape);
      common = anyProduced ? common : sampleShape;
      anyProduced = true;
    }
    if (!anyProduced ? kind == Kind.REGULAR : !nested) {
      return new FieldSchema(dtype, anyProduced ? common : shape, false, false, null);
    }
    List<List<Long>> shapes = new ArrayList<>(batchIndexes.length);
    for (long gi : batchIndexes) {
      shapes.add(produced.get((int) gi) ? shapeOf((int) gi) : null);
    }
    return new FieldSchema(dtype, null, true, false, shapes);
  }

  /** The recorded shape of a produced sample. */
  private List<Long> shapeOf(int index) {
    return kind == Kind.NESTED ? perSampleShapes.get(index) : shape;
  }

  Kind kind() {
    return kind;
  }

  DType dtype() {
    return dtype;
  }

  List<Long> shape() {
    return shape;
  }

  Map<Integer, List<Long>> perSampleShapes() {
    return perSampleShapes;
  }

  FieldState snapshot() {
    Map<Long, List<Long>> shapes = new HashMap<>();
    perSampleShapes.forEach((k, v) -> shapes.put((long) k, v));
    return new FieldState(
        name,
        IndexSet.copyOf(produced),
        kind == null ? null : kind.name(),
        dtype,
        shape,
        shapes,
        IndexSet.copyOf(jagged));
  }

  static FieldColumn restore(FieldState state) {
    FieldColumn column = new FieldColumn(state.name());
    column.produced.or(state.produced().toBitSet());
    column.producedCount = state.produced().size();
    column.kind = state.kind() == null ? null : Kind.valueOf(state.kind());
    column.dtype = state.dtype();
    column.shape = state.shape();
    state.perSampleShapes().forEach((k, v) -> column.perSampleShapes.put((int) (long) k, v));
    column.jagged.or(state.jagged().toBitSet());
    column.jagged.and(column.produced);
    return column;
  }

  private void nest() {
    if (kind == Kind.REGULAR) {
      for (int index = produced.nextSetBit(0); index >= 0; index = produced.nextSetBit(index + 1)) {
        perSampleShapes.put(index, shape);
      }
      kind = Kind.NESTED;
      shape = null;
    }
  }

  private void putShapes(int[] indexes, FieldSchema incoming) {
    List<List<Long>> shapes = incoming.perSampleShapes();
    for (int i = 0; i < indexes.length; i++) {
      perSampleShapes.put(indexes[i], shapes.get(i));
    }
  }

  private static Kind kindOf(FieldSchema schema) {
    if (schema.nonTensor()) {
      return Kind.NON_TENSOR;
    }
    return schema.nested() ? Kind.NESTED : Kind.REGULAR;
  }
}
