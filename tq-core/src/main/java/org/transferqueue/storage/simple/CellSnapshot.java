package org.transferqueue.storage.simple;

import java.util.ArrayList;
import java.util.List;

/**
 * The cells of one get request on one storage unit, as of one instant: for every (field, request
 * row) the block and the row inside it. The blocks are retained until {@link #close()}, so the
 * bytes can be copied out without holding the unit's lock.
 *
 * <p>Not thread-safe; owned by the request that took it. Closing is idempotent.
 */
final class CellSnapshot implements AutoCloseable {
  private final CellBlock[][] blocks;
  private final int[][] rows;
  private final List<CellBlock> retained = new ArrayList<>();
  private boolean closed;

  CellSnapshot(int fieldCount, int rowCount) {
    blocks = new CellBlock[fieldCount][rowCount];
    rows = new int[fieldCount][rowCount];
  }

  void set(int field, int row, CellBlock block, int blockRow) {
    if (retained.isEmpty() || retained.getLast() != block) {
      block.retain();
      retained.add(block);
    }
    blocks[field][row] = block;
    rows[field][row] = blockRow;
  }

  /** The block holding cell ({@code field}, {@code row}). */
  CellBlock block(int field, int row) {
    return blocks[field][row];
  }

  /** The row inside {@link #block} of cell ({@code field}, {@code row}). */
  int blockRow(int field, int row) {
    return rows[field][row];
  }

  /** The number of request rows. */
  int rowCount() {
    return blocks.length == 0 ? 0 : blocks[0].length;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    retained.forEach(CellBlock::release);
    retained.clear();
  }
}
