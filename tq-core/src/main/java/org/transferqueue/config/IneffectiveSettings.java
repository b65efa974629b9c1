package org.transferqueue.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The settings of a configuration that are valid but have no effect in this build: upstream's keys
 * for machinery this implementation does not have (a Mooncake master, RDMA, GPU-direct, SSD
 * offload, Ray placement, a storage handshake) and a few keys whose work is done otherwise here. A
 * key is reported only when its value differs from the default, since the default describes what
 * this build does anyway; {@code config/tq.yaml} marks every such key. Stateless.
 */
final class IneffectiveSettings {
  private static final String MOONCAKE_NODES =
      "has no effect in this build: there is no Mooncake master or metadata server; clients reach"
          + " the object-store nodes listed in "
          + NetworkConfig.STORE_NODE_ADDRESSES_PROP_NAME;
  private static final String NO_OFFLOAD_CLIENT =
      "has no effect in this build: there is no SSD offload client";
  private static final String NO_GDR =
      "has no effect in this build: tensors live in host memory, there is no GPU-direct path";
  private static final String NO_HANDSHAKE =
      "has no effect in this build: storage managers do not hand-shake with the controller;"
          + " clients connect to it directly within "
          + NetworkConfig.CONNECT_TIMEOUT_PROP_NAME;
  private static final String NO_SSD_OFFLOAD =
      "has no effect in this build: storage units keep every cell in memory";

  private final List<ConfigWarning> warnings = new ArrayList<>();

  private IneffectiveSettings() {}

  /** The warnings of {@code config}, in the order of {@code config/tq.yaml}. */
  static List<ConfigWarning> of(TqConfig config) {
    IneffectiveSettings s = new IneffectiveSettings();
    s.logging(config.logging());
    s.metrics(config.metrics());
    s.simpleStorage(config.backend().simpleStorage());
    s.mooncake(config.backend().mooncakeStore());
    s.storage(config.storage());
    s.client(config.client());
    return List.copyOf(s.warnings);
  }

  private void logging(LoggingConfig c) {
    changed(
        LoggingConfig.PERF_LOG_FLUSH_INTERVAL_PROP_NAME,
        c.perfLogFlushInterval(),
        LoggingConfig.PERF_LOG_FLUSH_INTERVAL_DEFAULT,
        "has no effect in this build: request statistics are meters (metrics.enabled), they are"
            + " not logged");
  }

  private void metrics(MetricsConfig c) {
    changed(
        MetricsConfig.STORAGE_TIMEOUT_PROP_NAME,
        c.storageTimeout(),
        MetricsConfig.STORAGE_TIMEOUT_DEFAULT,
        "has no effect in this build: every storage process serves its own gauges, none is"
            + " queried over the network");
  }

  private void simpleStorage(SimpleStorageConfig c) {
    changed(
        SimpleStorageConfig.REQUIRED_NODE_RESOURCE_PROP_NAME,
        c.requiredNodeResource(),
        SimpleStorageConfig.REQUIRED_NODE_RESOURCE_DEFAULT,
        "has no effect in this build: nothing is placed by Ray; a storage unit runs where"
            + " `tq storage-unit` starts it");
    SsdOffloadConfig o = c.ssdOffload();
    changed(
        SsdOffloadConfig.ENABLED_PROP_NAME,
        o.enabled(),
        SsdOffloadConfig.ENABLED_DEFAULT,
        NO_SSD_OFFLOAD);
    changed(
        SsdOffloadConfig.PATH_PROP_NAME, o.path(), SsdOffloadConfig.PATH_DEFAULT, NO_SSD_OFFLOAD);
    changed(
        SsdOffloadConfig.THRESHOLD_BYTES_PROP_NAME,
        o.thresholdBytes(),
        SsdOffloadConfig.THRESHOLD_BYTES_DEFAULT,
        NO_SSD_OFFLOAD);
    changed(
        SsdOffloadConfig.GLIBC_MMAP_THRESHOLD_BYTES_PROP_NAME,
        o.glibcMmapThresholdBytes(),
        SsdOffloadConfig.GLIBC_MMAP_THRESHOLD_BYTES_DEFAULT,
        "has no effect in this build: the JVM does not use glibc's allocator for tensor memory");
  }

