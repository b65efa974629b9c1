package org.transferqueue.objectstore.engine;

import java.time.Duration;
import java.util.Objects;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Settings of the embedded engine's metadata side (Mooncake's master flags), with Mooncake's
 * defaults.
 *
 * @param leaseTtl how long a positive read answer protects an object from eviction and non-forced
 *     removal (default 10 s)
 * @param softPinTtl how long after its commit a soft-pinned object is evicted last (default 30 min)
 * @param allowEvictSoftPinned whether eviction may take soft-pinned objects once nothing else is
 *     left (default true)
 * @param evictionHighWatermark used/capacity ratio above which a commit triggers eviction (default
 *     0.90)
 * @param evictionRatio how far below the watermark eviction brings usage, as a fraction of capacity
 *     (default 0.05)
 * @param putStartDiscardTimeout how long a pending write blocks a put of the same key before it
 *     counts as abandoned and is preempted (default 30 s)
 * @param putStartReleaseTimeout how long after its start an abandoned write's memory is reclaimed
 *     (default 600 s)
 * @param maxSlabBytes the largest slab taken from the allocator; the contributed segment is split
 *     into slabs of at most this size and an object must fit in one (default 1 GiB)
 * @param asyncThreads threads of the executor that runs the async twins (default: available
 *     processors)
 * @param clock the time source of leases, pins and timeouts
 */
