package org.transferqueue.controller;

import java.util.List;
import java.util.Objects;

/**
 * The production status of a partition's samples for some fields.
 *
 * @param partitionId the partition
 * @param fields the fields, in request order (the columns)
 * @param indexes every active and pre-allocated index of the partition, ascending (the rows)
 * @param produced per field (aligned with {@code fields}), the members of {@code indexes} produced
 */
public record ProductionStatus(
    String partitionId, List<String> fields, IndexSet indexes, List<IndexSet> produced) {
  /** Validates and copies the arguments. */
  public ProductionStatus {
    Objects.requireNonNull(partitionId, "partitionId");
    fields = List.copyOf(fields);
    Objects.requireNonNull(indexes, "indexes");
    produced = List.copyOf(produced);
    if (produced.size() != fields.size()) {
      throw new IllegalArgumentException(
          "produced columns=" + produced.size() + " != fields=" + fields.size());
    }
  }

  /**
   * One cell of the matrix.
   *
   * @param row position in {@link #indexes()}
   * @param column position in {@link #fields()}
   * @return true if that field of that sample is produced
   */
  public boolean isProduced(int row, int column) {
    return produced.get(column).contains(indexes.get(row));
  }

  /**
   * Whether every cell is produced.
   *
   * @return true when every field is produced for every index
   */
  public boolean allProduced() {
    for (IndexSet column : produced) {
      if (column.size() != indexes.size()) {
        return false;
      }
    }
    return true;
  }
}
