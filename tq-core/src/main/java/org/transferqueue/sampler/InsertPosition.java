package org.transferqueue.sampler;

/**
 * Where a sample came from: the insert that created it and its row in that insert.
 *
 * <p>The controller numbers the inserts of each partition in the order it serves them (a metadata
 * insert, or the samples one key-value put creates) and gives each created sample its row, in the
 * order of the insert's reply. Global indexes say nothing of this: an insert into a partition with
 * recycled indexes gets whichever indexes were freed, in any order and not necessarily adjacent.
 * Immutable.
 *
 * @param insert the insert's number within its partition, from 0, ascending in insert order
 * @param row the sample's row in the insert, from 0
 */
public record InsertPosition(long insert, int row) implements Comparable<InsertPosition> {
  /** Validates the components. */
  public InsertPosition {
    if (insert < 0 || row < 0) {
      throw new IllegalArgumentException("insert=" + insert + " and row=" + row + " must be >= 0");
    }
  }

  /** Orders by insert, then by row. */
  @Override
  public int compareTo(InsertPosition other) {
    int byInsert = Long.compare(insert, other.insert);
    return byInsert != 0 ? byInsert : Integer.compare(row, other.row);
  }
}
