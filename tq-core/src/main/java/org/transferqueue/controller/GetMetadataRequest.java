package org.transferqueue.controller;

import java.time.Duration;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.sampler.SamplingConfig;

/**
 * A request for a batch's metadata in one of the {@link FetchMode}s.
 *
 * <p>Validation happens in the compact constructor, before the controller sees the request, so a
 * bad request never changes state. Names follow {@link Names}: non-empty, valid Unicode.
 *
 * @param mode what is asked for
 * @param partitionId the partition; non-empty
 * @param fields the fields of interest; non-null, each non-empty (fetch needs at least one)
 * @param taskName the consuming task (fetch only; non-empty when given)
 * @param batchSize the number of samples (insert and fetch; 1 to {@link #MAX_BATCH_SIZE}); null for
 *     force fetch
 * @param samplingConfig the caller's rank, batch index and sampler options; null for none (the
 *     controller always gives the sampler its own partition id and task name)
 * @param timeout the longest wait of a blocking fetch; null for the configured default
 */
public record GetMetadataRequest(
    FetchMode mode,
    String partitionId,
    List<String> fields,
    String taskName,
    Integer batchSize,
    SamplingConfig samplingConfig,
    Duration timeout) {

  /**
   * The largest batch of one insert or fetch, 2^24 samples (the storage units' per-request row
   * limit): one request may not make the controller allocate an unbounded number of indexes.
   */
  public static final int MAX_BATCH_SIZE = 1 << 24;

  /** Validates and copies the arguments. */
  public GetMetadataRequest {
    if (mode == null) {
      throw invalid("Invalid mode: null");
    }
    Names.checkPartitionId(partitionId);
    if (fields == null) {
      throw invalid(
          mode == FetchMode.INSERT
              ? "Must provide data_fields for inserting new data"
              : "data_fields must not be null");
    }
    Names.checkFieldNames(fields);
    fields = List.copyOf(fields);
    if (taskName != null) {
      Names.checkTaskName(taskName);
    }
    switch (mode) {
      case INSERT -> {
        if (batchSize == null) {
          throw invalid("must provide batch_size for inserting new data");
        }
        checkBatchSize(batchSize);
      }
      case FETCH -> {
        if (taskName == null) {
          throw invalid("must provide task_name in fetch mode: task_name=" + taskName);
        }
        if (batchSize == null) {
          throw invalid("must provide batch_size in fetch mode");
        }
        checkBatchSize(batchSize);
        if (fields.isEmpty()) {
          throw invalid("must provide at least one field in fetch mode");
        }
      }
      case FORCE_FETCH -> {}
    }
    samplingConfig = samplingConfig == null ? SamplingConfig.NONE : samplingConfig;
    if (timeout != null && timeout.isNegative()) {
      throw invalid("timeout=" + timeout + " < 0");
    }
  }

  /**
   * An insert of {@code batchSize} new samples.
   *
   * @param partitionId the partition (created if absent)
   * @param fields the fields the producer will write
   * @param batchSize the number of samples, at least 1
   * @return the request
   */
  public static GetMetadataRequest insert(String partitionId, List<String> fields, int batchSize) {
    return new GetMetadataRequest(
        FetchMode.INSERT, partitionId, fields, null, batchSize, SamplingConfig.NONE, null);
  }

  /**
   * A fetch of {@code batchSize} ready samples for a task.
   *
   * @param partitionId the partition
   * @param fields the fields that must be produced
   * @param taskName the consuming task
   * @param batchSize the number of samples, at least 1
   * @return the request
   */
  public static GetMetadataRequest fetch(
      String partitionId, List<String> fields, String taskName, int batchSize) {
    return new GetMetadataRequest(
        FetchMode.FETCH, partitionId, fields, taskName, batchSize, SamplingConfig.NONE, null);
  }

  /**
   * A force fetch of every sample in the partition.
   *
   * @param partitionId the partition
   * @param fields the fields of interest
   * @return the request
   */
  public static GetMetadataRequest forceFetch(String partitionId, List<String> fields) {
    return new GetMetadataRequest(
        FetchMode.FORCE_FETCH, partitionId, fields, null, null, SamplingConfig.NONE, null);
  }

  /**
   * This request with sampler settings.
   *
   * @param config the caller's rank, batch index and options
   * @return a new request
   */
  public GetMetadataRequest withSamplingConfig(SamplingConfig config) {
    return new GetMetadataRequest(mode, partitionId, fields, taskName, batchSize, config, timeout);
  }

  /**
   * This request with a blocking-fetch timeout.
   *
   * @param wait the longest wait
   * @return a new request
   */
  public GetMetadataRequest withTimeout(Duration wait) {
    return new GetMetadataRequest(
        mode, partitionId, fields, taskName, batchSize, samplingConfig, wait);
  }

  private static void checkBatchSize(int batchSize) {
    if (batchSize < 1) {
      throw invalid("batch_size=" + batchSize + " < 1");
    }
    if (batchSize > MAX_BATCH_SIZE) {
      throw invalid("batch_size=" + batchSize + " > max=" + MAX_BATCH_SIZE);
    }
  }

  private static TqException invalid(String message) {
    return new TqException(ErrorCode.INVALID_ARGUMENT, message);
  }

  @Override
  public String toString() {
    return "GetMetadataRequest["
        + mode
        + " partition="
        + partitionId
        + " fields="
        + fields
        + " task="
        + taskName
        + " batch="
        + batchSize
        + "]";
  }
}
