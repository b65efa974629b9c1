package org.transferqueue.storage.simple;

import java.util.Map;

/**
 * The undo record of a commit to a {@link StorageUnit}: what the put replaced in each field, so
 * that {@link #rollback()} can restore it unless a later operation replaced the cells again.
 *
 * <p>Not thread-safe: owned by the request that made it (as every {@link PutUndo}); {@link
 * #restore} runs under the unit's write lock.
 */
final class CommittedPut implements PutUndo {
  private final StorageUnit unit;
  private final long[] gis;
  private final boolean[] createdSample;
  private final String[] fieldNames;
  private final CellBlock[] blocks;
  private final FieldCells.Replaced[] replaced;
  private boolean done;

  CommittedPut(
      StorageUnit unit,
      long[] gis,
      boolean[] createdSample,
      String[] fieldNames,
      CellBlock[] blocks,
      FieldCells.Replaced[] replaced) {
    this.unit = unit;
    this.gis = gis;
    this.createdSample = createdSample;
    this.fieldNames = fieldNames;
    this.blocks = blocks;
    this.replaced = replaced;
  }

  @Override
  public void rollback() {
    if (done) {
      return;
    }
    try {
      unit.rollback(this);
    } finally {
      close();
    }
  }

  /**
   * Restores the replaced cells in the unit's tables. Under the unit's write lock.
   *
   * @return the number of cells the unit holds fewer now
   */
  long restore(SampleSlots slots, Map<String, FieldCells> fields, UnitRecords.Restored log) {
    long removedCells = 0;
    for (int f = 0; f < fieldNames.length; f++) {
      FieldCells.Replaced r = replaced[f];
      for (int j = 0; j < gis.length; j++) {
        int slot = slots.get(gis[j]);
        if (slot < 0 || r.cells().block(slot) != blocks[f] || r.cells().rows[slot] != j) {
          continue; // replaced or cleared since: a later operation wins
        }
        CellBlock old = r.oldBlocks()[j];
        if (log != null) {
          log.cell(gis[j], fieldNames[f], old, old == null ? 0 : r.oldRows()[j]);
        }
        r.cells().blocks[slot] = old;
        if (old != null) {
          r.cells().rows[slot] = r.oldRows()[j];
          old.reviveRow();
        } else {
          r.cells().held--;
          removedCells++;
        }
        blocks[f].dropRow();
      }
      if (r.createdField() && r.cells().held == 0 && fields.get(fieldNames[f]) == r.cells()) {
        fields.remove(fieldNames[f]);
        if (log != null) {
          log.removedFields.add(fieldNames[f]);
        }
      }
    }
    for (int j = 0; j < gis.length; j++) {
      if (createdSample[j]) {
        int slot = slots.get(gis[j]);
        if (slot >= 0 && holdsNothing(fields, slot)) {
          slots.remove(gis[j]);
          if (log != null) {
            log.removedSamples.add(gis[j]);
          }
        }
      }
    }
    return removedCells;
  }

  private static boolean holdsNothing(Map<String, FieldCells> fields, int slot) {
    for (FieldCells cells : fields.values()) {
      if (cells.block(slot) != null) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    if (done) {
      return;
    }
    done = true;
    for (FieldCells.Replaced r : replaced) {
      r.retained().forEach(CellBlock::release);
    }
  }
}
