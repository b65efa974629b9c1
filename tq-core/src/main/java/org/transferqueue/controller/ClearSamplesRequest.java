package org.transferqueue.controller;

import java.util.Collections;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A request to clear individual samples, given as aligned (global index, partition) pairs.
 *
 * <p>Pairs naming unknown partitions, or indexes that are not active in their partition, are
 * ignored, which makes the request idempotent.
 *
 * @param indexes the global indexes
 * @param partitionIds the partition of each index
 * @param clearConsumption whether consumption flags of the cleared samples are reset too
 */
public record ClearSamplesRequest(
    List<Long> indexes, List<String> partitionIds, boolean clearConsumption) {
  /** Validates and copies the arguments. */
  public ClearSamplesRequest {
    if (indexes == null || partitionIds == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "global_indexes and partition_ids cannot be None");
    }
    if (indexes.size() != partitionIds.size()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "global_indexes and partition_ids must have the same length: "
              + indexes.size()
              + " != "
              + partitionIds.size());
    }
    indexes = List.copyOf(indexes);
    partitionIds = List.copyOf(partitionIds);
  }

  /**
   * Clears samples of one partition, resetting their consumption.
   *
   * @param partitionId the partition
   * @param indexes the samples
   * @return the request
   */
  public static ClearSamplesRequest of(String partitionId, List<Long> indexes) {
    return new ClearSamplesRequest(indexes, Collections.nCopies(indexes.size(), partitionId), true);
  }
}
