package org.transferqueue.config;

import java.time.Duration;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * SimpleStorage settings (YAML section {@code backend.SimpleStorage}): the number of storage units
 * and their capacity. Sample {@code gi} lives on unit {@code gi mod numDataStorageUnits}, so the
 * number of units must stay the same for the lifetime of the data and across checkpoints.
 *
 * @param totalStorageSize the most samples stored over all units; empty = unlimited
 * @param numDataStorageUnits the number of storage units
 * @param sendRecvTimeout deadline of every request to a storage unit ({@code
 *     TQ_SIMPLE_STORAGE_SEND_RECV_TIMEOUT})
 */
public record SimpleStorageConfig(
    OptionalLong totalStorageSize, int numDataStorageUnits, Duration sendRecvTimeout) {

  /** Key of {@link #totalStorageSize()}. */
  public static final String TOTAL_STORAGE_SIZE_PROP_NAME =
      "backend.SimpleStorage.total_storage_size";

  /** Default of {@link #totalStorageSize()}: unlimited. */
  public static final OptionalLong TOTAL_STORAGE_SIZE_DEFAULT = OptionalLong.empty();

  /** Key of {@link #numDataStorageUnits()}. */
  public static final String NUM_DATA_STORAGE_UNITS_PROP_NAME =
      "backend.SimpleStorage.num_data_storage_units";

  /** Default of {@link #numDataStorageUnits()}. */
  public static final int NUM_DATA_STORAGE_UNITS_DEFAULT = 2;

  /** Key of {@link #sendRecvTimeout()}. */
  public static final String SEND_RECV_TIMEOUT_PROP_NAME =
      "backend.SimpleStorage.send_recv_timeout";

  /** Default of {@link #sendRecvTimeout()}. */
  public static final Duration SEND_RECV_TIMEOUT_DEFAULT = Duration.ofSeconds(200);

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public SimpleStorageConfig {
    Problems p = new Problems();
    if (totalStorageSize == null) {
      p.notNull(TOTAL_STORAGE_SIZE_PROP_NAME, null);
    } else if (totalStorageSize.isPresent()) {
      p.atLeast(TOTAL_STORAGE_SIZE_PROP_NAME, totalStorageSize.getAsLong(), 1);
    }
    p.atLeast(NUM_DATA_STORAGE_UNITS_PROP_NAME, numDataStorageUnits, 1);
    p.positive(SEND_RECV_TIMEOUT_PROP_NAME, sendRecvTimeout);
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

  /**
   * The most samples one unit stores: {@code ceil(totalStorageSize / numDataStorageUnits)}.
   *
   * @return the per-unit capacity in samples, or empty when unlimited
   */
  public OptionalLong perUnitCapacity() {
    if (totalStorageSize.isEmpty()) {
      return OptionalLong.empty();
    }
    long total = totalStorageSize.getAsLong();
    return OptionalLong.of((total + numDataStorageUnits - 1) / numDataStorageUnits);
  }

  /** Mutable builder of {@link SimpleStorageConfig}; not thread-safe. */
  public static final class Builder {
    private Long totalStorageSize = null;
    private int numDataStorageUnits = NUM_DATA_STORAGE_UNITS_DEFAULT;
    private Duration sendRecvTimeout = SEND_RECV_TIMEOUT_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #TOTAL_STORAGE_SIZE_PROP_NAME}.
     *
     * @param totalStorageSize at least 1, or null for unlimited
     * @return this builder
     */
    public Builder totalStorageSize(Long totalStorageSize) {
      this.totalStorageSize = totalStorageSize;
      return this;
    }

    /**
     * Sets {@value #NUM_DATA_STORAGE_UNITS_PROP_NAME}.
     *
     * @param numDataStorageUnits at least 1
     * @return this builder
     */
    public Builder numDataStorageUnits(int numDataStorageUnits) {
      this.numDataStorageUnits = numDataStorageUnits;
      return this;
    }

    /**
     * Sets {@value #SEND_RECV_TIMEOUT_PROP_NAME}.
     *
     * @param sendRecvTimeout positive
     * @return this builder
     */
    public Builder sendRecvTimeout(Duration sendRecvTimeout) {
      this.sendRecvTimeout = Objects.requireNonNull(sendRecvTimeout, "sendRecvTimeout");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public SimpleStorageConfig build() {
      return new SimpleStorageConfig(
          totalStorageSize == null ? OptionalLong.empty() : OptionalLong.of(totalStorageSize),
          numDataStorageUnits,
          sendRecvTimeout);
    }
  }
}
