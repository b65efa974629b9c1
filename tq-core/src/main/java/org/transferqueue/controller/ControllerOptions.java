package org.transferqueue.controller;

import java.time.Duration;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.Defaults;

/**
 * Settings of a {@link Controller}; immutable, validated once by {@link Builder#build()}.
 *
 * @param preallocSampleNum indexes reserved for a partition when it is created (0 = none)
 * @param pollingMode when true, a fetch that cannot be served returns an empty batch at once;
 *     otherwise it waits until data is ready or its deadline passes
 * @param fetchTimeout how long a blocking fetch waits when the request names no timeout
 * @param checkInterval the longest a waiting fetch sleeps before it asks the sampler again although
 *     nothing changed; every change of the controller's state wakes it at once, the interval is for
 *     samplers whose answer depends on time ({@code controller.get_metadata_check_interval})
 */
public record ControllerOptions(
    int preallocSampleNum, boolean pollingMode, Duration fetchTimeout, Duration checkInterval) {
  /** Configuration key of the pre-allocation knob (env: {@code TQ_PRE_ALLOC_SAMPLE_NUM}). */
  public static final String PREALLOC_SAMPLE_NUM_PROP_NAME = "controller.prealloc_sample_num";

  /** Default number of indexes reserved per new partition, as upstream. */
  public static final int PREALLOC_SAMPLE_NUM_DEFAULT = Defaults.PREALLOC_SAMPLE_NUM;

  /** Configuration key of the polling mode. */
  public static final String POLLING_MODE_PROP_NAME = "controller.polling_mode";

  /** Default polling mode, as upstream. */
  public static final boolean POLLING_MODE_DEFAULT = Defaults.POLLING_MODE;

  /**
   * Configuration key of the blocking-fetch timeout (env: {@code
   * TQ_CONTROLLER_GET_METADATA_TIMEOUT}).
   */
  public static final String FETCH_TIMEOUT_PROP_NAME = "controller.get_metadata_timeout";

  /**
   * Default wait of a blocking fetch that names no timeout: one second, as upstream and {@code
   * config/tq.yaml}. The wait ends as soon as enough data is produced.
   */
  public static final Duration FETCH_TIMEOUT_DEFAULT = Defaults.GET_METADATA_TIMEOUT;

  /** Longest accepted blocking-fetch timeout. */
  public static final Duration FETCH_TIMEOUT_MAX = Duration.ofHours(24);

  /** Configuration key of the re-check interval of a waiting fetch. */
  public static final String CHECK_INTERVAL_PROP_NAME = "controller.get_metadata_check_interval";

  /** Default re-check interval of a waiting fetch, as upstream. */
  public static final Duration CHECK_INTERVAL_DEFAULT = Defaults.GET_METADATA_CHECK_INTERVAL;

  /** Validates the values. */
  public ControllerOptions {
    if (preallocSampleNum < 0) {
      throw invalid(PREALLOC_SAMPLE_NUM_PROP_NAME, preallocSampleNum + " < 0");
    }
    Objects.requireNonNull(fetchTimeout, FETCH_TIMEOUT_PROP_NAME);
    if (fetchTimeout.isNegative() || fetchTimeout.compareTo(FETCH_TIMEOUT_MAX) > 0) {
      throw invalid(
          FETCH_TIMEOUT_PROP_NAME, fetchTimeout + " outside [0, " + FETCH_TIMEOUT_MAX + "]");
    }
    Objects.requireNonNull(checkInterval, CHECK_INTERVAL_PROP_NAME);
    if (checkInterval.isNegative() || checkInterval.isZero()) {
      throw invalid(CHECK_INTERVAL_PROP_NAME, checkInterval + " is not positive");
    }
  }

  /**
   * The default configuration.
   *
   * @return pre-allocation 1, blocking mode, 1 s fetch timeout, 5 s re-check interval
   */
  public static ControllerOptions defaults() {
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

  private static TqException invalid(String key, String what) {
    return new TqException(ErrorCode.INVALID_CONFIGURATION, key + "=" + what);
  }

  /** Builds a {@link ControllerOptions}; not thread-safe. */
  public static final class Builder {
    private int preallocSampleNum = PREALLOC_SAMPLE_NUM_DEFAULT;
    private boolean pollingMode = POLLING_MODE_DEFAULT;
    private Duration fetchTimeout = FETCH_TIMEOUT_DEFAULT;
    private Duration checkInterval = CHECK_INTERVAL_DEFAULT;

    private Builder() {}

    /**
     * Sets the number of indexes reserved per new partition.
     *
     * @param n at least 0
     * @return this builder
     */
    public Builder preallocSampleNum(int n) {
      this.preallocSampleNum = n;
      return this;
    }

    /**
     * Sets polling (true) or blocking (false) fetches.
     *
     * @param polling the mode
     * @return this builder
     */
    public Builder pollingMode(boolean polling) {
      this.pollingMode = polling;
      return this;
    }

    /**
     * Sets the default wait of a blocking fetch.
     *
     * @param timeout between 0 and {@link #FETCH_TIMEOUT_MAX}
     * @return this builder
     */
    public Builder fetchTimeout(Duration timeout) {
      this.fetchTimeout = timeout;
      return this;
    }

    /**
     * Sets the longest a waiting fetch sleeps before asking the sampler again.
     *
     * @param interval positive
     * @return this builder
     */
    public Builder checkInterval(Duration interval) {
      this.checkInterval = interval;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws TqException {@link ErrorCode#INVALID_CONFIGURATION} naming the key and value
     */
    public ControllerOptions build() {
      return new ControllerOptions(preallocSampleNum, pollingMode, fetchTimeout, checkInterval);
    }
  }
}
