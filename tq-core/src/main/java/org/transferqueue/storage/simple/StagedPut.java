package org.transferqueue.storage.simple;

/**
 * The cells of one put for one storage unit, copied into blocks of the unit's allocator but not yet
 * visible: the output of the staging step and the input of {@link StorageUnit#commit}.
 *
 * <p>Owns its blocks until {@link #commit()} transfers them to the unit; {@link #close()} frees
 * them if they were not committed. Not thread-safe; owned by one request.
 */
final class StagedPut implements AutoCloseable {
  private final StorageUnit unit;
  private final int partition;
  private final long[] globalIndexes;
  private final long[] generations;
  private final String[] fields;
  private final CellBlock[] blocks;
  private boolean owned = true;

  StagedPut(
      StorageUnit unit,
      int partition,
      long[] globalIndexes,
      long[] generations,
      String[] fields,
      CellBlock[] blocks) {
    this.unit = unit;
    this.partition = partition;
    this.globalIndexes = globalIndexes;
    this.generations = generations;
    this.fields = fields;
    this.blocks = blocks;
  }

  /** The staged block of field {@code f} (in the order given at creation). */
  CellBlock block(int f) {
    return blocks[f];
  }

  /** The index of the put's partition group this part belongs to. */
  int partition() {
    return partition;
  }

  /**
   * Makes the cells visible in the unit.
   *
   * @return the undo record of the commit
   */
  PutUndo commit() {
    if (fields.length == 0) {
      owned = false;
      return PutUndo.NONE;
    }
    PutUndo undo = unit.commit(globalIndexes, generations, fields, blocks);
    owned = false;
    return undo;
  }

  @Override
  public void close() {
    if (owned) {
      owned = false;
      for (CellBlock block : blocks) {
        if (block != null) {
          block.release();
        }
      }
    }
  }
}
