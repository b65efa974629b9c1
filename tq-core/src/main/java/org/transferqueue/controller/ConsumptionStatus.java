package org.transferqueue.controller;

import java.util.Objects;

/**
 * The consumption status of a partition's samples for one task.
 *
 * @param partitionId the partition
 * @param taskName the task
 * @param indexes every active and pre-allocated index of the partition, ascending
 * @param consumed the members of {@code indexes} the task has consumed
 */
public record ConsumptionStatus(
    String partitionId, String taskName, IndexSet indexes, IndexSet consumed) {
  /** Validates the arguments. */
  public ConsumptionStatus {
    Objects.requireNonNull(partitionId, "partitionId");
    Objects.requireNonNull(taskName, "taskName");
    Objects.requireNonNull(indexes, "indexes");
    Objects.requireNonNull(consumed, "consumed");
  }

  /**
   * The consumption flag of the sample at a position of {@link #indexes()}.
   *
   * @param position 0-based position
   * @return true if consumed
   */
  public boolean isConsumed(int position) {
    return consumed.contains(indexes.get(position));
  }

  /**
   * Whether the partition has samples and the task consumed all of them. Pre-allocated indexes
   * count as not consumed, so a consumer cannot finish before producers inserted everything.
   *
   * @return true when non-empty and fully consumed
   */
  public boolean allConsumed() {
    return !indexes.isEmpty() && consumed.size() == indexes.size();
  }
}
