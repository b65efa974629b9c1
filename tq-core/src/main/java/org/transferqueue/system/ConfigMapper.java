package org.transferqueue.system;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import org.transferqueue.config.Durability;
import org.transferqueue.config.DurabilityConfig;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.journal.SyncPolicy;
import org.transferqueue.objectstore.KvClientConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.objectstore.engine.MooncakeStoreBackend;
import org.transferqueue.remote.objectstore.RemoteMooncakeStore;
import org.transferqueue.remote.storage.RemoteSimpleStorage;
import org.transferqueue.storage.StorageManagerFactory;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.simple.SimpleStorageManager;
import org.transferqueue.storage.simple.SimpleStorageSettings;
import org.transferqueue.transport.TransportConfig;

/**
 * Maps the YAML configuration ({@link TqConfig} and its section records) onto one settings record
 * per component, for every process that starts a component: the embedded system, a client, and the
 * server roles. The only place that knows both the YAML schema and the components; components never
 * see a section record, and transport knows no roles.
 *
 * <p>Naming: a component's own settings record is a {@code *Config} (or, where older, {@code
 * *Options}/{@code *Settings}); a YAML section record lives in {@code org.transferqueue.config}.
 * The defaults both share are defined once, in {@link org.transferqueue.config.Defaults}.
 * Stateless.
 */
public final class ConfigMapper {
  private ConfigMapper() {}

  // ---- controller ----------------------------------------------------------------------------

  /**
   * The controller settings of the {@code controller} section.
   *
   * @param config the validated configuration
   * @return pre-allocation, polling mode, blocking-fetch timeout and re-check interval
   */
  public static ControllerOptions controller(TqConfig config) {
    var controller = config.controller();
    return ControllerOptions.builder()
        .preallocSampleNum(controller.preallocSampleNum())
        .pollingMode(controller.pollingMode())
        .fetchTimeout(controller.getMetadataTimeout())
        .checkInterval(controller.getMetadataCheckInterval())
        .build();
  }

  // ---- transport -----------------------------------------------------------------------------

  /**
   * A transport builder preset from the {@code network} section: bind host, token, connect timeout
   * and maximum frame length; the other settings keep their defaults.
   *
   * @param network the validated network settings
   * @return a new builder
   */
  public static TransportConfig.Builder transportBuilder(NetworkConfig network) {
    Objects.requireNonNull(network, "network");
    return TransportConfig.builder()
        .bindHost(network.bindHost())
        .authToken(network.authToken().orElse(null))
        .connectTimeout(network.connectTimeout())
        .maxFrameBytes(network.maxFrameBytes())
        .maxBodySegmentBytes(network.maxFrameBytes())
        .sharedMemory(network.sharedMemory())
        .sharedMemoryLimitBytes(network.sharedMemoryLimitBytes())
        .sharedMemorySegmentBytes(network.sharedMemorySegmentBytes())
        .sharedMemoryMinBytes(network.sharedMemoryMinBytes());
  }

  /**
   * The transport settings of the {@code network} section with defaults for the rest: what a server
   * role listens with.
   *
   * @param network the validated network settings
   * @return the transport settings
   */
  public static TransportConfig transport(NetworkConfig network) {
    return transportBuilder(network).build();
  }

  /**
   * The transport settings of a client's calls to the controller: the {@code network} section, with
   * {@value org.transferqueue.config.ClientConfig#REQUEST_TIMEOUT_PROP_NAME} as the deadline of
   * every call.
   *
   * @param config the validated configuration
   * @return the transport settings
   */
  public static TransportConfig controllerClient(TqConfig config) {
    return transportBuilder(config.network())
        .defaultCallTimeout(config.client().requestTimeout())
        .build();
  }

  /**
   * The transport settings of a client's calls to SimpleStorage units: the {@code network} section,
   * with {@value org.transferqueue.config.SimpleStorageConfig#SEND_RECV_TIMEOUT_PROP_NAME} as the
   * deadline of every call.
   *
   * @param config the validated configuration
   * @return the transport settings
   */
  public static TransportConfig storageUnitClient(TqConfig config) {
    return transportBuilder(config.network())
        .defaultCallTimeout(config.backend().simpleStorage().sendRecvTimeout())
        .build();
  }

