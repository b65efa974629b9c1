package org.transferqueue.config;

import java.util.Objects;

/**
 * SSD offload settings of the object-store backend (YAML section {@code
 * backend.MooncakeStore.offload}). This build has no SSD tier: {@code enabled} only switches the
 * automatic hard pin off (as upstream) and, like the offload client's settings, is reported by
 * {@link TqConfig#warnings()}; the two eviction ratios set when the object store evicts objects
 * that are not hard-pinned, in every embedded store and store node.
 *
 * @param enabled whether upstream offloads evicted objects to SSD; also switches automatic hard pin
 *     off
 * @param fileStoragePath the offload directory
 * @param localBufferSizeBytes the offload client buffer
 * @param useUring whether offload I/O uses io_uring
 * @param heartbeatIntervalSeconds the offload client's heartbeat period; far below the client TTL
 * @param clientPort the offload client port
 * @param evictionHighWatermarkRatio memory use ratio above which the store evicts objects that are
 *     not hard-pinned
 * @param evictionRatio fraction of the capacity an eviction frees below the watermark
 */
public record MooncakeOffloadConfig(
    boolean enabled,
    String fileStoragePath,
    long localBufferSizeBytes,
    boolean useUring,
    int heartbeatIntervalSeconds,
    int clientPort,
    double evictionHighWatermarkRatio,
    double evictionRatio) {

  /** Key of {@link #enabled()}. */
  public static final String ENABLED_PROP_NAME = "backend.MooncakeStore.offload.enabled";

  /** Default of {@link #enabled()}. */
  public static final boolean ENABLED_DEFAULT = false;

  /** Key of {@link #fileStoragePath()}. */
  public static final String FILE_STORAGE_PATH_PROP_NAME =
      "backend.MooncakeStore.offload.file_storage_path";

  /** Default of {@link #fileStoragePath()}. */
  public static final String FILE_STORAGE_PATH_DEFAULT = "/tmp/mooncake_offload";

  /** Key of {@link #localBufferSizeBytes()}. */
  public static final String LOCAL_BUFFER_SIZE_BYTES_PROP_NAME =
      "backend.MooncakeStore.offload.local_buffer_size_bytes";

  /** Default of {@link #localBufferSizeBytes()}. */
  public static final long LOCAL_BUFFER_SIZE_BYTES_DEFAULT = 2_147_483_648L;

  /** Key of {@link #useUring()}. */
  public static final String USE_URING_PROP_NAME = "backend.MooncakeStore.offload.use_uring";

  /** Default of {@link #useUring()}. */
  public static final boolean USE_URING_DEFAULT = false;

  /** Key of {@link #heartbeatIntervalSeconds()}. */
  public static final String HEARTBEAT_INTERVAL_SECONDS_PROP_NAME =
      "backend.MooncakeStore.offload.heartbeat_interval_seconds";

  /** Default of {@link #heartbeatIntervalSeconds()}. */
  public static final int HEARTBEAT_INTERVAL_SECONDS_DEFAULT = 2;

  /** Key of {@link #clientPort()}. */
  public static final String CLIENT_PORT_PROP_NAME = "backend.MooncakeStore.offload.client_port";

  /** Default of {@link #clientPort()}. */
  public static final int CLIENT_PORT_DEFAULT = 42052;

  /** Key of {@link #evictionHighWatermarkRatio()}. */
  public static final String EVICTION_HIGH_WATERMARK_RATIO_PROP_NAME =
      "backend.MooncakeStore.offload.eviction_high_watermark_ratio";

  /** Default of {@link #evictionHighWatermarkRatio()}. */
  public static final double EVICTION_HIGH_WATERMARK_RATIO_DEFAULT = 0.9;

  /** Key of {@link #evictionRatio()}. */
  public static final String EVICTION_RATIO_PROP_NAME =
      "backend.MooncakeStore.offload.eviction_ratio";

  /** Default of {@link #evictionRatio()}. */
  public static final double EVICTION_RATIO_DEFAULT = 0.1;

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public MooncakeOffloadConfig {
    Problems p = new Problems();
    p.notBlank(FILE_STORAGE_PATH_PROP_NAME, fileStoragePath);
    p.atLeast(LOCAL_BUFFER_SIZE_BYTES_PROP_NAME, localBufferSizeBytes, 1);
    p.atLeast(HEARTBEAT_INTERVAL_SECONDS_PROP_NAME, heartbeatIntervalSeconds, 1);
    p.port(CLIENT_PORT_PROP_NAME, clientPort, false);
    p.ratio(EVICTION_HIGH_WATERMARK_RATIO_PROP_NAME, evictionHighWatermarkRatio);
    p.ratio(EVICTION_RATIO_PROP_NAME, evictionRatio);
    if (isRatio(evictionRatio)
        && isRatio(evictionHighWatermarkRatio)
        && evictionRatio > evictionHighWatermarkRatio) {
      p.add(
          EVICTION_RATIO_PROP_NAME,
          evictionRatio,
          "must not exceed "
              + EVICTION_HIGH_WATERMARK_RATIO_PROP_NAME
              + " "
              + evictionHighWatermarkRatio
              + " (eviction frees that fraction of the capacity below the watermark)");
    }
    p.throwIfAny();
  }

  private static boolean isRatio(double value) {
    return value > 0.0 && value <= 1.0;
  }

  /**
   * A builder holding the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Mutable builder of {@link MooncakeOffloadConfig}; not thread-safe. */
  public static final class Builder {
    private boolean enabled = ENABLED_DEFAULT;
    private String fileStoragePath = FILE_STORAGE_PATH_DEFAULT;
    private long localBufferSizeBytes = LOCAL_BUFFER_SIZE_BYTES_DEFAULT;
    private boolean useUring = USE_URING_DEFAULT;
    private int heartbeatIntervalSeconds = HEARTBEAT_INTERVAL_SECONDS_DEFAULT;
    private int clientPort = CLIENT_PORT_DEFAULT;
    private double evictionHighWatermarkRatio = EVICTION_HIGH_WATERMARK_RATIO_DEFAULT;
    private double evictionRatio = EVICTION_RATIO_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #ENABLED_PROP_NAME}.
     *
     * @param enabled whether evicted objects are offloaded to SSD; also switches automatic hard pin
     *     off
     * @return this builder
     */
    public Builder enabled(boolean enabled) {
      this.enabled = enabled;
      return this;
    }

    /**
     * Sets {@value #FILE_STORAGE_PATH_PROP_NAME}.
     *
     * @param fileStoragePath a non-blank path
     * @return this builder
     */
    public Builder fileStoragePath(String fileStoragePath) {
      this.fileStoragePath = Objects.requireNonNull(fileStoragePath, "fileStoragePath");
      return this;
    }

    /**
     * Sets {@value #LOCAL_BUFFER_SIZE_BYTES_PROP_NAME}.
     *
     * @param localBufferSizeBytes positive
     * @return this builder
     */
    public Builder localBufferSizeBytes(long localBufferSizeBytes) {
      this.localBufferSizeBytes = localBufferSizeBytes;
      return this;
    }

    /**
     * Sets {@value #USE_URING_PROP_NAME}.
     *
     * @param useUring whether offload I/O uses io_uring
     * @return this builder
     */
    public Builder useUring(boolean useUring) {
      this.useUring = useUring;
      return this;
    }

    /**
     * Sets {@value #HEARTBEAT_INTERVAL_SECONDS_PROP_NAME}.
     *
     * @param heartbeatIntervalSeconds at least 1
     * @return this builder
     */
    public Builder heartbeatIntervalSeconds(int heartbeatIntervalSeconds) {
      this.heartbeatIntervalSeconds = heartbeatIntervalSeconds;
      return this;
    }

    /**
     * Sets {@value #CLIENT_PORT_PROP_NAME}.
     *
     * @param clientPort 1-65535
     * @return this builder
     */
    public Builder clientPort(int clientPort) {
      this.clientPort = clientPort;
      return this;
    }

    /**
     * Sets {@value #EVICTION_HIGH_WATERMARK_RATIO_PROP_NAME}.
     *
     * @param evictionHighWatermarkRatio in (0, 1]
     * @return this builder
     */
    public Builder evictionHighWatermarkRatio(double evictionHighWatermarkRatio) {
      this.evictionHighWatermarkRatio = evictionHighWatermarkRatio;
      return this;
    }

    /**
     * Sets {@value #EVICTION_RATIO_PROP_NAME}.
     *
     * @param evictionRatio in (0, 1]
     * @return this builder
     */
    public Builder evictionRatio(double evictionRatio) {
      this.evictionRatio = evictionRatio;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public MooncakeOffloadConfig build() {
      return new MooncakeOffloadConfig(
          enabled,
          fileStoragePath,
          localBufferSizeBytes,
          useUring,
          heartbeatIntervalSeconds,
          clientPort,
          evictionHighWatermarkRatio,
          evictionRatio);
    }
  }
}