  private void mooncake(MooncakeStoreConfig c) {
    changed(
        MooncakeStoreConfig.METADATA_SERVER_PROP_NAME,
        c.metadataServer(),
        MooncakeStoreConfig.METADATA_SERVER_DEFAULT,
        MOONCAKE_NODES);
    changed(
        MooncakeStoreConfig.MASTER_SERVER_ADDRESS_PROP_NAME,
        c.masterServerAddress(),
        MooncakeStoreConfig.MASTER_SERVER_ADDRESS_DEFAULT,
        MOONCAKE_NODES);
    changed(
        MooncakeStoreConfig.PROTOCOL_PROP_NAME,
        c.protocol(),
        MooncakeStoreConfig.PROTOCOL_DEFAULT,
        "has no effect in this build: data moves over TCP");
    changed(
        MooncakeStoreConfig.DEVICE_NAME_PROP_NAME,
        c.deviceName(),
        MooncakeStoreConfig.DEVICE_NAME_DEFAULT,
        "has no effect in this build: connections use the interfaces of "
            + NetworkConfig.BIND_HOST_PROP_NAME
            + " and of the configured addresses");
    MooncakeOffloadConfig o = c.offload();
    changed(
        MooncakeOffloadConfig.ENABLED_PROP_NAME,
        o.enabled(),
        MooncakeOffloadConfig.ENABLED_DEFAULT,
        "has no effect in this build: there is no SSD tier; it only unpins writes while "
            + MooncakeStoreConfig.HARD_PIN_PROP_NAME
            + " is null (as upstream), and an unpinned object evicted above "
            + MooncakeOffloadConfig.EVICTION_HIGH_WATERMARK_RATIO_PROP_NAME
            + " is lost, not offloaded");
    changed(
        MooncakeOffloadConfig.FILE_STORAGE_PATH_PROP_NAME,
        o.fileStoragePath(),
        MooncakeOffloadConfig.FILE_STORAGE_PATH_DEFAULT,
        NO_OFFLOAD_CLIENT);
    changed(
        MooncakeOffloadConfig.LOCAL_BUFFER_SIZE_BYTES_PROP_NAME,
        o.localBufferSizeBytes(),
        MooncakeOffloadConfig.LOCAL_BUFFER_SIZE_BYTES_DEFAULT,
        NO_OFFLOAD_CLIENT);
    changed(
        MooncakeOffloadConfig.USE_URING_PROP_NAME,
        o.useUring(),
        MooncakeOffloadConfig.USE_URING_DEFAULT,
        NO_OFFLOAD_CLIENT);
    changed(
        MooncakeOffloadConfig.HEARTBEAT_INTERVAL_SECONDS_PROP_NAME,
        o.heartbeatIntervalSeconds(),
        MooncakeOffloadConfig.HEARTBEAT_INTERVAL_SECONDS_DEFAULT,
        NO_OFFLOAD_CLIENT);
    changed(
        MooncakeOffloadConfig.CLIENT_PORT_PROP_NAME,
        o.clientPort(),
        MooncakeOffloadConfig.CLIENT_PORT_DEFAULT,
        NO_OFFLOAD_CLIENT);
    changed(
        MooncakeStoreConfig.USE_GDR_PROP_NAME,
        c.useGdr(),
        MooncakeStoreConfig.USE_GDR_DEFAULT,
        NO_GDR);
    changed(
        MooncakeStoreConfig.GDR_STAGING_BUFFER_MB_PROP_NAME,
        c.gdrStagingBufferMb(),
        MooncakeStoreConfig.GDR_STAGING_BUFFER_MB_DEFAULT,
        NO_GDR);
    changed(
        MooncakeStoreConfig.MAX_SERIAL_WORKER_THREADS_PROP_NAME,
        c.maxSerialWorkerThreads(),
        MooncakeStoreConfig.MAX_SERIAL_WORKER_THREADS_DEFAULT,
        "has no effect in this build: non-tensor values are packed by the batch tasks of "
            + MooncakeStoreConfig.MAX_BATCH_WORKER_THREADS_PROP_NAME);
  }

  private void storage(StorageConfig c) {
    changed(
        StorageConfig.POLLER_TIMEOUT_PROP_NAME,
        c.pollerTimeout(),
        StorageConfig.POLLER_TIMEOUT_DEFAULT,
        NO_HANDSHAKE);
    changed(
        StorageConfig.HANDSHAKE_TIMEOUT_PROP_NAME,
        c.handshakeTimeout(),
        StorageConfig.HANDSHAKE_TIMEOUT_DEFAULT,
        NO_HANDSHAKE);
    changed(
        StorageConfig.HANDSHAKE_RETRY_INTERVAL_PROP_NAME,
        c.handshakeRetryInterval(),
        StorageConfig.HANDSHAKE_RETRY_INTERVAL_DEFAULT,
        NO_HANDSHAKE);
    changed(
        StorageConfig.HANDSHAKE_MAX_RETRIES_PROP_NAME,
        c.handshakeMaxRetries(),
        StorageConfig.HANDSHAKE_MAX_RETRIES_DEFAULT,
        NO_HANDSHAKE);
    changed(
        StorageConfig.DATA_UPDATE_RESPONSE_TIMEOUT_PROP_NAME,
        c.dataUpdateResponseTimeout(),
        StorageConfig.DATA_UPDATE_RESPONSE_TIMEOUT_DEFAULT,
        "has no effect in this build: the writing client notifies the controller itself, within "
            + ClientConfig.REQUEST_TIMEOUT_PROP_NAME);
  }

  private void client(ClientConfig c) {
    changed(
        ClientConfig.NUM_THREADS_PROP_NAME,
        c.numThreads(),
        ClientConfig.NUM_THREADS_DEFAULT,
        "has no effect in this build: there is no serialisation pool; each call encodes its own"
            + " batch and remote transfers run on virtual threads");
    changed(
        ClientConfig.EMPTY_BATCH_SLEEP_INTERVAL_PROP_NAME,
        c.emptyBatchSleepInterval(),
        ClientConfig.EMPTY_BATCH_SLEEP_INTERVAL_DEFAULT,
        "has no effect in this build: a streaming loader's pause after an empty fetch is its"
            + " builder's pollInterval (1s by default)");
  }

  private void changed(String key, Object value, Object defaultValue, String reason) {
    if (!Objects.equals(value, defaultValue)) {
      warnings.add(new ConfigWarning(key, render(value), reason));
    }
  }

  private static String render(Object value) {
    return switch (value) {
      case Duration d -> ConfigValues.formatDuration(d);
      case Optional<?> o -> ConfigProblem.render(o.orElse(null));
      case TransportProtocol p -> ConfigProblem.render(p.configName());
      case HostPort h -> ConfigProblem.render(h.toString());
      default -> ConfigProblem.render(value);
    };
  }
}