  /**
   * The transport settings of a client's calls to object-store nodes: the {@code network} section,
   * with {@value org.transferqueue.config.ClientConfig#REQUEST_TIMEOUT_PROP_NAME} as the deadline
   * of every call (the MooncakeStore section has no timeout key of its own; its retries run within
   * this deadline per call).
   *
   * @param config the validated configuration
   * @return the transport settings
   */
  public static TransportConfig storeNodeClient(TqConfig config) {
    return transportBuilder(config.network())
        .defaultCallTimeout(config.client().requestTimeout())
        .build();
  }

  // ---- storage -------------------------------------------------------------------------------

  /**
   * The SimpleStorage settings: {@code backend.SimpleStorage} for units and capacity, {@code
   * memory.storage_unit_limit_bytes} for each unit's byte limit.
   *
   * @param config the validated configuration
   * @return the settings
   */
  public static SimpleStorageSettings simpleStorage(TqConfig config) {
    var simple = config.backend().simpleStorage();
    return SimpleStorageSettings.builder()
        .unitCount(simple.numDataStorageUnits())
        .totalStorageSize(simple.totalStorageSize())
        .unitLimitBytes(
            config
                .memory()
                .storageUnitLimitBytes()
                .orElse(SimpleStorageSettings.UNIT_LIMIT_BYTES_DEFAULT))
        .build();
  }

  /**
   * The journal settings of one role from the {@code durability} section: the role journals into
   * {@code <journal_dir>/<roleId>}.
   *
   * @param durability the validated durability section
   * @param roleId the role's directory name: {@code controller}, {@code storage-unit-<rank>} or
   *     {@code store-node-<index>}
   * @return the settings
   */
  public static JournalSettings journal(DurabilityConfig durability, String roleId) {
    return JournalSettings.builder(Path.of(durability.journalDir()).resolve(roleId))
        .sync(SyncPolicy.fromName(durability.sync()))
        .syncInterval(durability.syncInterval())
        .maxBytes(durability.maxBytes())
        .segmentBytes(durability.segmentBytes())
        .build();
  }

  /**
   * The journal settings of a storage role ({@code storage-unit-<rank>}, {@code
   * store-node-<index>}) when {@code storage.durability} is {@code journal}.
   *
   * @param config the validated configuration
   * @param roleId the role's directory name
   * @return the settings, or empty when storage keeps its data in memory only
   */
  public static Optional<JournalSettings> storageJournal(TqConfig config, String roleId) {
    return config.storage().durability() == Durability.JOURNAL
        ? Optional.of(journal(config.durability(), roleId))
        : Optional.empty();
  }

  /**
   * The object-store client settings of {@code backend.MooncakeStore}: the segment name ({@code
   * local_hostname}; {@code ""} is {@value StoreConfig#LOCAL_HOSTNAME_DEFAULT}), the contributed
   * segment and the local buffer.
   *
   * @param mooncake the validated MooncakeStore section
   * @return the store settings
   */
  public static StoreConfig store(MooncakeStoreConfig mooncake) {
    return StoreConfig.builder()
        .localHostname(
            mooncake.localHostname().isEmpty()
                ? StoreConfig.LOCAL_HOSTNAME_DEFAULT
                : mooncake.localHostname())
        .globalSegmentSize(mooncake.globalSegmentSize())
        .localBufferSize(mooncake.localBufferSize())
        .build();
  }

