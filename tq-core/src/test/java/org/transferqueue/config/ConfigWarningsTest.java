package org.transferqueue.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * No setting silently does nothing: every key that has no effect in this build produces exactly one
 * warning naming the key, its value and why, when it is set to anything but its default; the
 * defaults (and upstream's own file, which writes them) produce none.
 */
class ConfigWarningsTest {

  static Stream<Arguments> ineffectiveKeys() {
    return Stream.of(
        key(
            "backend.MooncakeStore.metadata_server",
            "\"P2PHANDSHAKE\"",
            b -> b.backend(x -> x.mooncakeStore(m -> m.metadataServer("P2PHANDSHAKE")))),
        key(
            "backend.MooncakeStore.master_server_address",
            "\"10.0.0.5:50051\"",
            b ->
                b.backend(
                    x ->
                        x.mooncakeStore(
                            m -> m.masterServerAddress(new HostPort("10.0.0.5", 50051))))),
        key(
            "backend.MooncakeStore.protocol",
            "\"rdma\"",
            b -> b.backend(x -> x.mooncakeStore(m -> m.protocol(TransportProtocol.RDMA)))),
        key(
            "backend.MooncakeStore.device_name",
            "\"mlx5_0\"",
            b -> b.backend(x -> x.mooncakeStore(m -> m.deviceName("mlx5_0")))),
        key(
            "backend.MooncakeStore.offload.enabled",
            "true",
            b -> b.backend(x -> x.mooncakeStore(m -> m.offload(o -> o.enabled(true))))),
        key(
            "backend.MooncakeStore.offload.file_storage_path",
            "\"/ssd\"",
            b -> b.backend(x -> x.mooncakeStore(m -> m.offload(o -> o.fileStoragePath("/ssd"))))),
        key(
            "backend.MooncakeStore.offload.local_buffer_size_bytes",
            "1024",
            b ->
                b.backend(x -> x.mooncakeStore(m -> m.offload(o -> o.localBufferSizeBytes(1024))))),
        key(
            "backend.MooncakeStore.offload.use_uring",
            "true",
            b -> b.backend(x -> x.mooncakeStore(m -> m.offload(o -> o.useUring(true))))),
        key(
            "backend.MooncakeStore.offload.heartbeat_interval_seconds",
            "5",
            b ->
                b.backend(
                    x -> x.mooncakeStore(m -> m.offload(o -> o.heartbeatIntervalSeconds(5))))),
        key(
            "backend.MooncakeStore.offload.client_port",
            "43000",
            b -> b.backend(x -> x.mooncakeStore(m -> m.offload(o -> o.clientPort(43000))))),
        key(
            "backend.MooncakeStore.use_gdr",
            "true",
            b ->
                b.backend(
                    x -> x.mooncakeStore(m -> m.useGdr(true).protocol(TransportProtocol.RDMA))),
            "backend.MooncakeStore.protocol"),
        key(
            "backend.MooncakeStore.gdr_staging_buffer_mb",
            "512",
            b -> b.backend(x -> x.mooncakeStore(m -> m.gdrStagingBufferMb(512)))),
        key(
            "backend.MooncakeStore.max_serial_worker_threads",
            "8",
            b -> b.backend(x -> x.mooncakeStore(m -> m.maxSerialWorkerThreads(8)))),
        key(
            "backend.SimpleStorage.required_node_resource",
            "\"storage\"",
            b -> b.backend(x -> x.simpleStorage(s -> s.requiredNodeResource("storage")))),
        key(
            "backend.SimpleStorage.ssd_offload.enabled",
            "true",
            b -> b.backend(x -> x.simpleStorage(s -> s.ssdOffload(o -> o.enabled(true))))),
        key(
            "backend.SimpleStorage.ssd_offload.path",
            "\"/ssd\"",
            b -> b.backend(x -> x.simpleStorage(s -> s.ssdOffload(o -> o.path("/ssd"))))),
        key(
            "backend.SimpleStorage.ssd_offload.threshold_bytes",
            "1",
            b -> b.backend(x -> x.simpleStorage(s -> s.ssdOffload(o -> o.thresholdBytes(1))))),
        key(
            "backend.SimpleStorage.ssd_offload.glibc_mmap_threshold_bytes",
            "1",
            b ->
                b.backend(
                    x -> x.simpleStorage(s -> s.ssdOffload(o -> o.glibcMmapThresholdBytes(1))))),
        key(
            "logging.perf_log_flush_interval",
            "60s",
            b -> b.logging(l -> l.perfLogFlushInterval(Duration.ofSeconds(60)))),
        key(
            "metrics.storage_timeout",
            "1s",
            b -> b.metrics(m -> m.storageTimeout(Duration.ofSeconds(1)))),
        key(
            "storage.poller_timeout",
            "1s",
            b -> b.storage(s -> s.pollerTimeout(Duration.ofSeconds(1)))),
        key(
            "storage.handshake_timeout",
            "1s",
            b -> b.storage(s -> s.handshakeTimeout(Duration.ofSeconds(1)))),
        key(
            "storage.handshake_retry_interval",
            "2s",
            b -> b.storage(s -> s.handshakeRetryInterval(Duration.ofSeconds(2)))),
        key("storage.handshake_max_retries", "0", b -> b.storage(s -> s.handshakeMaxRetries(0))),
        key(
            "storage.data_update_response_timeout",
            "5s",
            b -> b.storage(s -> s.dataUpdateResponseTimeout(Duration.ofSeconds(5)))),
        key("client.num_threads", "2", b -> b.client(c -> c.numThreads(2))),
        key(
            "client.empty_batch_sleep_interval",
            "100ms",
            b -> b.client(c -> c.emptyBatchSleepInterval(Duration.ofMillis(100)))));
  }

  private static Arguments key(String key, String value, Consumer<TqConfig.Builder> set) {
    return Arguments.of(key, value, set, null);
  }

  private static Arguments key(
      String key, String value, Consumer<TqConfig.Builder> set, String alsoWarned) {
    return Arguments.of(key, value, set, alsoWarned);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("ineffectiveKeys")
  void shouldWarnOnceNamingAKeyThatHasNoEffectInThisBuild(
      String key, String value, Consumer<TqConfig.Builder> set, String alsoWarned) {
    TqConfig.Builder builder = TqConfig.builder();
    set.accept(builder);

    List<ConfigWarning> warnings = builder.build().warnings();

    List<ConfigWarning> ofKey = warnings.stream().filter(w -> w.key().equals(key)).toList();
    assertThat(ofKey).hasSize(1);
    assertThat(ofKey.getFirst().value()).isEqualTo(value);
    assertThat(ofKey.getFirst().toString())
        .startsWith(key + ": " + value + " has no effect in this build: ");
    assertThat(warnings)
        .extracting(ConfigWarning::key)
        .containsExactlyInAnyOrderElementsOf(
            alsoWarned == null ? List.of(key) : List.of(key, alsoWarned));
  }

  @Test
  void shouldWarnAboutNothingForTheDefaults() {
    assertThat(TqConfig.defaults().warnings()).isEmpty();
  }

  @Test
  void shouldLogEachWarningOnceAtWarningLevel() {
    TqConfig config =
        TqConfig.builder()
            .backend(b -> b.mooncakeStore(m -> m.protocol(TransportProtocol.RDMA)))
            .client(c -> c.numThreads(2))
            .build();
    List<LogRecord> records = new ArrayList<>();
    Logger logger = Logger.getLogger(ConfigWarnings.class.getName());
    Handler capture =
        new Handler() {
          @Override
          public void publish(LogRecord record) {
            records.add(record);
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    logger.addHandler(capture);
    try {
      ConfigWarnings.log(config);
    } finally {
      logger.removeHandler(capture);
    }
    assertThat(records)
        .extracting(LogRecord::getMessage)
        .containsExactly(
            "configuration: backend.MooncakeStore.protocol: \"rdma\" has no effect in this build:"
                + " data moves over TCP",
            "configuration: client.num_threads: 2 has no effect in this build: there is no"
                + " serialisation pool; each call encodes its own batch and remote transfers run on"
                + " virtual threads");
    assertThat(records).allMatch(r -> r.getLevel() == java.util.logging.Level.WARNING);
  }

  @Test
  void shouldRequireStoreNodesWhenAutoInitIsFalse() {
    assertThatThrownBy(
            () ->
                TqConfig.builder()
                    .backend(
                        b ->
                            b.storageBackend(StorageBackend.MOONCAKE_STORE)
                                .mooncakeStore(m -> m.autoInit(false)))
                    .build())
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "backend.MooncakeStore.auto_init: false says the object store runs elsewhere, but"
                + " network.store_node_addresses lists no store node (set it, or auto_init: true"
                + " to let a process start its own store)");
    TqConfig withNodes =
        TqConfig.builder()
            .backend(
                b ->
                    b.storageBackend(StorageBackend.MOONCAKE_STORE)
                        .mooncakeStore(m -> m.autoInit(false)))
            .network(n -> n.storeNodeAddresses(List.of(new HostPort("127.0.0.1", 46111))))
            .build();
    assertThat(withNodes.warnings()).isEmpty();
  }

  @Test
  void shouldRefuseAnEvictionRatioAboveTheWatermark() {
    assertThatThrownBy(
            () ->
                MooncakeOffloadConfig.builder()
                    .evictionHighWatermarkRatio(0.5)
                    .evictionRatio(0.6)
                    .build())
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "backend.MooncakeStore.offload.eviction_ratio: 0.6 must not exceed"
                + " backend.MooncakeStore.offload.eviction_high_watermark_ratio 0.5 (eviction frees"
                + " that fraction of the capacity below the watermark)");
  }

  @Test
  void shouldNotWarnForSettingsThatTakeEffect() {
    TqConfig config =
        TqConfig.builder()
            .controller(c -> c.getMetadataCheckInterval(Duration.ofMillis(100)))
            .backend(
                b ->
                    b.mooncakeStore(
                        m ->
                            m.offload(o -> o.evictionHighWatermarkRatio(0.8).evictionRatio(0.2))
                                .hardPin(false)))
            .logging(l -> l.level(System.Logger.Level.INFO))
            .build();
    assertThat(config.warnings()).isEmpty();
  }
}
