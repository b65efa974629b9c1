package org.transferqueue.controller;

import java.util.List;

/**
 * Statistics of every partition and of the index allocator, taken atomically.
 *
 * @param partitions per partition, in creation order
 * @param allocatedIndexes indexes currently owned by some partition
 * @param reusableIndexes released indexes waiting for reuse
 * @param nextFreshIndex the next never-used index
 */
public record ControllerStatistics(
    List<PartitionStatistics> partitions,
    long allocatedIndexes,
    int reusableIndexes,
    long nextFreshIndex) {
  /** Copies the list. */
  public ControllerStatistics {
    partitions = List.copyOf(partitions);
  }

  /**
   * The number of active samples over all partitions.
   *
   * @return the total
   */
  public long totalSamples() {
    return partitions.stream().mapToLong(PartitionStatistics::totalSamples).sum();
  }

  /**
   * The number of samples with at least one field produced, over all partitions.
   *
   * @return the total
   */
  public long totalProducedSamples() {
    return partitions.stream().mapToLong(PartitionStatistics::producedSamples).sum();
  }
}