  /**
   * The engine settings of {@code backend.MooncakeStore}: Mooncake's defaults, with eviction at
   * {@code offload.eviction_high_watermark_ratio} down by {@code offload.eviction_ratio} of the
   * capacity (eviction only ever takes objects that are not hard-pinned). Upstream passes the two
   * ratios to its master only when offload is enabled; this build has no SSD tier and applies them
   * to every embedded store and store node.
   *
   * @param mooncake the validated MooncakeStore section
   * @return the engine settings
   */
  public static MasterConfig master(MooncakeStoreConfig mooncake) {
    return MasterConfig.builder()
        .evictionHighWatermark(mooncake.offload().evictionHighWatermarkRatio())
        .evictionRatio(mooncake.offload().evictionRatio())
        .build();
  }

  /**
   * The key-value client settings of {@code backend.MooncakeStore}: hard pin ({@link
   * MooncakeStoreConfig#effectiveHardPin()}), batching and retries.
   *
   * @param mooncake the validated MooncakeStore section
   * @return the client settings
   */
  public static KvClientConfig kvClient(MooncakeStoreConfig mooncake) {
    return KvClientConfig.builder()
        .hardPin(mooncake.effectiveHardPin())
        .batchSizeLimit(mooncake.batchSizeLimit())
        .maxBatchWorkerThreads(mooncake.maxBatchWorkerThreads())
        .maxRetries(mooncake.maxRetries())
        .retryDelay(mooncake.retryDelay())
        .build();
  }

  /**
   * The embedded MooncakeStore backend of {@code backend.MooncakeStore}: each manager runs its own
   * object store. The component settings are mapped when a manager is created, so that a process
   * that uses another backend never validates them.
   *
   * @param mooncake the validated MooncakeStore section
   * @return the factory
   */
  public static StorageManagerFactory embeddedMooncakeStore(MooncakeStoreConfig mooncake) {
    Objects.requireNonNull(mooncake, "mooncake");
    return context ->
        MooncakeStoreBackend.factory(store(mooncake), master(mooncake), kvClient(mooncake))
            .create(context);
  }

  /**
   * The storage backends of a process that runs its storage itself: SimpleStorage with the units of
   * {@link #simpleStorage(TqConfig)}, MooncakeStore with an embedded object store.
   *
   * @param config the validated configuration
   * @return a registry with {@code SimpleStorage} and {@code MooncakeStore}
   */
  public static StorageManagerRegistry embeddedBackends(TqConfig config) {
    return StorageManagerRegistry.builder()
        .register(
            StorageManagerRegistry.SIMPLE_STORAGE,
            SimpleStorageManager.factory(simpleStorage(config)))
        .register(
            StorageManagerRegistry.MOONCAKE_STORE,
            embeddedMooncakeStore(config.backend().mooncakeStore()))
        .build();
  }

  /**
   * The storage backends of a client: {@code SimpleStorage} routes to the remote units of {@code
   * network.storage_unit_addresses} (each call's deadline {@code
   * backend.SimpleStorage.send_recv_timeout}) and {@code MooncakeStore} to the remote nodes of
   * {@code network.store_node_addresses} (deadline {@code client.request_timeout}); a backend
   * without configured addresses runs embedded in the client.
   *
   * @param config the validated configuration
   * @return a registry with {@code SimpleStorage} and {@code MooncakeStore}
   */
  public static StorageManagerRegistry clientBackends(TqConfig config) {
    NetworkConfig network = config.network();
    MooncakeStoreConfig mooncake = config.backend().mooncakeStore();
    return StorageManagerRegistry.builder()
        .register(
            StorageManagerRegistry.SIMPLE_STORAGE,
            network.storageUnitAddresses().isEmpty()
                ? SimpleStorageManager.factory(simpleStorage(config))
                : RemoteSimpleStorage.factory(
                    network.storageUnitAddresses(), storageUnitClient(config)))
        .register(
            StorageManagerRegistry.MOONCAKE_STORE,
            network.storeNodeAddresses().isEmpty()
                ? embeddedMooncakeStore(mooncake)
                : context ->
                    RemoteMooncakeStore.factory(
                            network.storeNodeAddresses(),
                            storeNodeClient(config),
                            store(mooncake),
                            kvClient(mooncake))
                        .create(context))
        .build();
  }
}
