package org.transferqueue.config;

import java.time.Duration;
import java.util.Objects;

/**
 * Client settings (YAML section {@code client}), including the streaming loader.
 *
 * @param numThreads threads used to (de)serialise batches in clients and storage units ({@code
 *     TQ_NUM_THREADS})
 * @param requestTimeout deadline of every client call to the controller
 * @param emptyBatchSleepInterval pause of the streaming loader after an empty fetch ({@code
 *     TQ_STREAMING_DATASET_EMPTY_BATCH_SLEEP_INTERVAL})
 */
public record ClientConfig(
    int numThreads, Duration requestTimeout, Duration emptyBatchSleepInterval) {

  /** Key of {@link #numThreads()}. */
  public static final String NUM_THREADS_PROP_NAME = "client.num_threads";

  /** Default of {@link #numThreads()}. */
  public static final int NUM_THREADS_DEFAULT = 8;

  /** Key of {@link #requestTimeout()}. */
  public static final String REQUEST_TIMEOUT_PROP_NAME = "client.request_timeout";

  /** Default of {@link #requestTimeout()}. */
  public static final Duration REQUEST_TIMEOUT_DEFAULT = Duration.ofSeconds(30);

  /** Key of {@link #emptyBatchSleepInterval()}. */
  public static final String EMPTY_BATCH_SLEEP_INTERVAL_PROP_NAME =
      "client.empty_batch_sleep_interval";

  /** Default of {@link #emptyBatchSleepInterval()}. */
  public static final Duration EMPTY_BATCH_SLEEP_INTERVAL_DEFAULT = Duration.ofSeconds(1);

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public ClientConfig {
    Problems p = new Problems();
    p.atLeast(NUM_THREADS_PROP_NAME, numThreads, 1);
    p.positive(REQUEST_TIMEOUT_PROP_NAME, requestTimeout);
    p.positive(EMPTY_BATCH_SLEEP_INTERVAL_PROP_NAME, emptyBatchSleepInterval);
    p.throwIfAny();
  }

  /**
   * A builder holding the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Mutable builder of {@link ClientConfig}; not thread-safe. */
  public static final class Builder {
    private int numThreads = NUM_THREADS_DEFAULT;
    private Duration requestTimeout = REQUEST_TIMEOUT_DEFAULT;
    private Duration emptyBatchSleepInterval = EMPTY_BATCH_SLEEP_INTERVAL_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #NUM_THREADS_PROP_NAME}.
     *
     * @param numThreads at least 1
     * @return this builder
     */
    public Builder numThreads(int numThreads) {
      this.numThreads = numThreads;
      return this;
    }

    /**
     * Sets {@value #REQUEST_TIMEOUT_PROP_NAME}.
     *
     * @param requestTimeout positive
     * @return this builder
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
      return this;
    }

    /**
     * Sets {@value #EMPTY_BATCH_SLEEP_INTERVAL_PROP_NAME}.
     *
     * @param emptyBatchSleepInterval positive
     * @return this builder
     */
    public Builder emptyBatchSleepInterval(Duration emptyBatchSleepInterval) {
      this.emptyBatchSleepInterval =
          Objects.requireNonNull(emptyBatchSleepInterval, "emptyBatchSleepInterval");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public ClientConfig build() {
      return new ClientConfig(numThreads, requestTimeout, emptyBatchSleepInterval);
    }
  }
}
