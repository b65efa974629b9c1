package org.transferqueue.config;

import java.time.Duration;
import java.util.Objects;

/**
 * Logging settings (YAML section {@code logging}).
 *
 * @param level the level of the library loggers ({@code TQ_LOGGING_LEVEL})
 * @param perfLogFlushInterval how often request statistics are logged when metrics are disabled
 *     ({@code TQ_PERF_LOG_FLUSH_INTERVAL})
 */
public record LoggingConfig(System.Logger.Level level, Duration perfLogFlushInterval) {

  /** Key of {@link #level()}. */
  public static final String LEVEL_PROP_NAME = "logging.level";

  /** Default of {@link #level()}. */
  public static final System.Logger.Level LEVEL_DEFAULT = System.Logger.Level.WARNING;

  /** Key of {@link #perfLogFlushInterval()}. */
  public static final String PERF_LOG_FLUSH_INTERVAL_PROP_NAME = "logging.perf_log_flush_interval";

  /** Default of {@link #perfLogFlushInterval()}. */
  public static final Duration PERF_LOG_FLUSH_INTERVAL_DEFAULT = Duration.ofSeconds(300);

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public LoggingConfig {
    Problems p = new Problems();
    p.notNull(LEVEL_PROP_NAME, level);
    p.positive(PERF_LOG_FLUSH_INTERVAL_PROP_NAME, perfLogFlushInterval);
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

  /** Mutable builder of {@link LoggingConfig}; not thread-safe. */
  public static final class Builder {
    private System.Logger.Level level = LEVEL_DEFAULT;
    private Duration perfLogFlushInterval = PERF_LOG_FLUSH_INTERVAL_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #LEVEL_PROP_NAME}.
     *
     * @param level the level
     * @return this builder
     */
    public Builder level(System.Logger.Level level) {
      this.level = Objects.requireNonNull(level, "level");
      return this;
    }

    /**
     * Sets {@value #PERF_LOG_FLUSH_INTERVAL_PROP_NAME}.
     *
     * @param perfLogFlushInterval positive
     * @return this builder
     */
    public Builder perfLogFlushInterval(Duration perfLogFlushInterval) {
      this.perfLogFlushInterval =
          Objects.requireNonNull(perfLogFlushInterval, "perfLogFlushInterval");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public LoggingConfig build() {
      return new LoggingConfig(level, perfLogFlushInterval);
    }
  }
}
