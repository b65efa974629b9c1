package org.transferqueue.config;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * One configuration key: its dotted name (the upstream YAML path), its type, whether it may be
 * null, the environment variable that overrides it, and how it is set on a {@link
 * TqConfig.Builder}. {@link #all()} lists every key the system reads; anything else is an unknown
 * key.
 *
 * <p>Setting a key checks only the type; ranges and cross-key rules are checked by {@link
 * TqConfig.Builder#build()}. Instances are immutable and thread-safe.
 *
 * @param <T> the Java type of the value
 */
public final class ConfigKey<T> {

  @FunctionalInterface
  private interface Reader<T> {
    T read(Object raw, boolean text);
  }

  private record Type<T>(String description, Reader<T> reader, boolean mapping) {
    Type(String description, Reader<T> reader) {
      this(description, reader, false);
    }
  }

  private static final Type<Boolean> BOOLEAN = new Type<>("a boolean", ConfigValues::toBoolean);
  private static final Type<Integer> INT = new Type<>("an integer", ConfigValues::toInt);
  private static final Type<Long> LONG = new Type<>("an integer", ConfigValues::toLong);
  private static final Type<Double> DOUBLE = new Type<>("a number", ConfigValues::toDouble);
  private static final Type<String> STRING = new Type<>("a string", ConfigValues::toText);
  private static final Type<Duration> DURATION = new Type<>("a duration", ConfigValues::toDuration);
  private static final Type<HostPort> HOST_PORT = new Type<>("host:port", ConfigValues::toHostPort);
  private static final Type<List<HostPort>> HOST_PORTS =
      new Type<>("a list of host:port", ConfigValues::toHostPortList);
  private static final Type<System.Logger.Level> LOG_LEVEL =
      new Type<>("a log level", ConfigValues::toLogLevel);
  private static final Type<StorageBackend> BACKEND =
      new Type<>(
          "a storage backend",
          (raw, text) -> StorageBackend.fromConfigName(ConfigValues.toText(raw, text).strip()));
  private static final Type<Durability> DURABILITY =
      new Type<>(
          "a durability",
          (raw, text) -> Durability.fromConfigName(ConfigValues.toText(raw, text).strip()));
  private static final Type<Map<String, Object>> MAPPING =
      new Type<>("a mapping of names to values", ConfigValues::toMapping, true);
  private static final Type<Map<String, String>> TEXT_MAPPING =
      new Type<>("a mapping of names to strings", ConfigValues::toTextMapping, true);
  private static final Type<TransportProtocol> PROTOCOL =
      new Type<>(
          "a protocol",
          (raw, text) -> TransportProtocol.fromConfigName(ConfigValues.toText(raw, text).strip()));

  private static final List<ConfigKey<?>> ALL = registry();
  private static final Map<String, ConfigKey<?>> BY_KEY = index();

  private final String key;
  private final String environmentVariable;
  private final Type<T> type;
  private final boolean nullable;
  private final boolean secret;
  private final BiConsumer<TqConfig.Builder, T> setter;

  private ConfigKey(
      String key,
      String environmentVariable,
      Type<T> type,
      boolean nullable,
      boolean secret,
      BiConsumer<TqConfig.Builder, T> setter) {
    this.key = key;
    this.environmentVariable = environmentVariable;
    this.type = type;
    this.nullable = nullable;
    this.secret = secret;
    this.setter = setter;
  }

  private static <T> ConfigKey<T> key(
      String key, Type<T> type, BiConsumer<TqConfig.Builder, T> setter) {
    return new ConfigKey<>(key, null, type, false, false, setter);
  }

  private static <T> ConfigKey<T> env(
      String key, String variable, Type<T> type, BiConsumer<TqConfig.Builder, T> setter) {
    return new ConfigKey<>(key, variable, type, false, false, setter);
  }

  private static <T> ConfigKey<T> nullable(
      String key, String variable, Type<T> type, BiConsumer<TqConfig.Builder, T> setter) {
    return new ConfigKey<>(key, variable, type, true, false, setter);
  }

  private static List<ConfigKey<?>> registry() {
    return List.of(
        // metrics
        key(MetricsConfig.ENABLED_PROP_NAME, BOOLEAN, (b, v) -> b.metrics.enabled(v)),
        key(MetricsConfig.PORT_PROP_NAME, INT, (b, v) -> b.metrics.port(v)),
        env(
            MetricsConfig.COLLECT_INTERVAL_PROP_NAME,
            "TQ_METRICS_COLLECT_INTERVAL",
            DURATION,
            (b, v) -> b.metrics.collectInterval(v)),
        env(
            MetricsConfig.STORAGE_TIMEOUT_PROP_NAME,
            "TQ_METRICS_STORAGE_TIMEOUT",
            DURATION,
            (b, v) -> b.metrics.storageTimeout(v)),
        // logging
        env(
            LoggingConfig.LEVEL_PROP_NAME,
            "TQ_LOGGING_LEVEL",
            LOG_LEVEL,
            (b, v) -> b.logging.level(v)),
        env(
            LoggingConfig.PERF_LOG_FLUSH_INTERVAL_PROP_NAME,
            "TQ_PERF_LOG_FLUSH_INTERVAL",
            DURATION,
            (b, v) -> b.logging.perfLogFlushInterval(v)),
        // controller
        key(ControllerConfig.SAMPLER_PROP_NAME, STRING, (b, v) -> b.controller.sampler(v)),
        key(
            ControllerConfig.POLLING_MODE_PROP_NAME,
            BOOLEAN,
            (b, v) -> b.controller.pollingMode(v)),
        env(
            ControllerConfig.PREALLOC_SAMPLE_NUM_PROP_NAME,
            "TQ_PRE_ALLOC_SAMPLE_NUM",
            INT,
            (b, v) -> b.controller.preallocSampleNum(v)),
        env(
            ControllerConfig.GET_METADATA_TIMEOUT_PROP_NAME,
            "TQ_CONTROLLER_GET_METADATA_TIMEOUT",
            DURATION,
            (b, v) -> b.controller.getMetadataTimeout(v)),
        env(
            ControllerConfig.GET_METADATA_CHECK_INTERVAL_PROP_NAME,
            "TQ_CONTROLLER_GET_METADATA_CHECK_INTERVAL",
            DURATION,
            (b, v) -> b.controller.getMetadataCheckInterval(v)),
        key(
            ControllerConfig.SAMPLER_ARGS_PROP_NAME,
            MAPPING,
            (b, v) -> b.controller.samplerArgs(v)),
        env(
            ControllerConfig.DURABILITY_PROP_NAME,
            "TQ_CONTROLLER_DURABILITY",
            DURABILITY,
            (b, v) -> b.controller.durability(v)),
        // backend
        key(
            BackendConfig.STORAGE_BACKEND_PROP_NAME,
            BACKEND,
            (b, v) -> b.backend.storageBackend(v)),
        nullable(
            SimpleStorageConfig.TOTAL_STORAGE_SIZE_PROP_NAME,
            null,
            LONG,
            (b, v) -> b.backend.simpleStorageBuilder().totalStorageSize(v)),
        key(
            SimpleStorageConfig.NUM_DATA_STORAGE_UNITS_PROP_NAME,
            INT,
            (b, v) -> b.backend.simpleStorageBuilder().numDataStorageUnits(v)),
        env(
            SimpleStorageConfig.SEND_RECV_TIMEOUT_PROP_NAME,
            "TQ_SIMPLE_STORAGE_SEND_RECV_TIMEOUT",
            DURATION,
            (b, v) -> b.backend.simpleStorageBuilder().sendRecvTimeout(v)),
        nullable(
            SimpleStorageConfig.REQUIRED_NODE_RESOURCE_PROP_NAME,
            null,
            STRING,
            (b, v) -> b.backend.simpleStorageBuilder().requiredNodeResource(v)),
        key(SsdOffloadConfig.ENABLED_PROP_NAME, BOOLEAN, (b, v) -> ssd(b).enabled(v)),
        nullable(SsdOffloadConfig.PATH_PROP_NAME, null, STRING, (b, v) -> ssd(b).path(v)),
        key(SsdOffloadConfig.THRESHOLD_BYTES_PROP_NAME, LONG, (b, v) -> ssd(b).thresholdBytes(v)),
        key(
            SsdOffloadConfig.GLIBC_MMAP_THRESHOLD_BYTES_PROP_NAME,
            LONG,
            (b, v) -> ssd(b).glibcMmapThresholdBytes(v)),
        key(MooncakeStoreConfig.AUTO_INIT_PROP_NAME, BOOLEAN, (b, v) -> mc(b).autoInit(v)),
        key(
            MooncakeStoreConfig.METADATA_SERVER_PROP_NAME,
            STRING,
            (b, v) -> mc(b).metadataServer(v)),
        key(
            MooncakeStoreConfig.MASTER_SERVER_ADDRESS_PROP_NAME,
            HOST_PORT,
            (b, v) -> mc(b).masterServerAddress(v)),
        key(MooncakeStoreConfig.LOCAL_HOSTNAME_PROP_NAME, STRING, (b, v) -> mc(b).localHostname(v)),
        key(MooncakeStoreConfig.PROTOCOL_PROP_NAME, PROTOCOL, (b, v) -> mc(b).protocol(v)),
        key(
            MooncakeStoreConfig.GLOBAL_SEGMENT_SIZE_PROP_NAME,
            LONG,
            (b, v) -> mc(b).globalSegmentSize(v)),
        key(
            MooncakeStoreConfig.LOCAL_BUFFER_SIZE_PROP_NAME,
            LONG,
            (b, v) -> mc(b).localBufferSize(v)),
        // Upstream turns a null device name into "" (auto-select).
        nullable(
            MooncakeStoreConfig.DEVICE_NAME_PROP_NAME,
            null,
            STRING,
            (b, v) -> mc(b).deviceName(v == null ? "" : v)),
        nullable(MooncakeStoreConfig.HARD_PIN_PROP_NAME, null, BOOLEAN, (b, v) -> mc(b).hardPin(v)),
        key(MooncakeOffloadConfig.ENABLED_PROP_NAME, BOOLEAN, (b, v) -> offload(b).enabled(v)),
        key(
            MooncakeOffloadConfig.FILE_STORAGE_PATH_PROP_NAME,
            STRING,
            (b, v) -> offload(b).fileStoragePath(v)),
        key(
            MooncakeOffloadConfig.LOCAL_BUFFER_SIZE_BYTES_PROP_NAME,
            LONG,
            (b, v) -> offload(b).localBufferSizeBytes(v)),
        key(MooncakeOffloadConfig.USE_URING_PROP_NAME, BOOLEAN, (b, v) -> offload(b).useUring(v)),
        key(
            MooncakeOffloadConfig.HEARTBEAT_INTERVAL_SECONDS_PROP_NAME,
            INT,
            (b, v) -> offload(b).heartbeatIntervalSeconds(v)),
        key(MooncakeOffloadConfig.CLIENT_PORT_PROP_NAME, INT, (b, v) -> offload(b).clientPort(v)),
        key(
            MooncakeOffloadConfig.EVICTION_HIGH_WATERMARK_RATIO_PROP_NAME,
            DOUBLE,
            (b, v) -> offload(b).evictionHighWatermarkRatio(v)),
        key(
            MooncakeOffloadConfig.EVICTION_RATIO_PROP_NAME,
            DOUBLE,
            (b, v) -> offload(b).evictionRatio(v)),
        key(MooncakeStoreConfig.USE_GDR_PROP_NAME, BOOLEAN, (b, v) -> mc(b).useGdr(v)),
        key(
            MooncakeStoreConfig.GDR_STAGING_BUFFER_MB_PROP_NAME,
            INT,
            (b, v) -> mc(b).gdrStagingBufferMb(v)),
        key(MooncakeStoreConfig.BATCH_SIZE_LIMIT_PROP_NAME, INT, (b, v) -> mc(b).batchSizeLimit(v)),
        key(
            MooncakeStoreConfig.MAX_BATCH_WORKER_THREADS_PROP_NAME,
            INT,
            (b, v) -> mc(b).maxBatchWorkerThreads(v)),
        key(
            MooncakeStoreConfig.MAX_SERIAL_WORKER_THREADS_PROP_NAME,
            INT,
            (b, v) -> mc(b).maxSerialWorkerThreads(v)),
        key(MooncakeStoreConfig.MAX_RETRIES_PROP_NAME, INT, (b, v) -> mc(b).maxRetries(v)),
        key(MooncakeStoreConfig.RETRY_DELAY_PROP_NAME, DURATION, (b, v) -> mc(b).retryDelay(v)),
        // upstream's Yuanrong backend, validated but not provided
        key(YuanrongConfig.AUTO_INIT_PROP_NAME, BOOLEAN, (b, v) -> yr(b).autoInit(v)),
        key(YuanrongConfig.WORKER_PORT_PROP_NAME, INT, (b, v) -> yr(b).workerPort(v)),
        key(YuanrongConfig.METASTORE_PORT_PROP_NAME, INT, (b, v) -> yr(b).metastorePort(v)),
        key(
            YuanrongConfig.ENABLE_YR_NPU_TRANSPORT_PROP_NAME,
            BOOLEAN,
            (b, v) -> yr(b).enableYrNpuTransport(v)),
        key(YuanrongConfig.DS_MAX_WORKERS_PROP_NAME, INT, (b, v) -> yr(b).dsMaxWorkers(v)),
        key(YuanrongConfig.ENABLE_RDMA_PROP_NAME, BOOLEAN, (b, v) -> yr(b).enableRdma(v)),
        key(YuanrongConfig.UCX_ENV_VARS_PROP_NAME, TEXT_MAPPING, (b, v) -> yr(b).ucxEnvVars(v)),
        key(YuanrongConfig.WORKER_ARGS_PROP_NAME, STRING, (b, v) -> yr(b).workerArgs(v)),
        // storage
        env(
            StorageConfig.POLLER_TIMEOUT_PROP_NAME,
            "TQ_STORAGE_POLLER_TIMEOUT",
            DURATION,
            (b, v) -> b.storage.pollerTimeout(v)),
        env(
            StorageConfig.HANDSHAKE_TIMEOUT_PROP_NAME,
            "TQ_STORAGE_HANDSHAKE_TIMEOUT",
            DURATION,
            (b, v) -> b.storage.handshakeTimeout(v)),
        env(
            StorageConfig.HANDSHAKE_RETRY_INTERVAL_PROP_NAME,
            "TQ_STORAGE_HANDSHAKE_RETRY_INTERVAL",
            DURATION,
            (b, v) -> b.storage.handshakeRetryInterval(v)),
        env(
            StorageConfig.HANDSHAKE_MAX_RETRIES_PROP_NAME,
            "TQ_STORAGE_HANDSHAKE_MAX_RETRIES",
            INT,
            (b, v) -> b.storage.handshakeMaxRetries(v)),
        env(
            StorageConfig.DATA_UPDATE_RESPONSE_TIMEOUT_PROP_NAME,
            "TQ_DATA_UPDATE_RESPONSE_TIMEOUT",
            DURATION,
            (b, v) -> b.storage.dataUpdateResponseTimeout(v)),
        env(
            StorageConfig.DURABILITY_PROP_NAME,
            "TQ_STORAGE_DURABILITY",
            DURABILITY,
            (b, v) -> b.storage.durability(v)),
        // client
        env(
            ClientConfig.NUM_THREADS_PROP_NAME,
            "TQ_NUM_THREADS",
            INT,
            (b, v) -> b.client.numThreads(v)),
        key(ClientConfig.REQUEST_TIMEOUT_PROP_NAME, DURATION, (b, v) -> b.client.requestTimeout(v)),
        env(
            ClientConfig.EMPTY_BATCH_SLEEP_INTERVAL_PROP_NAME,
            "TQ_STREAMING_DATASET_EMPTY_BATCH_SLEEP_INTERVAL",
            DURATION,
            (b, v) -> b.client.emptyBatchSleepInterval(v)),
        // memory
        nullable(MemoryConfig.LIMIT_BYTES_PROP_NAME, null, LONG, (b, v) -> b.memory.limitBytes(v)),
        nullable(
            MemoryConfig.STORAGE_UNIT_LIMIT_BYTES_PROP_NAME,
            null,
            LONG,
            (b, v) -> b.memory.storageUnitLimitBytes(v)),
        // network
        env(
            NetworkConfig.BIND_HOST_PROP_NAME,
            "TQ_BIND_HOST",
            STRING,
            (b, v) -> b.network.bindHost(v)),
        new ConfigKey<>(
            NetworkConfig.AUTH_TOKEN_PROP_NAME,
            "TQ_AUTH_TOKEN",
            STRING,
            true,
            true,
            (b, v) -> b.network.authToken(v)),
        nullable(
            NetworkConfig.CONTROLLER_ADDRESS_PROP_NAME,
            "TQ_CONTROLLER_ADDRESS",
            HOST_PORT,
            (b, v) -> b.network.controllerAddress(v)),
        env(
            NetworkConfig.STORAGE_UNIT_ADDRESSES_PROP_NAME,
            "TQ_STORAGE_UNIT_ADDRESSES",
            HOST_PORTS,
            (b, v) -> b.network.storageUnitAddresses(v)),
        env(
            NetworkConfig.STORE_NODE_ADDRESSES_PROP_NAME,
            "TQ_STORE_NODE_ADDRESSES",
            HOST_PORTS,
            (b, v) -> b.network.storeNodeAddresses(v)),
        key(
            NetworkConfig.CONNECT_TIMEOUT_PROP_NAME,
            DURATION,
            (b, v) -> b.network.connectTimeout(v)),
        key(NetworkConfig.MAX_FRAME_BYTES_PROP_NAME, LONG, (b, v) -> b.network.maxFrameBytes(v)),
        key(NetworkConfig.SHARED_MEMORY_PROP_NAME, BOOLEAN, (b, v) -> b.network.sharedMemory(v)),
        key(
            NetworkConfig.SHARED_MEMORY_LIMIT_BYTES_PROP_NAME,
            LONG,
            (b, v) -> b.network.sharedMemoryLimitBytes(v)),
        key(
            NetworkConfig.SHARED_MEMORY_SEGMENT_BYTES_PROP_NAME,
            LONG,
            (b, v) -> b.network.sharedMemorySegmentBytes(v)),
        key(
            NetworkConfig.SHARED_MEMORY_MIN_BYTES_PROP_NAME,
            LONG,
            (b, v) -> b.network.sharedMemoryMinBytes(v)),
        // durability
        env(
            DurabilityConfig.JOURNAL_DIR_PROP_NAME,
            "TQ_JOURNAL_DIR",
            STRING,
            (b, v) -> b.durability.journalDir(v)),
        env(
            DurabilityConfig.SYNC_PROP_NAME,
            "TQ_DURABILITY_SYNC",
            STRING,
            (b, v) -> b.durability.sync(v)),
        env(
            DurabilityConfig.SYNC_INTERVAL_PROP_NAME,
            "TQ_DURABILITY_SYNC_INTERVAL",
            DURATION,
            (b, v) -> b.durability.syncInterval(v)),
        env(
            DurabilityConfig.MAX_BYTES_PROP_NAME,
            "TQ_DURABILITY_MAX_BYTES",
            LONG,
            (b, v) -> b.durability.maxBytes(v)),
        env(
            DurabilityConfig.SEGMENT_BYTES_PROP_NAME,
            "TQ_DURABILITY_SEGMENT_BYTES",
            LONG,
            (b, v) -> b.durability.segmentBytes(v)));
  }

  private static MooncakeStoreConfig.Builder mc(TqConfig.Builder b) {
    return b.backend.mooncakeStoreBuilder();
  }

  private static SsdOffloadConfig.Builder ssd(TqConfig.Builder b) {
    return b.backend.simpleStorageBuilder().ssdOffloadBuilder();
  }

  private static YuanrongConfig.Builder yr(TqConfig.Builder b) {
    return b.backend.yuanrongBuilder();
  }

  private static MooncakeOffloadConfig.Builder offload(TqConfig.Builder b) {
    return b.backend.mooncakeStoreBuilder().offloadBuilder();
  }

  private static Map<String, ConfigKey<?>> index() {
    Map<String, ConfigKey<?>> m = new LinkedHashMap<>();
    for (ConfigKey<?> k : ALL) {
      if (m.put(k.key, k) != null) {
        throw new IllegalStateException("duplicate configuration key " + k.key);
      }
    }
    return Map.copyOf(m);
  }

  /**
   * Every key, in the order of the example configuration file.
   *
   * @return an unmodifiable list
   */
  public static List<ConfigKey<?>> all() {
    return ALL;
  }

  /**
   * Looks a key up by its dotted name.
   *
   * @param key for example {@code backend.SimpleStorage.num_data_storage_units}
   * @return the key, or empty when no such key exists (it may still be a section, see {@link
   *     #isSection})
   */
  public static Optional<ConfigKey<?>> forKey(String key) {
    return Optional.ofNullable(BY_KEY.get(key));
  }

  /**
   * Tells whether a dotted path is a section that holds keys, such as {@code backend} or {@code
   * backend.MooncakeStore.offload}.
   *
   * @param path the dotted path
   * @return true if some key lies below it
   */
  public static boolean isSection(String path) {
    String prefix = path + ".";
    return ALL.stream().anyMatch(k -> k.key.startsWith(prefix));
  }

  /**
   * The names directly below a section (keys and sub-sections), for suggestions in error messages.
   *
   * @param section a dotted section path, or {@code ""} for the top level
   * @return the child names, in registry order, without duplicates
   */
  public static List<String> childrenOf(String section) {
    String prefix = section.isEmpty() ? "" : section + ".";
    return ALL.stream()
        .map(k -> k.key)
        .filter(k -> k.startsWith(prefix))
        .map(k -> k.substring(prefix.length()))
        .map(rest -> rest.contains(".") ? rest.substring(0, rest.indexOf('.')) : rest)
        .distinct()
        .toList();
  }

  /**
   * The environment variables that override keys, in registry order.
   *
   * @return an unmodifiable map from variable name to key
   */
  public static Map<String, ConfigKey<?>> environmentVariables() {
    Map<String, ConfigKey<?>> m = new LinkedHashMap<>();
    for (ConfigKey<?> k : ALL) {
      if (k.environmentVariable != null) {
        m.put(k.environmentVariable, k);
      }
    }
    return Collections.unmodifiableMap(m);
  }

  /**
   * The dotted name, the upstream YAML path.
   *
   * @return for example {@code controller.polling_mode}
   */
  public String key() {
    return key;
  }

  /**
   * The environment variable that overrides this key.
   *
   * @return the variable name, or empty when none does
   */
  public Optional<String> environmentVariable() {
    return Optional.ofNullable(environmentVariable);
  }

  /**
   * What values this key takes, for messages: {@code an integer}, {@code a duration}, ...
   *
   * @return the description
   */
  public String typeDescription() {
    return type.description();
  }

  /**
   * Whether the key takes a mapping (a YAML section of free names), such as {@code
   * controller.sampler_args}, rather than one value.
   *
   * @return true for mapping-valued keys
   */
  public boolean takesMapping() {
    return type.mapping();
  }

  /**
   * Whether {@code null} is a valid value (meaning unlimited, automatic or none).
   *
   * @return true if the key may be null
   */
  public boolean nullable() {
    return nullable;
  }

  /**
   * Whether the value is a secret that messages never show.
   *
   * @return true for secrets such as {@code network.auth_token}
   */
  public boolean secret() {
    return secret;
  }

  /**
   * Sets this key on a builder from a structured value ({@code Boolean}, {@code Integer}, {@code
   * Long}, {@code Double}, {@code String}, {@code List}, {@code Map} or null, as a YAML reader
   * produces). Numbers are not read from strings here: {@code "3"} is not an integer.
   *
   * @param builder the builder to change
   * @param raw the value
   * @throws ConfigException naming this key and the value when the value has the wrong type
   */
  public void apply(TqConfig.Builder builder, Object raw) {
    setter.accept(builder, read(raw, false, key));
  }

  /**
   * Sets this key on a builder from text, as an environment variable gives it. An empty text sets a
   * nullable key to null.
   *
   * @param builder the builder to change
   * @param text the value
   * @param source where the text came from (an environment variable), named in errors
   * @throws ConfigException naming the source, this key and the value when the text cannot be read
   */
  void applyText(TqConfig.Builder builder, String text, String source) {
    Object raw = nullable && text.isEmpty() ? null : text;
    setter.accept(builder, read(raw, true, source + " (" + key + ")"));
  }

  private T read(Object raw, boolean text, String where) {
    if (raw == null) {
      if (nullable) {
        return null;
      }
      throw problem(where, null, "must be set (" + type.description() + ")");
    }
    try {
      return type.reader().read(raw, text);
    } catch (IllegalArgumentException e) {
      throw problem(where, raw, e.getMessage());
    }
  }

  private ConfigException problem(String where, Object raw, String reason) {
    ConfigProblem p =
        secret && raw != null
            ? new ConfigProblem(where, ConfigProblem.REDACTED, reason)
            : ConfigProblem.of(where, raw, reason);
    return new ConfigException(null, List.of(p));
  }

  @Override
  public String toString() {
    return key;
  }
}