public record MasterConfig(
    Duration leaseTtl,
    Duration softPinTtl,
    boolean allowEvictSoftPinned,
    double evictionHighWatermark,
    double evictionRatio,
    Duration putStartDiscardTimeout,
    Duration putStartReleaseTimeout,
    long maxSlabBytes,
    int asyncThreads,
    Clock clock) {

  /** Default {@link #leaseTtl()}. */
  public static final Duration LEASE_TTL_DEFAULT = Duration.ofSeconds(10);

  /** Default {@link #softPinTtl()}. */
  public static final Duration SOFT_PIN_TTL_DEFAULT = Duration.ofMinutes(30);

  /** Default {@link #evictionHighWatermark()}. */
  public static final double EVICTION_HIGH_WATERMARK_DEFAULT = 0.90;

  /** Default {@link #evictionRatio()}. */
  public static final double EVICTION_RATIO_DEFAULT = 0.05;

  /** Default {@link #putStartDiscardTimeout()}. */
  public static final Duration PUT_START_DISCARD_TIMEOUT_DEFAULT = Duration.ofSeconds(30);

  /** Default {@link #putStartReleaseTimeout()}. */
  public static final Duration PUT_START_RELEASE_TIMEOUT_DEFAULT = Duration.ofSeconds(600);

  /** Default {@link #maxSlabBytes()}. */
  public static final long MAX_SLAB_BYTES_DEFAULT = 1L << 30;

  /** The defaults. */
  public static final MasterConfig DEFAULT = builder().build();

  /**
   * Validates every field.
   *
   * @throws TqException with {@code INVALID_CONFIGURATION} naming the bad value
   */
  public MasterConfig {
    Objects.requireNonNull(clock, "clock");
    positive("leaseTtl", leaseTtl);
    positive("softPinTtl", softPinTtl);
    positive("putStartDiscardTimeout", putStartDiscardTimeout);
    positive("putStartReleaseTimeout", putStartReleaseTimeout);
    if (!(evictionHighWatermark > 0 && evictionHighWatermark <= 1)) {
      throw invalid("evictionHighWatermark=" + evictionHighWatermark + " outside (0, 1]");
    }
    if (!(evictionRatio >= 0 && evictionRatio <= evictionHighWatermark)) {
      throw invalid(
          "evictionRatio="
              + evictionRatio
              + " outside [0, evictionHighWatermark="
              + evictionHighWatermark
              + "]");
    }
    if (maxSlabBytes < SlabAllocator.ALIGNMENT) {
      throw invalid("maxSlabBytes=" + maxSlabBytes + " < " + SlabAllocator.ALIGNMENT);
    }
    if (asyncThreads < 1) {
      throw invalid("asyncThreads=" + asyncThreads + " < 1");
    }
  }

  private static void positive(String name, Duration value) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero()) {
      throw invalid(name + "=" + value + " is not positive");
    }
  }

  private static TqException invalid(String message) {
    return new TqException(ErrorCode.INVALID_CONFIGURATION, message);
  }

  /**
   * Starts a builder with the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link MasterConfig}; {@link #build()} validates. */
  public static final class Builder {
    private Duration leaseTtl = LEASE_TTL_DEFAULT;
    private Duration softPinTtl = SOFT_PIN_TTL_DEFAULT;
    private boolean allowEvictSoftPinned = true;
    private double evictionHighWatermark = EVICTION_HIGH_WATERMARK_DEFAULT;
    private double evictionRatio = EVICTION_RATIO_DEFAULT;
    private Duration putStartDiscardTimeout = PUT_START_DISCARD_TIMEOUT_DEFAULT;
    private Duration putStartReleaseTimeout = PUT_START_RELEASE_TIMEOUT_DEFAULT;
    private long maxSlabBytes = MAX_SLAB_BYTES_DEFAULT;
    private int asyncThreads = Runtime.getRuntime().availableProcessors();
    private Clock clock = Clock.SYSTEM;

    private Builder() {}

    /**
     * Sets the read-lease lifetime.
     *
     * @param leaseTtl positive
     * @return this builder
     */
    public Builder leaseTtl(Duration leaseTtl) {
      this.leaseTtl = leaseTtl;
      return this;
    }

    /**
     * Sets the soft-pin lifetime.
     *
     * @param softPinTtl positive
     * @return this builder
     */
    public Builder softPinTtl(Duration softPinTtl) {
      this.softPinTtl = softPinTtl;
      return this;
    }

    /**
     * Sets whether soft-pinned objects may be evicted as a last resort.
     *
     * @param allow true to allow
     * @return this builder
     */
    public Builder allowEvictSoftPinned(boolean allow) {
      this.allowEvictSoftPinned = allow;
      return this;
    }

    /**
     * Sets the used/capacity ratio above which eviction runs.
     *
     * @param watermark in (0, 1]
     * @return this builder
     */
    public Builder evictionHighWatermark(double watermark) {
      this.evictionHighWatermark = watermark;
      return this;
    }

    /**
     * Sets how far below the watermark eviction brings usage.
     *
     * @param ratio in [0, watermark]
     * @return this builder
     */
    public Builder evictionRatio(double ratio) {
      this.evictionRatio = ratio;
      return this;
    }

    /**
     * Sets how long a pending write blocks a put of its key.
     *
     * @param timeout positive
     * @return this builder
     */
    public Builder putStartDiscardTimeout(Duration timeout) {
      this.putStartDiscardTimeout = timeout;
      return this;
    }

    /**
     * Sets when an abandoned write's memory is reclaimed.
     *
     * @param timeout positive
     * @return this builder
     */
    public Builder putStartReleaseTimeout(Duration timeout) {
      this.putStartReleaseTimeout = timeout;
      return this;
    }

    /**
     * Sets the largest slab.
     *
     * @param bytes at least 64
     * @return this builder
     */
    public Builder maxSlabBytes(long bytes) {
      this.maxSlabBytes = bytes;
      return this;
    }

    /**
     * Sets the number of executor threads for async twins.
     *
     * @param threads at least 1
     * @return this builder
     */
    public Builder asyncThreads(int threads) {
      this.asyncThreads = threads;
      return this;
    }

    /**
     * Sets the clock.
     *
     * @param clock a monotonic clock
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = clock;
      return this;
    }

    /**
     * Creates the config.
     *
     * @return the config
     * @throws TqException with {@code INVALID_CONFIGURATION} naming a bad value
     */
    public MasterConfig build() {
      return new MasterConfig(
          leaseTtl,
          softPinTtl,
          allowEvictSoftPinned,
          evictionHighWatermark,
          evictionRatio,
          putStartDiscardTimeout,
          putStartReleaseTimeout,
          maxSlabBytes,
          asyncThreads,
          clock);
    }
  }
}
