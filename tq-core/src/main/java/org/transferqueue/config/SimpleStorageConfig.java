package org.transferqueue.config;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * SimpleStorage settings (YAML section {@code backend.SimpleStorage}): the number of storage units
 * and their capacity. Sample {@code gi} lives on unit {@code gi mod numDataStorageUnits}, so the
 * number of units must stay the same for the lifetime of the data and across checkpoints.
 *
 * @param totalStorageSize the most samples stored over all units; empty = unlimited
 * @param numDataStorageUnits the number of storage units
 * @param sendRecvTimeout deadline of every request to a storage unit ({@code
 *     TQ_SIMPLE_STORAGE_SEND_RECV_TIMEOUT})
 * @param requiredNodeResource upstream's Ray custom resource for placing the units (upstream 0.1.11
 *     and later); empty = none. Units of this build run where {@code tq storage-unit} starts them,
 *     so a value has no effect ({@link TqConfig#warnings()})
 * @param ssdOffload upstream's SSD offload settings, which have no effect in this build
 */
public record SimpleStorageConfig(
    OptionalLong totalStorageSize,
    int numDataStorageUnits,
    Duration sendRecvTimeout,
    Optional<String> requiredNodeResource,
    SsdOffloadConfig ssdOffload) {

  /** Key of {@link #totalStorageSize()}. */
  public static final String TOTAL_STORAGE_SIZE_PROP_NAME =
      "backend.SimpleStorage.total_storage_size";

  /** Default of {@link #totalStorageSize()}: unlimited. */
  public static final OptionalLong TOTAL_STORAGE_SIZE_DEFAULT = OptionalLong.empty();

  /** Key of {@link #numDataStorageUnits()}. */
  public static final String NUM_DATA_STORAGE_UNITS_PROP_NAME =
      "backend.SimpleStorage.num_data_storage_units";

  /** Default of {@link #numDataStorageUnits()}. */
  public static final int NUM_DATA_STORAGE_UNITS_DEFAULT = Defaults.NUM_DATA_STORAGE_UNITS;

  /** Key of {@link #sendRecvTimeout()}. */
  public static final String SEND_RECV_TIMEOUT_PROP_NAME =
      "backend.SimpleStorage.send_recv_timeout";

  /** Default of {@link #sendRecvTimeout()}. */
  public static final Duration SEND_RECV_TIMEOUT_DEFAULT = Duration.ofSeconds(200);

  /** Key of {@link #requiredNodeResource()}. */
  public static final String REQUIRED_NODE_RESOURCE_PROP_NAME =
      "backend.SimpleStorage.required_node_resource";

  /** Default of {@link #requiredNodeResource()}: none. */
  public static final Optional<String> REQUIRED_NODE_RESOURCE_DEFAULT = Optional.empty();

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
    p.notNull(REQUIRED_NODE_RESOURCE_PROP_NAME, requiredNodeResource);
    p.notNull(SsdOffloadConfig.SECTION, ssdOffload);
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
    private String requiredNodeResource;
    private final SsdOffloadConfig.Builder ssdOffload = SsdOffloadConfig.builder();

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
     * Sets {@value #REQUIRED_NODE_RESOURCE_PROP_NAME}.
     *
     * @param resource a Ray resource name, or null for none
     * @return this builder
     */
    public Builder requiredNodeResource(String resource) {
      this.requiredNodeResource = resource;
      return this;
    }

    /**
     * Changes the {@code ssd_offload} settings.
     *
     * @param change applied to the builder, which starts with the defaults
     * @return this builder
     */
    public Builder ssdOffload(Consumer<SsdOffloadConfig.Builder> change) {
      change.accept(ssdOffload);
      return this;
    }

    SsdOffloadConfig.Builder ssdOffloadBuilder() {
      return ssdOffload;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public SimpleStorageConfig build() {
      Problems p = new Problems();
      SsdOffloadConfig offload = p.collect(ssdOffload::build);
      SimpleStorageConfig config =
          p.collect(
              () ->
                  new SimpleStorageConfig(
                      totalStorageSize == null
                          ? OptionalLong.empty()
                          : OptionalLong.of(totalStorageSize),
                      numDataStorageUnits,
                      sendRecvTimeout,
                      Optional.ofNullable(requiredNodeResource),
                      offload == null ? SsdOffloadConfig.builder().build() : offload));
      p.throwIfAny();
      return config;
    }
  }
}
