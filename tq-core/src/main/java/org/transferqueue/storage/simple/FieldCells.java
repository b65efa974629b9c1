package org.transferqueue.storage.simple;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The cells of one field of a {@link StorageUnit}, indexed by sample slot: {@code blocks[slot]} and
 * {@code rows[slot]} name the cell (block, row in block), or {@code blocks[slot]} is null.
 *
 * <p>Not thread-safe: guarded by its unit's lock (read lock to read, write lock to change).
 */
final class FieldCells {
  CellBlock[] blocks = new CellBlock[16];
  int[] rows = new int[16];
  long held;

  void ensureSlots(int bound) {
    if (bound > blocks.length) {
      int length = Math.max(bound, blocks.length * 2);
      blocks = Arrays.copyOf(blocks, length);
      rows = Arrays.copyOf(rows, length);
    }
  }

  Replaced install(int[] slotOf, CellBlock block, boolean createdField) {
    CellBlock[] oldBlocks = new CellBlock[slotOf.length];
    int[] oldRows = new int[slotOf.length];
    List<CellBlock> retained = new ArrayList<>(1);
    int added = 0;
    for (int j = 0; j < slotOf.length; j++) {
      int slot = slotOf[j];
      CellBlock old = blocks[slot];
      if (old != null) {
        if (retained.isEmpty() || retained.getLast() != old) {
          old.retain();
          retained.add(old);
        }
        oldBlocks[j] = old;
        oldRows[j] = rows[slot];
        old.dropRow();
      } else {
        added++;
        held++;
      }
      blocks[slot] = block;
      rows[slot] = j;
    }
    return new Replaced(this, oldBlocks, oldRows, retained, added, createdField);
  }

  CellBlock block(int slot) {
    return slot < blocks.length ? blocks[slot] : null;
  }

  boolean clearSlot(int slot) {
    CellBlock old = block(slot);
    if (old == null) {
      return false;
    }
    blocks[slot] = null;
    held--;
    old.dropRow();
    return true;
  }

  /**
   * What a put replaced in one field.
   *
   * @param cells the field
   * @param oldBlocks the replaced cell's block of each row of the put, null where there was none
   * @param oldRows the replaced cell's row in its block, aligned
   * @param retained the replaced blocks, retained until the put is rolled back or kept
   * @param added the number of cells the put added (not replaced)
   * @param createdField whether the put created the field
   */
  record Replaced(
      FieldCells cells,
      CellBlock[] oldBlocks,
      int[] oldRows,
      List<CellBlock> retained,
      int added,
      boolean createdField) {}
}
