package org.transferqueue.config;

import java.time.Duration;
import java.util.Objects;

/**
 * Metrics settings (YAML section {@code metrics}).
 *
 * @param enabled whether Prometheus endpoints are started (controller, and each storage unit)
 * @param port the controller endpoint's HTTP port; 0 picks a free port
 * @param collectInterval how often meters are refreshed ({@code TQ_METRICS_COLLECT_INTERVAL})
 * @param storageTimeout how long a metrics query to one storage unit may take ({@code
 *     TQ_METRICS_STORAGE_TIMEOUT})
 */
public record MetricsConfig(
    boolean enabled, int port, Duration collectInterval, Duration storageTimeout) {

  /** Key of {@link #enabled()}. */
  public static final String ENABLED_PROP_NAME = "metrics.enabled";

  /** Default of {@link #enabled()}. */
  public static final boolean ENABLED_DEFAULT = false;

  /** Key of {@link #port()}. */
  public static final String PORT_PROP_NAME = "metrics.port";

  /** Default of {@link #port()}: any free port. */
  public static final int PORT_DEFAULT = 0;

  /** Key of {@link #collectInterval()}. */
  public static final String COLLECT_INTERVAL_PROP_NAME = "metrics.collect_interval";

  /** Default of {@link #collectInterval()}. */
  public static final Duration COLLECT_INTERVAL_DEFAULT = Duration.ofSeconds(10);

  /** Key of {@link #storageTimeout()}. */
  public static final String STORAGE_TIMEOUT_PROP_NAME = "metrics.storage_timeout";

  /** Default of {@link #storageTimeout()}. */
  public static final Duration STORAGE_TIMEOUT_DEFAULT = Duration.ofSeconds(5);

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public MetricsConfig {
    Problems p = new Problems();
    p.port(PORT_PROP_NAME, port, true);
    p.positive(COLLECT_INTERVAL_PROP_NAME, collectInterval);
    p.positive(STORAGE_TIMEOUT_PROP_NAME, storageTimeout);
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

  /** Mutable builder of {@link MetricsConfig}; not thread-safe. */
  public static final class Builder {
    private boolean enabled = ENABLED_DEFAULT;
    private int port = PORT_DEFAULT;
    private Duration collectInterval = COLLECT_INTERVAL_DEFAULT;
    private Duration storageTimeout = STORAGE_TIMEOUT_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #ENABLED_PROP_NAME}.
     *
     * @param enabled whether Prometheus endpoints are started (controller, and each storage unit)
     * @return this builder
     */
    public Builder enabled(boolean enabled) {
      this.enabled = enabled;
      return this;
    }

    /**
     * Sets {@value #PORT_PROP_NAME}.
     *
     * @param port 0-65535
     * @return this builder
     */
    public Builder port(int port) {
      this.port = port;
      return this;
    }

    /**
     * Sets {@value #COLLECT_INTERVAL_PROP_NAME}.
     *
     * @param collectInterval positive
     * @return this builder
     */
    public Builder collectInterval(Duration collectInterval) {
      this.collectInterval = Objects.requireNonNull(collectInterval, "collectInterval");
      return this;
    }

    /**
     * Sets {@value #STORAGE_TIMEOUT_PROP_NAME}.
     *
     * @param storageTimeout positive
     * @return this builder
     */
    public Builder storageTimeout(Duration storageTimeout) {
      this.storageTimeout = Objects.requireNonNull(storageTimeout, "storageTimeout");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public MetricsConfig build() {
      return new MetricsConfig(enabled, port, collectInterval, storageTimeout);
    }
  }
}
