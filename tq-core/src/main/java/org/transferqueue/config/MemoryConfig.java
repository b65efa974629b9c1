package org.transferqueue.config;

import java.util.OptionalLong;

/**
 * Off-heap memory limits (YAML section {@code memory}). Exceeding a limit fails the allocation with
 * {@code OUT_OF_MEMORY} before any partial state is written.
 *
 * @param limitBytes the process root allocator's byte limit; empty = unlimited
 * @param storageUnitLimitBytes each storage unit's byte limit; empty = unlimited
 */
public record MemoryConfig(OptionalLong limitBytes, OptionalLong storageUnitLimitBytes) {

  /** Key of {@link #limitBytes()}. */
  public static final String LIMIT_BYTES_PROP_NAME = "memory.limit_bytes";

  /** Default of {@link #limitBytes()}: unlimited. */
  public static final OptionalLong LIMIT_BYTES_DEFAULT = OptionalLong.empty();

  /** Key of {@link #storageUnitLimitBytes()}. */
  public static final String STORAGE_UNIT_LIMIT_BYTES_PROP_NAME = "memory.storage_unit_limit_bytes";

  /** Default of {@link #storageUnitLimitBytes()}: unlimited. */
  public static final OptionalLong STORAGE_UNIT_LIMIT_BYTES_DEFAULT = OptionalLong.empty();

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public MemoryConfig {
    Problems p = new Problems();
    p.notNull(LIMIT_BYTES_PROP_NAME, limitBytes);
    p.notNull(STORAGE_UNIT_LIMIT_BYTES_PROP_NAME, storageUnitLimitBytes);
    if (limitBytes != null && limitBytes.isPresent()) {
      p.atLeast(LIMIT_BYTES_PROP_NAME, limitBytes.getAsLong(), 1);
    }
    if (storageUnitLimitBytes != null && storageUnitLimitBytes.isPresent()) {
      long unit = storageUnitLimitBytes.getAsLong();
      p.atLeast(STORAGE_UNIT_LIMIT_BYTES_PROP_NAME, unit, 1);
      if (limitBytes != null && limitBytes.isPresent() && unit > limitBytes.getAsLong()) {
        p.add(
            STORAGE_UNIT_LIMIT_BYTES_PROP_NAME,
            unit,
            "exceeds " + LIMIT_BYTES_PROP_NAME + ": " + limitBytes.getAsLong());
      }
    }
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

  /** Mutable builder of {@link MemoryConfig}; not thread-safe. */
  public static final class Builder {
    private Long limitBytes = null;
    private Long storageUnitLimitBytes = null;

    Builder() {}

    /**
     * Sets {@value #LIMIT_BYTES_PROP_NAME}.
     *
     * @param limitBytes at least 1, or null for unlimited
     * @return this builder
     */
    public Builder limitBytes(Long limitBytes) {
      this.limitBytes = limitBytes;
      return this;
    }

    /**
     * Sets {@value #STORAGE_UNIT_LIMIT_BYTES_PROP_NAME}.
     *
     * @param storageUnitLimitBytes at least 1, or null for unlimited
     * @return this builder
     */
    public Builder storageUnitLimitBytes(Long storageUnitLimitBytes) {
      this.storageUnitLimitBytes = storageUnitLimitBytes;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public MemoryConfig build() {
      return new MemoryConfig(
          limitBytes == null ? OptionalLong.empty() : OptionalLong.of(limitBytes),
          storageUnitLimitBytes == null
              ? OptionalLong.empty()
              : OptionalLong.of(storageUnitLimitBytes));
    }
  }
}
