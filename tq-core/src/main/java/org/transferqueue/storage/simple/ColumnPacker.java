package org.transferqueue.storage.simple;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Builds the result column of one field of a get from the cells the units returned, keeping the
 * column kind the data was put with.
 *
 * <pre>
 *  cells of the field (in request order)               result
 *  all from dense puts, one dtype, one row shape       dense [B, rowShape...]
 *  all tensors (dense or jagged puts), one dtype       jagged
 *  all objects                                         object
 *  tensors and objects, or several dtypes              SCHEMA_CONFLICT
 * </pre>
 *
 * <p>Usage: {@link #plan} decides the kind and allocates the result (in the caller's thread), then
 * {@link #copyFrom} is called once per unit, possibly in parallel (every unit writes disjoint
 * rows), then {@link #finish} builds the column. Each tensor byte is copied once, from the cell to
 * the result. Not thread-safe except for concurrent {@code copyFrom} calls on disjoint rows.
 */
final class ColumnPacker implements AutoCloseable {
  private final String field;
  private final int fieldIndex;
  private final CellBlock.Kind kind;
  private final DType dtype;
  private final long rowBytes;
  private final long[] byteOffsets;
  private final List<long[]> shapes;
  private final Object[] values;
  private final BufferAllocator allocator;
  private Tensor target;

  private ColumnPacker(
      String field,
      int fieldIndex,
      CellBlock.Kind kind,
      DType dtype,
      long rowBytes,
      long[] byteOffsets,
      List<long[]> shapes,
      Object[] values,
      BufferAllocator allocator) {
    this.field = field;
    this.fieldIndex = fieldIndex;
    this.kind = kind;
    this.dtype = dtype;
    this.rowBytes = rowBytes;
    this.byteOffsets = byteOffsets;
    this.shapes = shapes;
    this.values = values;
    this.allocator = allocator;
  }

  /**
   * Decides the kind of a field's result and allocates its memory.
   *
   * @param field the field name
   * @param fieldIndex the field's index in the snapshots
   * @param rowCount B, the request's row count
   * @param groups the routing groups, aligned with {@code snapshots}
   * @param snapshots the cells of every unit
   * @param allocator where the result's memory comes from
   * @return the packer, owning the allocated memory until {@link #finish}
   * @throws StorageException with {@code SCHEMA_CONFLICT} when the cells cannot form one column
   */
  static ColumnPacker plan(
      String field,
      int fieldIndex,
      int rowCount,
      List<RoutingGroup> groups,
      List<CellSnapshot> snapshots,
      BufferAllocator allocator) {
    CellBlock first = snapshots.getFirst().block(fieldIndex, 0);
    boolean allObjects = true;
    boolean anyObject = false;
    boolean uniformDense = true;
    for (CellSnapshot snapshot : snapshots) {
      for (int j = 0; j < snapshot.rowCount(); j++) {
        CellBlock block = snapshot.block(fieldIndex, j);
        boolean object = block.kind() == CellBlock.Kind.OBJECT;
        allObjects &= object;
        anyObject |= object;
        if (!object && block.dtype() != first.dtype()) {
          throw conflict(field, "dtypes " + first.dtype() + " and " + block.dtype());
        }
        uniformDense &=
            block.kind() == CellBlock.Kind.DENSE
                && (block == first
                    || Arrays.equals(
                        block.rowShape(snapshot.blockRow(fieldIndex, j)), first.rowShape(0)));
      }
    }
    if (allObjects) {
      return new ColumnPacker(
          field,
          fieldIndex,
          CellBlock.Kind.OBJECT,
          null,
          0,
          null,
          null,
          new Object[rowCount],
          allocator);
    }
    if (anyObject) {
      throw conflict(field, "tensor and non-tensor cells");
    }
    if (uniformDense) {
      long[] rowShape = first.rowShape(0);
      long[] shape = new long[rowShape.length + 1];
      shape[0] = rowCount;
      System.arraycopy(rowShape, 0, shape, 1, rowShape.length);
      ColumnPacker packer =
          new ColumnPacker(
              field,
              fieldIndex,
              CellBlock.Kind.DENSE,
              first.dtype(),
              first.rowBytes(0),
              null,
              null,
              null,
              allocator);
      packer.target = Tensor.allocate(allocator, first.dtype(), shape);
      return packer;
    }
    long[][] rowShapes = new long[rowCount][];
    long[] rowSizes = new long[rowCount];
    for (int g = 0; g < groups.size(); g++) {
      int[] positions = groups.get(g).positions();
      CellSnapshot snapshot = snapshots.get(g);
      for (int j = 0; j < positions.length; j++) {
        int row = snapshot.blockRow(fieldIndex, j);
        rowShapes[positions[j]] = snapshot.block(fieldIndex, j).rowShape(row).clone();
        rowSizes[positions[j]] = snapshot.block(fieldIndex, j).rowBytes(row);
      }
    }
    long[] offsets = new long[rowCount + 1];
    for (int i = 0; i < rowCount; i++) {
      offsets[i + 1] = offsets[i] + rowSizes[i];
    }
    ColumnPacker packer =
        new ColumnPacker(
            field,
            fieldIndex,
            CellBlock.Kind.JAGGED,
            first.dtype(),
            0,
            offsets,
            Arrays.asList(rowShapes),
            null,
            allocator);
    packer.target =
        Tensor.allocate(allocator, first.dtype(), offsets[rowCount] / first.dtype().byteSize());
    return packer;
  }

  /**
   * Builds a get's result batch from the units' snapshots.
   *
   * @param fields the fields, in result order (also the snapshots' field order)
   * @param rowCount B
   * @param groups the routing groups, aligned with {@code snapshots}
   * @param snapshots the cells of every unit (not closed here)
   * @param allocator where the result's memory comes from
   * @param runner runs the per-unit copy tasks, possibly in parallel, and waits for all of them
   * @return a batch the caller owns
   * @throws StorageException with {@code SCHEMA_CONFLICT} when a field's cells cannot form one
   *     column; nothing stays allocated then
   */
  static Batch packBatch(
      List<String> fields,
      int rowCount,
      List<RoutingGroup> groups,
      List<CellSnapshot> snapshots,
      BufferAllocator allocator,
      Consumer<List<IntSupplier>> runner) {
    List<ColumnPacker> packers = new ArrayList<>(fields.size());
    List<Tensor> owned = Collections.synchronizedList(new ArrayList<>());
    try {
      for (int f = 0; f < fields.size(); f++) {
        packers.add(plan(fields.get(f), f, rowCount, groups, snapshots, allocator));
      }
      List<IntSupplier> copies = new ArrayList<>(groups.size());
      for (int g = 0; g < groups.size(); g++) {
        int unit = g;
        copies.add(
            () -> {
              for (ColumnPacker packer : packers) {
                packer.copyFrom(groups.get(unit), snapshots.get(unit), owned);
              }
              return unit;
            });
      }
      runner.accept(copies);
      Batch.Builder result = Batch.builder();
      for (int f = 0; f < fields.size(); f++) {
        result.add(fields.get(f), packers.get(f).finish());
      }
      return result.build();
    } catch (RuntimeException e) {
      packers.forEach(ColumnPacker::close);
      owned.forEach(Tensor::close);
      throw e;
    }
  }

  private static StorageException conflict(String field, String what) {
    return new StorageException(
        ErrorCode.SCHEMA_CONFLICT,
        "field '" + field + "' holds " + what + " among the requested samples");
  }

  /**
   * Copies (or, for objects, thaws) one unit's cells of this field into their result rows.
   *
   * @param group the unit's routing group
   * @param snapshot the unit's cells
   * @param owned receives tensors allocated for object values, to be freed on failure
   */
  void copyFrom(RoutingGroup group, CellSnapshot snapshot, List<Tensor> owned) {
    int[] positions = group.positions();
    if (kind == CellBlock.Kind.OBJECT) {
      for (int j = 0; j < positions.length; j++) {
        CellBlock block = snapshot.block(fieldIndex, j);
        values[positions[j]] =
            ObjectCells.thaw(block.value(snapshot.blockRow(fieldIndex, j)), allocator, owned);
      }
      return;
    }
    MemorySegment segment = target.segment();
    for (int j = 0; j < positions.length; j++) {
      long offset =
          kind == CellBlock.Kind.DENSE ? positions[j] * rowBytes : byteOffsets[positions[j]];
      snapshot.block(fieldIndex, j).copyRowTo(snapshot.blockRow(fieldIndex, j), segment, offset);
    }
  }

  /**
   * Builds the column; the column takes over the memory.
   *
   * @return a column the caller owns
   */
  Column finish() {
    Tensor tensor = target;
    target = null;
    return switch (kind) {
      case DENSE -> new DenseColumn(tensor);
      case JAGGED -> JaggedColumn.fromValues(tensor, shapes);
      case OBJECT -> new ObjectColumn(new ArrayList<>(Arrays.asList(values)));
    };
  }

  /** Frees the result memory if {@link #finish} was not reached. */
  @Override
  public void close() {
    if (target != null) {
      target.close();
      target = null;
    }
  }

  @Override
  public String toString() {
    return "ColumnPacker[field=" + field + ", kind=" + kind + "]";
  }
}
