package org.transferqueue.controller;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.MetaValues;

/**
 * A request to clear individual samples, given as aligned (global index, partition) pairs.
 *
 * <p>Pairs naming unknown partitions, indexes that are not active in their partition, or samples
 * whose generation is not the index's current one (metadata from before an earlier clear), are
 * ignored, which makes the request idempotent and keeps a stale clear away from the sample that
 * reuses an index.
 *
 * @param indexes the global indexes
 * @param partitionIds the partition of each index
 * @param clearConsumption whether consumption flags of the cleared samples are reset too
 * @param generations the generation of each sample, aligned with {@code indexes} ({@link
 *     BatchMeta#UNKNOWN_GENERATION} where not known: that pair is not checked)
 */
public record ClearSamplesRequest(
    List<Long> indexes,
    List<String> partitionIds,
    boolean clearConsumption,
    List<Long> generations) {
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
    generations = MetaValues.alignedGenerations(generations, indexes.size(), "ClearSamplesRequest");
  }

  /**
   * A request whose samples' generations are not known: every pair is cleared whatever sample now
   * holds its index.
   *
   * @param indexes the global indexes
   * @param partitionIds the partition of each index
   * @param clearConsumption whether consumption flags of the cleared samples are reset too
   */
  public ClearSamplesRequest(
      List<Long> indexes, List<String> partitionIds, boolean clearConsumption) {
    this(indexes, partitionIds, clearConsumption, null);
  }

  /**
   * Clears the samples of a batch, each checked against its generation.
   *
   * @param meta the samples
   * @param clearConsumption whether consumption flags of the cleared samples are reset too
   * @return the request
   */
  public static ClearSamplesRequest of(BatchMeta meta, boolean clearConsumption) {
    long[] generations = meta.generationArray();
    List<Long> boxed = new ArrayList<>(generations.length);
    for (long generation : generations) {
      boxed.add(generation);
    }
    return new ClearSamplesRequest(
        meta.globalIndexes(), meta.partitionIds(), clearConsumption, boxed);
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
