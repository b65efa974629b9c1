package org.transferqueue.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The settings of a {@link StreamingLoader}, validated once when they are made: what to read
 * (partition, task, fields), how (batch and micro-batch size, rank, sampler options, hooks), how
 * far ahead (prefetch, workers), when to ask again (poll interval), when to end (termination) and
 * whether deliveries must be acknowledged. {@link StreamingLoader#builder} builds them together
 * with the loader; {@link #builder()} builds them alone, for {@link StreamingLoader#of}.
 *
 * <pre>{@code
 * LoaderSettings settings = LoaderSettings.builder()
 *     .partition("train").task("update_actor").fields("input_ids")
 *     .batchSize(8).microBatchSize(2).build();
 * try (StreamingLoader loader = StreamingLoader.of(client, settings)) { ... }
 * }</pre>
 *
 * @param partitionId the partition read first (non-empty)
 * @param taskName the consuming task (non-empty)
 * @param fields the fields read, at least one, each non-empty
 * @param batchSize samples per global batch, at least 1
 * @param microBatchSize rows per micro-batch, in {@code [1, batchSize]}
 * @param dpRank the data-parallel rank sent to the sampler, at least 0
 * @param termination when the iteration ends by itself
 * @param prefetch global batches fetched ahead of the consumer, at least 1
 * @param fetchWorkers background virtual threads that fetch and read, at least 1
 * @param pollInterval the wait before asking again for a batch that was not ready, positive
 * @param ackTimeout the acknowledgement deadline of a delivery, positive; null when deliveries need
 *     no acknowledgement
 * @param samplingOptions extra sampler options sent with every fetch
 * @param clock the time source of poll and acknowledgement deadlines
 * @param fetchHandler the hook that replaces the fetch of a global batch, or null
 * @param processHandler the hook that replaces the split into micro-batches, or null
 */
public record LoaderSettings(
    String partitionId,
    String taskName,
    List<String> fields,
    int batchSize,
    int microBatchSize,
    int dpRank,
    Termination termination,
    int prefetch,
    int fetchWorkers,
    Duration pollInterval,
    Duration ackTimeout,
    Map<String, Object> samplingOptions,
    Clock clock,
    StreamingLoader.FetchBatchHandler fetchHandler,
    StreamingLoader.ProcessBatchHandler processHandler) {

  /**
   * Validates the settings.
   *
   * @throws TqException with {@code INVALID_ARGUMENT} naming the first invalid setting
   */
  public LoaderSettings {
    if (partitionId == null || partitionId.isEmpty()) {
      throw invalid("partition_id must be non-empty: " + partitionId);
    }
    if (taskName == null || taskName.isEmpty()) {
      throw invalid("task_name must be non-empty: " + taskName);
    }
    if (fields == null || fields.isEmpty() || fields.stream().anyMatch(f -> f.isEmpty())) {
      throw invalid("data_fields must be a non-empty list of non-empty names: " + fields);
    }
    if (batchSize < 1) {
      throw invalid("batch_size=" + batchSize + " < 1");
    }
    if (microBatchSize < 1 || microBatchSize > batchSize) {
      throw invalid(
          "micro_batch_size=" + microBatchSize + " must be in [1, batch_size=" + batchSize + "]");
    }
    if (dpRank < 0) {
      throw invalid("dp_rank=" + dpRank + " must be greater than or equal to 0");
    }
    if (termination == null) {
      throw invalid("termination must not be null");
    }
    if (prefetch < 1) {
      throw invalid("prefetch=" + prefetch + " < 1");
    }
    if (fetchWorkers < 1) {
      throw invalid("fetch_workers=" + fetchWorkers + " < 1");
    }
    if (pollInterval == null || pollInterval.isNegative() || pollInterval.isZero()) {
      throw invalid("poll_interval=" + pollInterval + " must be positive");
    }
    if (ackTimeout != null && (ackTimeout.isNegative() || ackTimeout.isZero())) {
      throw invalid("ack_timeout=" + ackTimeout + " must be positive");
    }
    fields = List.copyOf(fields);
    samplingOptions = Map.copyOf(Objects.requireNonNull(samplingOptions, "samplingOptions"));
    Objects.requireNonNull(clock, "clock");
  }

  private static TqException invalid(String message) {
    return new TqException(ErrorCode.INVALID_ARGUMENT, message);
  }

  /**
   * Starts building settings, with every default.
   *
   * @return a builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds {@link LoaderSettings}; {@link #build()} validates them all. */
  public static final class Builder extends AbstractBuilder<Builder> {
    private Builder() {}

    @Override
    Builder self() {
      return this;
    }

    /**
     * Validates the settings.
     *
     * @return the settings
     * @throws TqException with {@code INVALID_ARGUMENT} naming the first invalid setting
     */
    public LoaderSettings build() {
      return settings();
    }
  }

  /**
   * The setters of the loader's settings, shared by {@link LoaderSettings.Builder} and {@link
   * StreamingLoader.Builder}; each returns its builder.
   *
   * @param <B> the concrete builder
   */
  public abstract static class AbstractBuilder<B extends AbstractBuilder<B>> {
    private String partitionId;
    private String taskName;
    private List<String> fields;
    private int batchSize = 1;
    private int microBatchSize = 1;
    private int dpRank;
    private Termination termination = Termination.INFINITE;
    private int prefetch = 1;
    private int fetchWorkers = 1;
    private Duration pollInterval = StreamingLoader.POLL_INTERVAL_DEFAULT;
    private Duration ackTimeout;
    private Map<String, Object> samplingOptions = Map.of();
    private Clock clock = Clock.SYSTEM;
    private StreamingLoader.FetchBatchHandler fetchHandler;
    private StreamingLoader.ProcessBatchHandler processHandler;

    AbstractBuilder() {}

    /** This builder, as its concrete type. */
    abstract B self();

    /**
     * Sets the partition to read (required).
     *
     * @param id the partition id
     * @return this builder
     */
    public B partition(String id) {
      this.partitionId = id;
      return self();
    }

    /**
     * Sets the consuming task, the identity of consumption tracking (required).
     *
     * @param name the task name
     * @return this builder
     */
    public B task(String name) {
      this.taskName = name;
      return self();
    }

    /**
     * Sets the fields to read; a sample is fetched only when all of them are produced (required).
     *
     * @param names at least one field name
     * @return this builder
     */
    public B fields(String... names) {
      this.fields = names == null ? null : List.of(names);
      return self();
    }

    /**
     * Sets the fields to read.
     *
     * @param names at least one field name
     * @return this builder
     */
    public B fields(List<String> names) {
      this.fields = names == null ? null : List.copyOf(names);
      return self();
    }

    /**
     * Sets the samples per fetch (a global batch); default 1.
     *
     * @param n at least 1
     * @return this builder
     */
    public B batchSize(int n) {
      this.batchSize = n;
      return self();
    }

    /**
     * Sets the rows per micro-batch; default 1.
     *
     * @param n at least 1 and at most the batch size
     * @return this builder
     */
    public B microBatchSize(int n) {
      this.microBatchSize = n;
      return self();
    }

    /**
     * Sets the data-parallel rank sent to the sampler; default 0.
     *
     * @param rank at least 0
     * @return this builder
     */
    public B dpRank(int rank) {
      this.dpRank = rank;
      return self();
    }

    /**
     * Sets when the iteration ends by itself; default {@link Termination#INFINITE}.
     *
     * @param mode the mode
     * @return this builder
     */
    public B termination(Termination mode) {
      this.termination = mode;
      return self();
    }

    /**
     * Sets how many global batches may be fetched (or in flight) ahead of the consumer; default 1.
     *
     * @param batches at least 1
     * @return this builder
     */
    public B prefetch(int batches) {
      this.prefetch = batches;
      return self();
    }

    /**
     * Sets the number of background virtual threads that fetch and read batches; default 1.
     *
     * @param n at least 1
     * @return this builder
     */
    public B fetchWorkers(int n) {
      this.fetchWorkers = n;
      return self();
    }

    /**
     * Sets the wait before a batch index that could not be served is requested again; default
     * {@link StreamingLoader#POLL_INTERVAL_DEFAULT}.
     *
     * @param interval positive
     * @return this builder
     */
    public B pollInterval(Duration interval) {
      this.pollInterval = interval;
      return self();
    }

    /**
     * Enables acknowledgements: a delivered micro-batch not {@link MicroBatch#ack() acknowledged}
     * within {@code timeout} is delivered again. Off by default.
     *
     * @param timeout positive
     * @return this builder
     */
    public B ackTimeout(Duration timeout) {
      this.ackTimeout = timeout;
      return self();
    }

    /**
     * Sets extra sampler options sent with every fetch (besides {@code dp_rank} and {@code
     * batch_index}).
     *
     * @param options the options; copied
     * @return this builder
     */
    public B samplingOptions(Map<String, ?> options) {
      this.samplingOptions = Map.copyOf(Objects.requireNonNull(options, "options"));
      return self();
    }

    /**
     * Replaces the fetch of each global batch (upstream's {@code fetch_batch_fn}); see {@link
     * StreamingLoader} and {@link StreamingLoader.FetchBatchHandler}. Default: {@code
     * client.getMeta(request)}.
     *
     * <pre>{@code
     * .fetchBatch((client, request) -> BatchPart.of(client.getMeta(request.withTokenBudget(4096L))))
     * }</pre>
     *
     * @param handler the hook
     * @return this builder
     */
    public B fetchBatch(StreamingLoader.FetchBatchHandler handler) {
      this.fetchHandler = Objects.requireNonNull(handler, "handler");
      return self();
    }

    /**
     * Replaces the split of each global batch into micro-batches (upstream's {@code
     * process_batch_fn}); see the class comment and {@link StreamingLoader.ProcessBatchHandler}.
     * Default: consecutive rows, {@code microBatchSize} at a time.
     *
     * <pre>{@code
     * .processBatch((rows, meta, micro) -> List.of(new BatchPart(meta, rows.selectFields("x"))))
     * }</pre>
     *
     * @param handler the hook
     * @return this builder
     */
    public B processBatch(StreamingLoader.ProcessBatchHandler handler) {
      this.processHandler = Objects.requireNonNull(handler, "handler");
      return self();
    }

    /**
     * Sets the time source of poll and acknowledgement deadlines (for tests).
     *
     * @param source the clock
     * @return this builder
     */
    public B clock(Clock source) {
      this.clock = Objects.requireNonNull(source, "clock");
      return self();
    }

    /** The settings set so far, validated. */
    final LoaderSettings settings() {
      return new LoaderSettings(
          partitionId,
          taskName,
          fields,
          batchSize,
          microBatchSize,
          dpRank,
          termination,
          prefetch,
          fetchWorkers,
          pollInterval,
          ackTimeout,
          samplingOptions,
          clock,
          fetchHandler,
          processHandler);
    }
  }
}
