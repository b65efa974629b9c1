package org.transferqueue.objectstore;

import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * How a write is placed and protected: the number of replicas and the pins.
 *
 * <ul>
 *   <li>{@code replicaNum}: replicas wanted, at least 1. Best effort, as in Mooncake: all replicas
 *       of one object live on distinct segment names, and a write succeeds with at least one.
 *   <li>{@code withHardPin}: the object is never evicted. Set at creation; a later write can set it
 *       but never clear it while the object exists.
 *   <li>{@code withSoftPin}: the object is evicted only after every unpinned candidate, until the
 *       store's soft-pin lifetime has passed since the commit of this write. {@code false} keeps an
 *       existing soft pin (Mooncake's {@code PRESERVE}).
 * </ul>
 *
 * @param replicaNum replicas wanted, at least 1
 * @param withHardPin never evict
 * @param withSoftPin evict last, for a while
 */
public record ReplicateConfig(int replicaNum, boolean withHardPin, boolean withSoftPin) {
  /** One replica, no pins. */
  public static final ReplicateConfig DEFAULT = new ReplicateConfig(1, false, false);

  /**
   * Validates the fields.
   *
   * @throws TqException with {@code INVALID_ARGUMENT} when {@code replicaNum < 1}
   */
  public ReplicateConfig {
    if (replicaNum < 1) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "replicaNum=" + replicaNum + " < 1");
    }
  }

  /**
   * Starts a builder with the values of {@link #DEFAULT}.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link ReplicateConfig}; {@link #build()} validates. */
  public static final class Builder {
    private int replicaNum = 1;
    private boolean withHardPin;
    private boolean withSoftPin;

    private Builder() {}

    /**
     * Sets the number of replicas wanted.
     *
     * @param replicaNum at least 1
     * @return this builder
     */
    public Builder replicaNum(int replicaNum) {
      this.replicaNum = replicaNum;
      return this;
    }

    /**
     * Sets whether the object is never evicted.
     *
     * @param withHardPin true to pin
     * @return this builder
     */
    public Builder withHardPin(boolean withHardPin) {
      this.withHardPin = withHardPin;
      return this;
    }

    /**
     * Sets whether the object is evicted last for the soft-pin lifetime.
     *
     * @param withSoftPin true to soft-pin
     * @return this builder
     */
    public Builder withSoftPin(boolean withSoftPin) {
      this.withSoftPin = withSoftPin;
      return this;
    }

    /**
     * Creates the config.
     *
     * @return the config
     * @throws TqException with {@code INVALID_ARGUMENT} when {@code replicaNum < 1}
     */
    public ReplicateConfig build() {
      return new ReplicateConfig(replicaNum, withHardPin, withSoftPin);
    }
  }
}
