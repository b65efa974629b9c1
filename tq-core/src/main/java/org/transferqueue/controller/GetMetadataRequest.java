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
 *     force fetch; with a token budget, the most samples the batch may hold (null: no limit)
 * @param samplingConfig the caller's rank, batch index and sampler options; null for none (the
 *     controller always gives the sampler its own partition id and task name)
 * @param timeout the longest wait of a blocking fetch; null for the configured default
 * @param tokenBudget fetch only: fill the batch up to this many tokens instead of a number of
 *     samples, each sample counting the tokens its {@link
 *     org.transferqueue.sampler.TokenBudgetSampler#LENGTH_TAG} tag names (upstream's {@code
 *     get_meta(..., token_budget=N)}; see {@link org.transferqueue.sampler.TokenBudgetSampler});
 *     null for a fetch by count
 */
public record GetMetadataRequest(
    FetchMode mode,
    String partitionId,
    List<String> fields,
    String taskName,
    Integer batchSize,
    SamplingConfig samplingConfig,
    Duration timeout,
    Long tokenBudget) {

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
        if (batchSize == null && tokenBudget == null) {
          throw invalid("must provide batch_size in fetch mode (or a token_budget)");
        }
        if (batchSize != null) {
          checkBatchSize(batchSize);
        }
        if (fields.isEmpty()) {
          throw invalid("must provide at least one field in fetch mode");
        }
      }
      case FORCE_FETCH -> {}
    }
    if (tokenBudget != null) {
      if (mode != FetchMode.FETCH) {
        throw invalid("token_budget=" + tokenBudget + " is only for fetch mode, not " + mode);
      }
      if (tokenBudget < 1) {
        throw invalid("token_budget=" + tokenBudget + " < 1");
      }
    }
    samplingConfig = samplingConfig == null ? SamplingConfig.NONE : samplingConfig;
    if (timeout != null && timeout.isNegative()) {
      throw invalid("timeout=" + timeout + " < 0");
    }
  }

  /**
   * A request without a token budget.
   *
   * @param mode what is asked for
   * @param partitionId the partition
   * @param fields the fields of interest
   * @param taskName the consuming task (fetch only)
   * @param batchSize the number of samples; null for force fetch
   * @param samplingConfig the caller's rank, batch index and sampler options, or null
   * @param timeout the longest wait of a blocking fetch, or null for the default
   */
  public GetMetadataRequest(
      FetchMode mode,
      String partitionId,
      List<String> fields,
      String taskName,
      Integer batchSize,
      SamplingConfig samplingConfig,
      Duration timeout) {
    this(mode, partitionId, fields, taskName, batchSize, samplingConfig, timeout, null);
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
   * A fetch of ready samples for a task up to {@code tokenBudget} tokens (upstream's {@code
   * get_meta(..., token_budget=N)}): samples are taken in index order while their lengths (the
   * {@link org.transferqueue.sampler.TokenBudgetSampler#LENGTH_TAG} tag) fit; a sample longer than
   * the budget comes alone. See {@link org.transferqueue.sampler.TokenBudgetSampler}.
   *
   * <pre>{@code
   * BatchMeta batch = client.getMeta(
   *     GetMetadataRequest.fetchTokens("train", List.of("input_ids"), "actor", 4096));
   * }</pre>
   *
   * @param partitionId the partition
   * @param fields the fields that must be produced
   * @param taskName the consuming task
   * @param tokenBudget the most tokens of the batch, at least 1
   * @return the request (no limit on the number of samples; see {@link #withBatchSize})
   */
  public static GetMetadataRequest fetchTokens(
      String partitionId, List<String> fields, String taskName, long tokenBudget) {
    return new GetMetadataRequest(
        FetchMode.FETCH,
        partitionId,
        fields,
        taskName,
        null,
        SamplingConfig.NONE,
        null,
        tokenBudget);
  }

  /**
   * This request with another batch size (with a token budget: the most samples of the batch).
   *
   * @param size the batch size, or null for none (a token-budget fetch only)
   * @return a new request
   */
  public GetMetadataRequest withBatchSize(Integer size) {
    return new GetMetadataRequest(
        mode, partitionId, fields, taskName, size, samplingConfig, timeout, tokenBudget);
  }

  /**
   * This request with a token budget (fetch only).
   *
   * @param budget the most tokens of the batch, at least 1, or null for a fetch by count
   * @return a new request
   */
  public GetMetadataRequest withTokenBudget(Long budget) {
    return new GetMetadataRequest(
        mode, partitionId, fields, taskName, batchSize, samplingConfig, timeout, budget);
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
    return new GetMetadataRequest(
        mode, partitionId, fields, taskName, batchSize, config, timeout, tokenBudget);
  }

  /**
   * This request with a blocking-fetch timeout.
   *
   * @param wait the longest wait
   * @return a new request
   */
  public GetMetadataRequest withTimeout(Duration wait) {
    return new GetMetadataRequest(
        mode, partitionId, fields, taskName, batchSize, samplingConfig, wait, tokenBudget);
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
        + (tokenBudget == null ? "" : " token_budget=" + tokenBudget)
        + "]";
  }
}
