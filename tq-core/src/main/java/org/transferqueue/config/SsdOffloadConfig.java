package org.transferqueue.config;

import java.util.Optional;

/**
 * Upstream's SSD offload of SimpleStorage (YAML section {@code backend.SimpleStorage.ssd_offload},
 * upstream 0.1.11 and later), accepted so that upstream's file loads. Storage units of this build
 * keep every cell in memory: the settings are validated, and {@link TqConfig#warnings()} names
 * those that were changed from their defaults, once at start-up.
 *
 * @param enabled whether upstream writes large values to SSD
 * @param path the directory upstream writes to; empty = none
 * @param thresholdBytes the encoded size from which upstream writes a sample to SSD
 * @param glibcMmapThresholdBytes upstream's allocator tuning
 */
public record SsdOffloadConfig(
    boolean enabled, Optional<String> path, long thresholdBytes, long glibcMmapThresholdBytes) {

  /** The section's path. */
  public static final String SECTION = "backend.SimpleStorage.ssd_offload";

  /** Key of {@link #enabled()}. */
  public static final String ENABLED_PROP_NAME = SECTION + ".enabled";

  /** Default of {@link #enabled()}. */
  public static final boolean ENABLED_DEFAULT = false;

  /** Key of {@link #path()}. */
  public static final String PATH_PROP_NAME = SECTION + ".path";

  /** Default of {@link #path()}: none. */
  public static final Optional<String> PATH_DEFAULT = Optional.empty();

  /** Key of {@link #thresholdBytes()}. */
  public static final String THRESHOLD_BYTES_PROP_NAME = SECTION + ".threshold_bytes";

  /** Default of {@link #thresholdBytes()}. */
  public static final long THRESHOLD_BYTES_DEFAULT = 1_048_576L;

  /** Key of {@link #glibcMmapThresholdBytes()}. */
  public static final String GLIBC_MMAP_THRESHOLD_BYTES_PROP_NAME =
      SECTION + ".glibc_mmap_threshold_bytes";

  /** Default of {@link #glibcMmapThresholdBytes()}. */
  public static final long GLIBC_MMAP_THRESHOLD_BYTES_DEFAULT = 1_048_576L;

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public SsdOffloadConfig {
    Problems p = new Problems();
    p.notNull(PATH_PROP_NAME, path);
    p.atLeast(THRESHOLD_BYTES_PROP_NAME, thresholdBytes, 0);
    p.atLeast(GLIBC_MMAP_THRESHOLD_BYTES_PROP_NAME, glibcMmapThresholdBytes, 0);
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

  /** Mutable builder of {@link SsdOffloadConfig}; not thread-safe. */
  public static final class Builder {
    private boolean enabled = ENABLED_DEFAULT;
    private String path;
    private long thresholdBytes = THRESHOLD_BYTES_DEFAULT;
    private long glibcMmapThresholdBytes = GLIBC_MMAP_THRESHOLD_BYTES_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #ENABLED_PROP_NAME}.
     *
     * @param enabled the value
     * @return this builder
     */
    public Builder enabled(boolean enabled) {
      this.enabled = enabled;
      return this;
    }

    /**
     * Sets {@value #PATH_PROP_NAME}.
     *
     * @param path a directory, or null for none
     * @return this builder
     */
    public Builder path(String path) {
      this.path = path;
      return this;
    }

    /**
     * Sets {@value #THRESHOLD_BYTES_PROP_NAME}.
     *
     * @param bytes not negative
     * @return this builder
     */
    public Builder thresholdBytes(long bytes) {
      this.thresholdBytes = bytes;
      return this;
    }

    /**
     * Sets {@value #GLIBC_MMAP_THRESHOLD_BYTES_PROP_NAME}.
     *
     * @param bytes not negative
     * @return this builder
     */
    public Builder glibcMmapThresholdBytes(long bytes) {
      this.glibcMmapThresholdBytes = bytes;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public SsdOffloadConfig build() {
      return new SsdOffloadConfig(
          enabled, Optional.ofNullable(path), thresholdBytes, glibcMmapThresholdBytes);
    }
  }
}
