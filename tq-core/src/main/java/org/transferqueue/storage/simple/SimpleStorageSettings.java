package org.transferqueue.storage.simple;

import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.SimpleStorageConfig;
import org.transferqueue.config.TqConfig;

/**
 * Settings of an embedded SimpleStorage backend: how many storage units, how many samples they hold
 * and how much memory each may use, plus the manager's own thread count. Immutable; build with
 * {@link #builder()}, take them from the typed configuration with {@link #from(TqConfig)}, or read
 * an options map (the {@code backend.SimpleStorage} keys) with {@link #fromOptions(Map)}.
 *
 * @param unitCount the number of storage units N; sample {@code gi} lives on unit {@code gi mod N}
 * @param totalStorageSize the most samples over all units, split evenly (rounding up); empty for
 *     unlimited
 * @param unitLimitBytes the byte limit of each unit's allocator
 * @param workerThreads the threads of the manager's executor that run per-unit work in parallel
 */
public record SimpleStorageSettings(
    int unitCount, OptionalLong totalStorageSize, long unitLimitBytes, int workerThreads) {

  /** Key of the unit count in the backend section. */
  public static final String NUM_DATA_STORAGE_UNITS_PROP_NAME = "num_data_storage_units";

  /** Default unit count. */
  public static final int NUM_DATA_STORAGE_UNITS_DEFAULT = 2;

  /** Key of the total capacity in samples in the backend section; null means unlimited. */
  public static final String TOTAL_STORAGE_SIZE_PROP_NAME = "total_storage_size";

  /** Key of the unit addresses, filled at runtime for networked units; ignored when embedded. */
  public static final String ZMQ_INFO_PROP_NAME = "zmq_info";

  /** Deprecated name of {@link #ZMQ_INFO_PROP_NAME}; accepted with a warning. */
  public static final String STORAGE_UNIT_INFOS_PROP_NAME = "storage_unit_infos";

  /** Key of the per-unit byte limit in the backend section. */
  public static final String UNIT_LIMIT_BYTES_PROP_NAME = "unit_limit_bytes";

  /** Default per-unit byte limit: only the process's root allocator limits it. */
  public static final long UNIT_LIMIT_BYTES_DEFAULT = Long.MAX_VALUE;

  /** Key of the executor's thread count in the backend section. */
  public static final String WORKER_THREADS_PROP_NAME = "worker_threads";

  private static final System.Logger LOG = System.getLogger(SimpleStorageSettings.class.getName());

  private static final Set<String> KEYS =
      Set.of(
          NUM_DATA_STORAGE_UNITS_PROP_NAME,
          TOTAL_STORAGE_SIZE_PROP_NAME,
          ZMQ_INFO_PROP_NAME,
          STORAGE_UNIT_INFOS_PROP_NAME,
          UNIT_LIMIT_BYTES_PROP_NAME,
          WORKER_THREADS_PROP_NAME);

  /** Validates every setting. */
  public SimpleStorageSettings {
    if (unitCount < 1) {
      throw invalid(NUM_DATA_STORAGE_UNITS_PROP_NAME, unitCount, "must be >= 1");
    }
    if (totalStorageSize.isPresent() && totalStorageSize.getAsLong() < 1) {
      throw invalid(
          TOTAL_STORAGE_SIZE_PROP_NAME, totalStorageSize.getAsLong(), "must be >= 1 or null");
    }
    if (unitLimitBytes < 0) {
      throw invalid(UNIT_LIMIT_BYTES_PROP_NAME, unitLimitBytes, "must be >= 0");
    }
    if (workerThreads < 1) {
      throw invalid(WORKER_THREADS_PROP_NAME, workerThreads, "must be >= 1");
    }
  }

  /**
   * Starts a builder with the defaults: 2 units, unlimited samples and bytes, one worker thread per
   * unit up to the number of processors.
   *
   * @return a builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Takes the settings from the typed configuration: {@code backend.SimpleStorage} for units and
   * capacity, {@code memory.storage_unit_limit_bytes} for each unit's byte limit.
   *
   * @param config the validated configuration
   * @return the settings
   */
  public static SimpleStorageSettings from(TqConfig config) {
    SimpleStorageConfig simple = config.backend().simpleStorage();
    return builder()
        .unitCount(simple.numDataStorageUnits())
        .totalStorageSize(simple.totalStorageSize())
        .unitLimitBytes(config.memory().storageUnitLimitBytes().orElse(UNIT_LIMIT_BYTES_DEFAULT))
        .build();
  }

  /**
   * Reads the {@code backend.SimpleStorage} section of the configuration.
   *
   * @param options the section's keys and values; absent keys take their defaults
   * @return the validated settings
   * @throws TqException with {@code INVALID_CONFIGURATION} naming an unknown key or a bad value
   */
  public static SimpleStorageSettings fromOptions(Map<String, ?> options) {
    Builder builder = builder();
    for (Map.Entry<String, ?> e : options.entrySet()) {
      String key = e.getKey();
      Object value = e.getValue();
      switch (key) {
        case NUM_DATA_STORAGE_UNITS_PROP_NAME ->
            builder.unitCount(Math.toIntExact(requireLong(key, value)));
        case TOTAL_STORAGE_SIZE_PROP_NAME ->
            builder.totalStorageSize(
                value == null ? OptionalLong.empty() : OptionalLong.of(requireLong(key, value)));
        case UNIT_LIMIT_BYTES_PROP_NAME -> builder.unitLimitBytes(requireLong(key, value));
        case WORKER_THREADS_PROP_NAME ->
            builder.workerThreads(Math.toIntExact(requireLong(key, value)));
        case ZMQ_INFO_PROP_NAME -> {
          // Addresses of networked units; embedded units have none.
        }
        case STORAGE_UNIT_INFOS_PROP_NAME ->
            LOG.log(
                System.Logger.Level.WARNING,
                "backend.SimpleStorage.storage_unit_infos is deprecated; use zmq_info");
        default ->
            throw new TqException(
                ErrorCode.INVALID_CONFIGURATION,
                "backend.SimpleStorage."
                    + key
                    + " is not a known key; known: "
                    + new java.util.TreeSet<>(KEYS));
      }
    }
    return builder.build();
  }

  /**
   * The capacity of each unit: {@code ceil(totalStorageSize / unitCount)}, or unlimited.
   *
   * @return the per-unit capacity in samples, empty when unlimited
   */
  public OptionalLong unitCapacity() {
    if (totalStorageSize.isEmpty()) {
      return OptionalLong.empty();
    }
    long total = totalStorageSize.getAsLong();
    return OptionalLong.of((total + unitCount - 1) / unitCount);
  }

  private static long requireLong(String key, Object value) {
    if (value instanceof Integer || value instanceof Long || value instanceof Short) {
      return ((Number) value).longValue();
    }
    throw new TqException(
        ErrorCode.INVALID_CONFIGURATION,
        "backend.SimpleStorage." + key + "=" + value + " is not an integer");
  }

  private static TqException invalid(String key, long value, String rule) {
    return new TqException(
        ErrorCode.INVALID_CONFIGURATION, "backend.SimpleStorage." + key + "=" + value + " " + rule);
  }

  /** Builds a {@link SimpleStorageSettings}; {@link #build()} validates. */
  public static final class Builder {
    private int unitCount = NUM_DATA_STORAGE_UNITS_DEFAULT;
    private OptionalLong totalStorageSize = OptionalLong.empty();
    private long unitLimitBytes = UNIT_LIMIT_BYTES_DEFAULT;
    private int workerThreads;

    private Builder() {}

    /**
     * Sets the number of storage units.
     *
     * @param unitCount at least 1
     * @return this builder
     */
    public Builder unitCount(int unitCount) {
      this.unitCount = unitCount;
      return this;
    }

    /**
     * Sets the most samples over all units.
     *
     * @param totalStorageSize at least 1, or empty for unlimited
     * @return this builder
     */
    public Builder totalStorageSize(OptionalLong totalStorageSize) {
      this.totalStorageSize = totalStorageSize;
      return this;
    }

    /**
     * Sets the byte limit of each unit's allocator.
     *
     * @param unitLimitBytes at least 0
     * @return this builder
     */
    public Builder unitLimitBytes(long unitLimitBytes) {
      this.unitLimitBytes = unitLimitBytes;
      return this;
    }

    /**
     * Sets the executor's thread count.
     *
     * @param workerThreads at least 1; 0 means one per unit up to the number of processors
     * @return this builder
     */
    public Builder workerThreads(int workerThreads) {
      this.workerThreads = workerThreads;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the settings
     * @throws TqException with {@code INVALID_CONFIGURATION} naming a bad value
     */
    public SimpleStorageSettings build() {
      int threads =
          workerThreads == 0
              ? Math.max(1, Math.min(unitCount, Runtime.getRuntime().availableProcessors()))
              : workerThreads;
      return new SimpleStorageSettings(unitCount, totalStorageSize, unitLimitBytes, threads);
    }
  }
}
