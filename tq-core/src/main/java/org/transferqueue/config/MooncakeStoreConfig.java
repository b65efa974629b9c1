package org.transferqueue.config;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Object-store client settings (YAML section {@code backend.MooncakeStore}), with the upstream keys
 * of the Mooncake backend plus the batching and retry limits of its client.
 *
 * <p>Objects are hard-pinned (never evicted) unless {@code hard_pin} says otherwise; when {@code
 * hard_pin} is not set, it follows {@code !offload.enabled} ({@link #effectiveHardPin()}), as
 * upstream, which unpins so that eviction can move objects to SSD. This build has no SSD tier:
 * {@link TqConfig#warnings()} says that such objects are lost when evicted.
 *
 * <p>Settings of upstream's Mooncake deployment that have no counterpart here (the metadata server
 * and master addresses, RDMA, the network device, GPU-direct, the offload client) are validated as
 * upstream validates them and reported by {@link TqConfig#warnings()} when they differ from their
 * defaults. {@code auto_init} and the offload's eviction ratios take effect (see their keys in
 * {@code config/tq.yaml}).
 *
 * @param autoInit whether a process without store nodes to use may start an object store of its own
 *     (an embedded system, a client without {@code network.store_node_addresses}); false: the store
 *     runs elsewhere and {@code network.store_node_addresses} must list its nodes
 * @param metadataServer the transfer metadata server: {@code host:port}, an {@code http://}, {@code
 *     https://} or {@code etcd://} URL, or {@code P2PHANDSHAKE}
 * @param masterServerAddress the store master
 * @param localHostname the address other nodes reach this client at; empty = this node's address
 * @param protocol the transfer protocol
 * @param globalSegmentSize bytes this client contributes to the store; 0 = only a requester
 * @param localBufferSize bytes of this client's registered transfer buffer
 * @param deviceName the network device; empty = chosen automatically
 * @param hardPin whether writes are hard-pinned; empty = automatic ({@link #effectiveHardPin()})
 * @param offload the SSD offload settings
 * @param useGdr whether GPU-direct RDMA is used (requires {@code protocol: rdma})
 * @param gdrStagingBufferMb size of the GPU-direct staging buffer in MiB; 0 disables it
 * @param batchSizeLimit keys per store call and per worker task
 * @param maxBatchWorkerThreads parallel batch tasks per put or get
 * @param maxSerialWorkerThreads parallel packing tasks per batch of non-tensor values
 * @param maxRetries retries of keys that failed with a transient code
 * @param retryDelay the pause before the second and later retries
 */
public record MooncakeStoreConfig(
    boolean autoInit,
    String metadataServer,
    HostPort masterServerAddress,
    String localHostname,
    TransportProtocol protocol,
    long globalSegmentSize,
    long localBufferSize,
    String deviceName,
    Optional<Boolean> hardPin,
    MooncakeOffloadConfig offload,
    boolean useGdr,
    int gdrStagingBufferMb,
    int batchSizeLimit,
    int maxBatchWorkerThreads,
    int maxSerialWorkerThreads,
    int maxRetries,
    Duration retryDelay) {

  /** Key of {@link #autoInit()}. */
  public static final String AUTO_INIT_PROP_NAME = "backend.MooncakeStore.auto_init";

  /** Default of {@link #autoInit()}. */
  public static final boolean AUTO_INIT_DEFAULT = true;

  /** Key of {@link #metadataServer()}. */
  public static final String METADATA_SERVER_PROP_NAME = "backend.MooncakeStore.metadata_server";

  /** Default of {@link #metadataServer()}. */
  public static final String METADATA_SERVER_DEFAULT = "localhost:50050";

  /** Key of {@link #masterServerAddress()}. */
  public static final String MASTER_SERVER_ADDRESS_PROP_NAME =
      "backend.MooncakeStore.master_server_address";

  /** Default of {@link #masterServerAddress()}. */
  public static final HostPort MASTER_SERVER_ADDRESS_DEFAULT = new HostPort("localhost", 50051);

  /** Key of {@link #localHostname()}. */
  public static final String LOCAL_HOSTNAME_PROP_NAME = "backend.MooncakeStore.local_hostname";

  /** Default of {@link #localHostname()}. */
  public static final String LOCAL_HOSTNAME_DEFAULT = "";

  /** Key of {@link #protocol()}. */
  public static final String PROTOCOL_PROP_NAME = "backend.MooncakeStore.protocol";

  /** Default of {@link #protocol()}. */
  public static final TransportProtocol PROTOCOL_DEFAULT = TransportProtocol.TCP;

  /** Key of {@link #globalSegmentSize()}. */
  public static final String GLOBAL_SEGMENT_SIZE_PROP_NAME =
      "backend.MooncakeStore.global_segment_size";

  /** Default of {@link #globalSegmentSize()}. */
  public static final long GLOBAL_SEGMENT_SIZE_DEFAULT = Defaults.GLOBAL_SEGMENT_SIZE;

  /** Key of {@link #localBufferSize()}. */
  public static final String LOCAL_BUFFER_SIZE_PROP_NAME =
      "backend.MooncakeStore.local_buffer_size";

  /** Default of {@link #localBufferSize()}. */
  public static final long LOCAL_BUFFER_SIZE_DEFAULT = Defaults.LOCAL_BUFFER_SIZE;

  /** Key of {@link #deviceName()}. */
  public static final String DEVICE_NAME_PROP_NAME = "backend.MooncakeStore.device_name";

  /** Default of {@link #deviceName()}. */
  public static final String DEVICE_NAME_DEFAULT = "";

  /** Key of {@link #hardPin()}. */
  public static final String HARD_PIN_PROP_NAME = "backend.MooncakeStore.hard_pin";

  /** Default of {@link #hardPin()}: automatic. */
  public static final Optional<Boolean> HARD_PIN_DEFAULT = Optional.empty();

  /** Key of {@link #offload()}. */
  public static final String OFFLOAD_PROP_NAME = "backend.MooncakeStore.offload";

  /** Default of {@link #offload()}. */
  public static final MooncakeOffloadConfig OFFLOAD_DEFAULT =
      MooncakeOffloadConfig.builder().build();

  /** Key of {@link #useGdr()}. */
  public static final String USE_GDR_PROP_NAME = "backend.MooncakeStore.use_gdr";

  /** Default of {@link #useGdr()}. */
  public static final boolean USE_GDR_DEFAULT = false;

  /** Key of {@link #gdrStagingBufferMb()}. */
  public static final String GDR_STAGING_BUFFER_MB_PROP_NAME =
      "backend.MooncakeStore.gdr_staging_buffer_mb";

  /** Default of {@link #gdrStagingBufferMb()}. */
  public static final int GDR_STAGING_BUFFER_MB_DEFAULT = 1024;

  /** Key of {@link #batchSizeLimit()}. */
  public static final String BATCH_SIZE_LIMIT_PROP_NAME = "backend.MooncakeStore.batch_size_limit";

  /** Default of {@link #batchSizeLimit()}. */
  public static final int BATCH_SIZE_LIMIT_DEFAULT = Defaults.BATCH_SIZE_LIMIT;

  /** Key of {@link #maxBatchWorkerThreads()}. */
  public static final String MAX_BATCH_WORKER_THREADS_PROP_NAME =
      "backend.MooncakeStore.max_batch_worker_threads";

  /** Default of {@link #maxBatchWorkerThreads()}. */
  public static final int MAX_BATCH_WORKER_THREADS_DEFAULT = Defaults.MAX_BATCH_WORKER_THREADS;

  /** Key of {@link #maxSerialWorkerThreads()}. */
  public static final String MAX_SERIAL_WORKER_THREADS_PROP_NAME =
      "backend.MooncakeStore.max_serial_worker_threads";

  /** Default of {@link #maxSerialWorkerThreads()}. */
  public static final int MAX_SERIAL_WORKER_THREADS_DEFAULT = 4;

  /** Key of {@link #maxRetries()}. */
  public static final String MAX_RETRIES_PROP_NAME = "backend.MooncakeStore.max_retries";

  /** Default of {@link #maxRetries()}. */
  public static final int MAX_RETRIES_DEFAULT = Defaults.MAX_RETRIES;

  /** Key of {@link #retryDelay()}. */
  public static final String RETRY_DELAY_PROP_NAME = "backend.MooncakeStore.retry_delay";

  /** Default of {@link #retryDelay()}. */
  public static final Duration RETRY_DELAY_DEFAULT = Defaults.RETRY_DELAY;

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public MooncakeStoreConfig {
    Problems p = new Problems();
    String metadataProblem = metadataServerProblem(metadataServer);
    if (metadataProblem != null) {
      p.add(METADATA_SERVER_PROP_NAME, metadataServer, metadataProblem);
    }
    p.notNull(MASTER_SERVER_ADDRESS_PROP_NAME, masterServerAddress);
    if (localHostname == null) {
      p.notNull(LOCAL_HOSTNAME_PROP_NAME, null);
    } else if (!localHostname.isEmpty() && !isHostOrHostPort(localHostname)) {
      p.add(LOCAL_HOSTNAME_PROP_NAME, localHostname, "is not a host, host:port or empty");
    }
    p.notNull(PROTOCOL_PROP_NAME, protocol);
    segmentSize(p, GLOBAL_SEGMENT_SIZE_PROP_NAME, globalSegmentSize);
    segmentSize(p, LOCAL_BUFFER_SIZE_PROP_NAME, localBufferSize);
    p.notNull(DEVICE_NAME_PROP_NAME, deviceName);
    p.notNull(HARD_PIN_PROP_NAME, hardPin);
    p.notNull(OFFLOAD_PROP_NAME, offload);
    if (useGdr && protocol != TransportProtocol.RDMA) {
      p.add(
          USE_GDR_PROP_NAME,
          true,
          "requires "
              + PROTOCOL_PROP_NAME
              + ": rdma, but got "
              + (protocol == null ? "null" : protocol.configName()));
    }
    p.atLeast(GDR_STAGING_BUFFER_MB_PROP_NAME, gdrStagingBufferMb, 0);
    p.atLeast(BATCH_SIZE_LIMIT_PROP_NAME, batchSizeLimit, 1);
    p.atLeast(MAX_BATCH_WORKER_THREADS_PROP_NAME, maxBatchWorkerThreads, 1);
    p.atLeast(MAX_SERIAL_WORKER_THREADS_PROP_NAME, maxSerialWorkerThreads, 1);
    p.atLeast(MAX_RETRIES_PROP_NAME, maxRetries, 0);
    p.notNegative(RETRY_DELAY_PROP_NAME, retryDelay);
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

  /** Smallest non-zero segment or buffer size, as the store validates it. */
  public static final long MIN_SEGMENT_BYTES = Defaults.MIN_SEGMENT_BYTES;

  /** Largest segment or buffer size, as the store validates it. */
  public static final long MAX_SEGMENT_BYTES = Defaults.MAX_SEGMENT_BYTES;

  /** The value of {@code metadata_server} that selects peer-to-peer handshake. */
  public static final String P2P_HANDSHAKE = "P2PHANDSHAKE";

  private static void segmentSize(Problems p, String key, long bytes) {
    if (bytes != 0 && (bytes < MIN_SEGMENT_BYTES || bytes > MAX_SEGMENT_BYTES)) {
      p.add(key, bytes, "is not 0 or in [" + MIN_SEGMENT_BYTES + ", " + MAX_SEGMENT_BYTES + "]");
    }
  }

  private static boolean isP2pHandshake(String value) {
    return value.strip().equalsIgnoreCase(P2P_HANDSHAKE);
  }

  private static boolean isHostOrHostPort(String value) {
    if (HostPort.isValidHost(value)) {
      return true;
    }
    try {
      HostPort.parse(value);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static String metadataServerProblem(String value) {
    if (value == null || value.isBlank()) {
      return "must be host:port, a URL or " + P2P_HANDSHAKE;
    }
    if (isP2pHandshake(value)) {
      return null;
    }
    String rest = value.strip();
    for (String scheme : List.of("http://", "https://", "etcd://")) {
      if (rest.startsWith(scheme)) {
        rest = rest.substring(scheme.length());
        break;
      }
    }
    int slash = rest.indexOf('/');
    String authority = slash < 0 ? rest : rest.substring(0, slash);
    try {
      HostPort.parse(authority);
      return null;
    } catch (IllegalArgumentException e) {
      return "needs a host and a port (host:port, http://host:port, etcd://host:port or "
          + P2P_HANDSHAKE
          + ")";
    }
  }

  /**
   * Whether writes are hard-pinned: {@link #hardPin()} when set, otherwise {@code
   * !offload().enabled()} (offload needs evictable objects).
   *
   * @return the pin setting used for every write
   */
  public boolean effectiveHardPin() {
    return hardPin.orElse(!offload.enabled());
  }

  /**
   * Whether the GPU-direct path may be used: {@code use_gdr} and a non-empty staging buffer.
   *
   * @return true when both are set
   */
  public boolean gdrRequested() {
    return useGdr && gdrStagingBufferMb > 0;
  }

  /**
   * The metadata server in the form the transfer engine takes: {@code P2PHANDSHAKE}; an {@code
   * etcd://} URL unchanged; otherwise an HTTP URL ending in {@code /metadata} ({@code
   * localhost:50050} becomes {@code http://localhost:50050/metadata}; {@code https://} is kept).
   *
   * @return the normalised address
   */
  public String metadataServerUrl() {
    String v = metadataServer.strip();
    if (isP2pHandshake(v)) {
      return P2P_HANDSHAKE;
    }
    if (v.startsWith("etcd://")) {
      return v;
    }
    String url = v.startsWith("http://") || v.startsWith("https://") ? v : "http://" + v;
    return url.endsWith("/metadata") ? url : url + "/metadata";
  }

  /** Mutable builder of {@link MooncakeStoreConfig}; not thread-safe. */
  public static final class Builder {
    private boolean autoInit = AUTO_INIT_DEFAULT;
    private String metadataServer = METADATA_SERVER_DEFAULT;
    private HostPort masterServerAddress = MASTER_SERVER_ADDRESS_DEFAULT;
    private String localHostname = LOCAL_HOSTNAME_DEFAULT;
    private TransportProtocol protocol = PROTOCOL_DEFAULT;
    private long globalSegmentSize = GLOBAL_SEGMENT_SIZE_DEFAULT;
    private long localBufferSize = LOCAL_BUFFER_SIZE_DEFAULT;
    private String deviceName = DEVICE_NAME_DEFAULT;
    private Boolean hardPin = null;
    private final MooncakeOffloadConfig.Builder offload = MooncakeOffloadConfig.builder();
    private boolean useGdr = USE_GDR_DEFAULT;
    private int gdrStagingBufferMb = GDR_STAGING_BUFFER_MB_DEFAULT;
    private int batchSizeLimit = BATCH_SIZE_LIMIT_DEFAULT;
    private int maxBatchWorkerThreads = MAX_BATCH_WORKER_THREADS_DEFAULT;
    private int maxSerialWorkerThreads = MAX_SERIAL_WORKER_THREADS_DEFAULT;
    private int maxRetries = MAX_RETRIES_DEFAULT;
    private Duration retryDelay = RETRY_DELAY_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #AUTO_INIT_PROP_NAME}.
     *
     * @param autoInit false: the object store runs elsewhere (at {@code
     *     network.store_node_addresses})
     * @return this builder
     */
    public Builder autoInit(boolean autoInit) {
      this.autoInit = autoInit;
      return this;
    }

    /**
     * Sets {@value #METADATA_SERVER_PROP_NAME}.
     *
     * @param metadataServer host:port, a URL or P2PHANDSHAKE
     * @return this builder
     */
    public Builder metadataServer(String metadataServer) {
      this.metadataServer = Objects.requireNonNull(metadataServer, "metadataServer");
      return this;
    }

    /**
     * Sets {@value #MASTER_SERVER_ADDRESS_PROP_NAME}.
     *
     * @param masterServerAddress the master address
     * @return this builder
     */
    public Builder masterServerAddress(HostPort masterServerAddress) {
      this.masterServerAddress = Objects.requireNonNull(masterServerAddress, "masterServerAddress");
      return this;
    }

    /**
     * Sets {@value #LOCAL_HOSTNAME_PROP_NAME}.
     *
     * @param localHostname a host, host:port, or empty
     * @return this builder
     */
    public Builder localHostname(String localHostname) {
      this.localHostname = Objects.requireNonNull(localHostname, "localHostname");
      return this;
    }

    /**
     * Sets {@value #PROTOCOL_PROP_NAME}.
     *
     * @param protocol tcp or rdma
     * @return this builder
     */
    public Builder protocol(TransportProtocol protocol) {
      this.protocol = Objects.requireNonNull(protocol, "protocol");
      return this;
    }

    /**
     * Sets {@value #GLOBAL_SEGMENT_SIZE_PROP_NAME}.
     *
     * @param globalSegmentSize 0, or 1 KiB to 1 TiB
     * @return this builder
     */
    public Builder globalSegmentSize(long globalSegmentSize) {
      this.globalSegmentSize = globalSegmentSize;
      return this;
    }

    /**
     * Sets {@value #LOCAL_BUFFER_SIZE_PROP_NAME}.
     *
     * @param localBufferSize 0, or 1 KiB to 1 TiB
     * @return this builder
     */
    public Builder localBufferSize(long localBufferSize) {
      this.localBufferSize = localBufferSize;
      return this;
    }

    /**
     * Sets {@value #DEVICE_NAME_PROP_NAME}.
     *
     * @param deviceName a device name or empty
     * @return this builder
     */
    public Builder deviceName(String deviceName) {
      this.deviceName = Objects.requireNonNull(deviceName, "deviceName");
      return this;
    }

    /**
     * Sets {@value #HARD_PIN_PROP_NAME}.
     *
     * @param hardPin true, false, or null for automatic
     * @return this builder
     */
    public Builder hardPin(Boolean hardPin) {
      this.hardPin = hardPin;
      return this;
    }

    /**
     * Changes the settings of {@value #OFFLOAD_PROP_NAME}.
     *
     * @param change applied to the offload builder, which starts with the defaults
     * @return this builder
     */
    public Builder offload(Consumer<MooncakeOffloadConfig.Builder> change) {
      change.accept(offload);
      return this;
    }

    MooncakeOffloadConfig.Builder offloadBuilder() {
      return offload;
    }

    /**
     * Sets {@value #USE_GDR_PROP_NAME}.
     *
     * @param useGdr whether GPU-direct RDMA is used (requires {@code protocol: rdma})
     * @return this builder
     */
    public Builder useGdr(boolean useGdr) {
      this.useGdr = useGdr;
      return this;
    }

    /**
     * Sets {@value #GDR_STAGING_BUFFER_MB_PROP_NAME}.
     *
     * @param gdrStagingBufferMb at least 0
     * @return this builder
     */
    public Builder gdrStagingBufferMb(int gdrStagingBufferMb) {
      this.gdrStagingBufferMb = gdrStagingBufferMb;
      return this;
    }

    /**
     * Sets {@value #BATCH_SIZE_LIMIT_PROP_NAME}.
     *
     * @param batchSizeLimit at least 1
     * @return this builder
     */
    public Builder batchSizeLimit(int batchSizeLimit) {
      this.batchSizeLimit = batchSizeLimit;
      return this;
    }

    /**
     * Sets {@value #MAX_BATCH_WORKER_THREADS_PROP_NAME}.
     *
     * @param maxBatchWorkerThreads at least 1
     * @return this builder
     */
    public Builder maxBatchWorkerThreads(int maxBatchWorkerThreads) {
      this.maxBatchWorkerThreads = maxBatchWorkerThreads;
      return this;
    }

    /**
     * Sets {@value #MAX_SERIAL_WORKER_THREADS_PROP_NAME}.
     *
     * @param maxSerialWorkerThreads at least 1
     * @return this builder
     */
    public Builder maxSerialWorkerThreads(int maxSerialWorkerThreads) {
      this.maxSerialWorkerThreads = maxSerialWorkerThreads;
      return this;
    }

    /**
     * Sets {@value #MAX_RETRIES_PROP_NAME}.
     *
     * @param maxRetries at least 0
     * @return this builder
     */
    public Builder maxRetries(int maxRetries) {
      this.maxRetries = maxRetries;
      return this;
    }

    /**
     * Sets {@value #RETRY_DELAY_PROP_NAME}.
     *
     * @param retryDelay at least 0
     * @return this builder
     */
    public Builder retryDelay(Duration retryDelay) {
      this.retryDelay = Objects.requireNonNull(retryDelay, "retryDelay");
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public MooncakeStoreConfig build() {
      // Build the offload part first and keep going, so one pass reports every problem.
      Problems p = new Problems();
      MooncakeOffloadConfig off = p.collect(offload::build);
      MooncakeStoreConfig built =
          p.collect(
              () ->
                  new MooncakeStoreConfig(
                      autoInit,
                      metadataServer,
                      masterServerAddress,
                      localHostname,
                      protocol,
                      globalSegmentSize,
                      localBufferSize,
                      deviceName,
                      Optional.ofNullable(hardPin),
                      off == null ? OFFLOAD_DEFAULT : off,
                      useGdr,
                      gdrStagingBufferMb,
                      batchSizeLimit,
                      maxBatchWorkerThreads,
                      maxSerialWorkerThreads,
                      maxRetries,
                      retryDelay));
      p.throwIfAny();
      return built;
    }
  }
}
