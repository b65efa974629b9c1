package org.transferqueue.config;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of storage managers towards the controller (YAML section {@code storage}): the handshake
 * and the acknowledgement of data-update notifications.
 *
 * @param pollerTimeout longest single poll of a storage socket ({@code TQ_STORAGE_POLLER_TIMEOUT})
 * @param handshakeTimeout total time a storage manager waits for the controller handshake ({@code
 *     TQ_STORAGE_HANDSHAKE_TIMEOUT})
 * @param handshakeRetryInterval pause between handshake attempts ({@code
 *     TQ_STORAGE_HANDSHAKE_RETRY_INTERVAL})
 * @param handshakeMaxRetries handshake attempts after the first ({@code
 *     TQ_STORAGE_HANDSHAKE_MAX_RETRIES})
 * @param dataUpdateResponseTimeout wait for the controller's acknowledgement of written data; a put
 *     fails when it passes ({@code TQ_DATA_UPDATE_RESPONSE_TIMEOUT})
 * @param durability whether storage units and store nodes journal their data ({@code
 *     TQ_STORAGE_DURABILITY}; see {@link DurabilityConfig})
 */
public record StorageConfig(
    Duration pollerTimeout,
    Duration handshakeTimeout,
    Duration handshakeRetryInterval,
    int handshakeMaxRetries,
    Duration dataUpdateResponseTimeout,
    Durability durability) {

  /** Key of {@link #pollerTimeout()}. */
  public static final String POLLER_TIMEOUT_PROP_NAME = "storage.poller_timeout";

  /** Default of {@link #pollerTimeout()}. */
  public static final Duration POLLER_TIMEOUT_DEFAULT = Duration.ofSeconds(5);

  /** Key of {@link #handshakeTimeout()}. */
  public static final String HANDSHAKE_TIMEOUT_PROP_NAME = "storage.handshake_timeout";

  /** Default of {@link #handshakeTimeout()}. */
  public static final Duration HANDSHAKE_TIMEOUT_DEFAULT = Duration.ofSeconds(30);

  /** Key of {@link #handshakeRetryInterval()}. */
  public static final String HANDSHAKE_RETRY_INTERVAL_PROP_NAME =
      "storage.handshake_retry_interval";

  /** Default of {@link #handshakeRetryInterval()}. */
  public static final Duration HANDSHAKE_RETRY_INTERVAL_DEFAULT = Duration.ofSeconds(1);

  /** Key of {@link #handshakeMaxRetries()}. */
  public static final String HANDSHAKE_MAX_RETRIES_PROP_NAME = "storage.handshake_max_retries";

  /** Default of {@link #handshakeMaxRetries()}. */
  public static final int HANDSHAKE_MAX_RETRIES_DEFAULT = 3;

  /** Key of {@link #dataUpdateResponseTimeout()}. */
  public static final String DATA_UPDATE_RESPONSE_TIMEOUT_PROP_NAME =
      "storage.data_update_response_timeout";

  /** Default of {@link #dataUpdateResponseTimeout()}. */
  public static final Duration DATA_UPDATE_RESPONSE_TIMEOUT_DEFAULT = Duration.ofSeconds(30);

  /** Key of {@link #durability()}. */
  public static final String DURABILITY_PROP_NAME = "storage.durability";

  /** Default of {@link #durability()}: memory only. */
  public static final Durability DURABILITY_DEFAULT = Durability.NONE;

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public StorageConfig {
    Problems p = new Problems();
    p.positive(POLLER_TIMEOUT_PROP_NAME, pollerTimeout);
    p.positive(HANDSHAKE_TIMEOUT_PROP_NAME, handshakeTimeout);
    p.positive(HANDSHAKE_RETRY_INTERVAL_PROP_NAME, handshakeRetryInterval);
    p.atLeast(HANDSHAKE_MAX_RETRIES_PROP_NAME, handshakeMaxRetries, 0);
    p.positive(DATA_UPDATE_RESPONSE_TIMEOUT_PROP_NAME, dataUpdateResponseTimeout);
    p.notNull(DURABILITY_PROP_NAME, durability);
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

  /** Mutable builder of {@link StorageConfig}; not thread-safe. */
  public static final class Builder {
    private Duration pollerTimeout = POLLER_TIMEOUT_DEFAULT;
    private Duration handshakeTimeout = HANDSHAKE_TIMEOUT_DEFAULT;
    private Duration handshakeRetryInterval = HANDSHAKE_RETRY_INTERVAL_DEFAULT;
    private int handshakeMaxRetries = HANDSHAKE_MAX_RETRIES_DEFAULT;
    private Duration dataUpdateResponseTimeout = DATA_UPDATE_RESPONSE_TIMEOUT_DEFAULT;
    private Durability durability = DURABILITY_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #POLLER_TIMEOUT_PROP_NAME}.
     *
     * @param pollerTimeout positive
     * @return this builder
     */
    public Builder pollerTimeout(Duration pollerTimeout) {
      this.pollerTimeout = Objects.requireNonNull(pollerTimeout, "pollerTimeout");
      return this;
    }

    /**
     * Sets {@value #HANDSHAKE_TIMEOUT_PROP_NAME}.
     *
     * @param handshakeTimeout positive
     * @return this builder
     */
    public Builder handshakeTimeout(Duration handshakeTimeout) {
      this.handshakeTimeout = Objects.requireNonNull(handshakeTimeout, "handshakeTimeout");
      return this;
    }

    /**
     * Sets {@value #HANDSHAKE_RETRY_INTERVAL_PROP_NAME}.
     *
     * @param handshakeRetryInterval positive
     * @return this builder
     */
    public Builder handshakeRetryInterval(Duration handshakeRetryInterval) {
      this.handshakeRetryInterval =
          Objects.requireNonNull(handshakeRetryInterval, "handshakeRetryInterval");
      return this;
    }

    /**
     * Sets {@value #HANDSHAKE_MAX_RETRIES_PROP_NAME}.
     *
     * @param handshakeMaxRetries at least 0
     * @return this builder
     */
    public Builder handshakeMaxRetries(int handshakeMaxRetries) {
      this.handshakeMaxRetries = handshakeMaxRetries;
      return this;
    }

    /**
     * Sets {@value #DATA_UPDATE_RESPONSE_TIMEOUT_PROP_NAME}.
     *
     * @param dataUpdateResponseTimeout positive
     * @return this builder
     */
    public Builder dataUpdateResponseTimeout(Duration dataUpdateResponseTimeout) {
      this.dataUpdateResponseTimeout =
          Objects.requireNonNull(dataUpdateResponseTimeout, "dataUpdateResponseTimeout");
      return this;
    }

    /**
     * Sets {@value #DURABILITY_PROP_NAME}.
     *
     * @param durability none or journal
     * @return this builder
     */
    public Builder durability(Durability durability) {
      this.durability = Objects.requireNonNull(durability, "durability");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public StorageConfig build() {
      return new StorageConfig(
          pollerTimeout,
          handshakeTimeout,
          handshakeRetryInterval,
          handshakeMaxRetries,
          dataUpdateResponseTimeout,
          durability);
    }
  }
}
