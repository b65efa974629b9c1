package org.transferqueue.objectstore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.Defaults;

/**
 * Settings of a {@link MooncakeKvClient}: how writes are pinned, how a call is cut into store calls
 * and how transient failures are retried. Immutable; validated once by its constructor. The system
 * layer maps {@code backend.MooncakeStore} onto it; the defaults are the ones {@code
 * config/tq.yaml} documents ({@link Defaults}).
 *
 * @param hardPin whether every write is hard-pinned (never evicted)
 * @param batchSizeLimit keys per store call and per worker task; at least 1
 * @param maxBatchWorkerThreads parallel batch tasks per put or get; at least 1
 * @param maxRetries retries of keys that failed with a transient error code; at least 0
 * @param retryDelay pause before the second and later retries; zero or positive
 */
public record KvClientConfig(
    boolean hardPin,
    int batchSizeLimit,
    int maxBatchWorkerThreads,
    int maxRetries,
    Duration retryDelay) {

  /** Default of {@link #hardPin()}: on, as Mooncake without an SSD tier. */
  public static final boolean HARD_PIN_DEFAULT = true;

  /**
   * Validates every component.
   *
   * @throws TqException with {@code INVALID_CONFIGURATION} naming each invalid component and value
   */
  public KvClientConfig {
    List<String> problems = new ArrayList<>();
    if (batchSizeLimit < 1) {
      problems.add("batchSizeLimit=" + batchSizeLimit + " < 1");
    }
    if (maxBatchWorkerThreads < 1) {
      problems.add("maxBatchWorkerThreads=" + maxBatchWorkerThreads + " < 1");
    }
    if (maxRetries < 0) {
      problems.add("maxRetries=" + maxRetries + " < 0");
    }
    if (retryDelay == null || retryDelay.isNegative()) {
      problems.add("retryDelay=" + retryDelay + " must be zero or positive");
    }
    if (!problems.isEmpty()) {
      throw new TqException(
          ErrorCode.INVALID_CONFIGURATION,
          "invalid key-value client configuration: " + String.join("; ", problems));
    }
  }

  /**
   * The defaults: hard pin, {@value Defaults#BATCH_SIZE_LIMIT} keys per call, {@value
   * Defaults#MAX_BATCH_WORKER_THREADS} parallel tasks, {@value Defaults#MAX_RETRIES} retries one
   * second apart.
   *
   * @return the default settings
   */
  public static KvClientConfig defaults() {
    return builder().build();
  }

  /**
   * Starts a builder holding the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link KvClientConfig}; {@link #build()} validates. Not thread-safe. */
  public static final class Builder {
    private boolean hardPin = HARD_PIN_DEFAULT;
    private int batchSizeLimit = Defaults.BATCH_SIZE_LIMIT;
    private int maxBatchWorkerThreads = Defaults.MAX_BATCH_WORKER_THREADS;
    private int maxRetries = Defaults.MAX_RETRIES;
    private Duration retryDelay = Defaults.RETRY_DELAY;

    private Builder() {}

    /**
     * Sets {@link KvClientConfig#hardPin()}.
     *
     * @param hardPin whether every write is hard-pinned
     * @return this builder
     */
    public Builder hardPin(boolean hardPin) {
      this.hardPin = hardPin;
      return this;
    }

    /**
     * Sets {@link KvClientConfig#batchSizeLimit()}.
     *
     * @param batchSizeLimit at least 1
     * @return this builder
     */
    public Builder batchSizeLimit(int batchSizeLimit) {
      this.batchSizeLimit = batchSizeLimit;
      return this;
    }

    /**
     * Sets {@link KvClientConfig#maxBatchWorkerThreads()}.
     *
     * @param maxBatchWorkerThreads at least 1
     * @return this builder
     */
    public Builder maxBatchWorkerThreads(int maxBatchWorkerThreads) {
      this.maxBatchWorkerThreads = maxBatchWorkerThreads;
      return this;
    }

    /**
     * Sets {@link KvClientConfig#maxRetries()}.
     *
     * @param maxRetries at least 0
     * @return this builder
     */
    public Builder maxRetries(int maxRetries) {
      this.maxRetries = maxRetries;
      return this;
    }

    /**
     * Sets {@link KvClientConfig#retryDelay()}.
     *
     * @param retryDelay zero or positive
     * @return this builder
     */
    public Builder retryDelay(Duration retryDelay) {
      this.retryDelay = Objects.requireNonNull(retryDelay, "retryDelay");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the settings
     * @throws TqException with {@code INVALID_CONFIGURATION} naming each invalid value
     */
    public KvClientConfig build() {
      return new KvClientConfig(
          hardPin, batchSizeLimit, maxBatchWorkerThreads, maxRetries, retryDelay);
    }
  }
}
