package org.transferqueue.storage.simple;

import java.util.OptionalLong;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.Defaults;

/**
 * Settings of an embedded SimpleStorage backend: how many storage units, how many samples they hold
 * and how much memory each may use, plus the manager's own thread count. Immutable; build with
 * {@link #builder()}. The system layer maps {@code backend.SimpleStorage} and {@code
 * memory.storage_unit_limit_bytes} of the configuration onto it ({@code
 * org.transferqueue.system.ConfigMapper#simpleStorage}).
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
  public static final int NUM_DATA_STORAGE_UNITS_DEFAULT = Defaults.NUM_DATA_STORAGE_UNITS;

  /** Key of the total capacity in samples in the backend section; null means unlimited. */
  public static final String TOTAL_STORAGE_SIZE_PROP_NAME = "total_storage_size";

  /** Key of the per-unit byte limit in the backend section. */
  public static final String UNIT_LIMIT_BYTES_PROP_NAME = "unit_limit_bytes";

  /** Default per-unit byte limit: only the process's root allocator limits it. */
  public static final long UNIT_LIMIT_BYTES_DEFAULT = Long.MAX_VALUE;

  /** Key of the executor's thread count in the backend section. */
  public static final String WORKER_THREADS_PROP_NAME = "worker_threads";

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
