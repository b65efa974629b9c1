package org.transferqueue.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.transferqueue.config.ConfigException;
import org.transferqueue.config.Defaults;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.journal.SyncPolicy;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.objectstore.KvClientConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.simple.SimpleStorageManager;
import org.transferqueue.storage.simple.SimpleStorageSettings;
import org.transferqueue.transport.TransportConfig;

class ConfigMapperTest {

  @Test
  void shouldGiveComponentsBuiltInCodeTheDefaultsOfAnEmptyConfigurationFile() {
    TqConfig empty = TqConfig.defaults();

    assertThat(ConfigMapper.controller(empty)).isEqualTo(ControllerOptions.defaults());
    assertThat(ControllerOptions.defaults().fetchTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(ConfigMapper.transport(empty.network()))
        .isEqualTo(TransportConfig.builder().build());
    assertThat(ConfigMapper.kvClient(empty.backend().mooncakeStore()))
        .isEqualTo(KvClientConfig.defaults());
    assertThat(ConfigMapper.store(empty.backend().mooncakeStore()))
        .isEqualTo(StoreConfig.builder().build());
    SimpleStorageSettings simple = ConfigMapper.simpleStorage(empty);
    SimpleStorageSettings built = SimpleStorageSettings.builder().build();
    assertThat(simple.unitCount()).isEqualTo(built.unitCount());
    assertThat(simple.totalStorageSize()).isEqualTo(built.totalStorageSize());
    assertThat(simple.unitLimitBytes()).isEqualTo(built.unitLimitBytes());
  }

  @Test
  void shouldMapEveryControllerKeyIncludingTheCheckInterval() {
    TqConfig config =
        TqConfig.builder()
            .controller(
                c ->
                    c.preallocSampleNum(64)
                        .pollingMode(true)
                        .getMetadataTimeout(Duration.ofSeconds(7))
                        .getMetadataCheckInterval(Duration.ofMillis(250)))
            .build();

    ControllerOptions options = ConfigMapper.controller(config);

    assertThat(options.preallocSampleNum()).isEqualTo(64);
    assertThat(options.pollingMode()).isTrue();
    assertThat(options.fetchTimeout()).isEqualTo(Duration.ofSeconds(7));
    assertThat(options.checkInterval()).isEqualTo(Duration.ofMillis(250));
  }

  @Test
  void shouldGiveEachRoleItsOwnCallDeadline() {
    TqConfig config =
        TqConfig.builder()
            .network(n -> n.bindHost("0.0.0.0").authToken("tok").maxFrameBytes(1 << 24))
            .client(c -> c.requestTimeout(Duration.ofSeconds(11)))
            .backend(b -> b.simpleStorage(s -> s.sendRecvTimeout(Duration.ofSeconds(22))))
            .build();

    TransportConfig controller = ConfigMapper.controllerClient(config);
    TransportConfig units = ConfigMapper.storageUnitClient(config);
    TransportConfig nodes = ConfigMapper.storeNodeClient(config);

    assertThat(controller.defaultCallTimeout()).isEqualTo(Duration.ofSeconds(11));
    assertThat(units.defaultCallTimeout()).isEqualTo(Duration.ofSeconds(22));
    assertThat(nodes.defaultCallTimeout()).isEqualTo(Duration.ofSeconds(11));
    for (TransportConfig t : List.of(controller, units, nodes)) {
      assertThat(t.bindHost()).isEqualTo("0.0.0.0");
      assertThat(t.authToken()).contains("tok");
      assertThat(t.maxFrameBytes()).isEqualTo(1 << 24);
      assertThat(t.maxBodySegmentBytes()).isEqualTo(1 << 24);
    }
  }

  @Test
  void shouldMapTheSharedMemoryKeysOntoEveryRolesTransport() {
    TqConfig config =
        TqConfig.builder()
            .network(
                n ->
                    n.sharedMemory(false)
                        .sharedMemoryLimitBytes(1L << 30)
                        .sharedMemorySegmentBytes(1L << 24)
                        .sharedMemoryMinBytes(4096))
            .build();
    for (TransportConfig t :
        List.of(
            ConfigMapper.transport(config.network()),
            ConfigMapper.controllerClient(config),
            ConfigMapper.storageUnitClient(config),
            ConfigMapper.storeNodeClient(config))) {
      assertThat(t.sharedMemory()).isFalse();
      assertThat(t.sharedMemoryLimitBytes()).isEqualTo(1L << 30);
      assertThat(t.sharedMemorySegmentBytes()).isEqualTo(1L << 24);
      assertThat(t.sharedMemoryMinBytes()).isEqualTo(4096);
    }
    TransportConfig defaults = ConfigMapper.transport(TqConfig.defaults().network());
    assertThat(defaults.sharedMemory()).isTrue();
    assertThat(defaults.sharedMemoryLimitBytes()).isEqualTo(2L << 30);
    assertThat(defaults.sharedMemorySegmentBytes()).isEqualTo(64L << 20);
    assertThat(defaults.sharedMemoryMinBytes()).isEqualTo(65536);
  }

  @Test
  void shouldMapStorageSectionsOntoTypedSettings() {
    TqConfig config =
        TqConfig.builder()
            .backend(
                b ->
                    b.simpleStorage(s -> s.numDataStorageUnits(3).totalStorageSize(10L))
                        .mooncakeStore(
                            m ->
                                m.globalSegmentSize(64L << 20)
                                    .localBufferSize(1L << 20)
                                    .batchSizeLimit(7)
                                    .maxBatchWorkerThreads(2)
                                    .maxRetries(5)
                                    .retryDelay(Duration.ofMillis(30))
                                    .offload(o -> o.enabled(true))))
            .memory(m -> m.storageUnitLimitBytes(1L << 20))
            .build();

    SimpleStorageSettings simple = ConfigMapper.simpleStorage(config);
    assertThat(simple.unitCount()).isEqualTo(3);
    assertThat(simple.totalStorageSize()).isEqualTo(OptionalLong.of(10));
    assertThat(simple.unitCapacity()).hasValue(4);
    assertThat(simple.unitLimitBytes()).isEqualTo(1L << 20);

    StoreConfig store = ConfigMapper.store(config.backend().mooncakeStore());
    assertThat(store.localHostname()).isEqualTo(StoreConfig.LOCAL_HOSTNAME_DEFAULT);
    assertThat(store.globalSegmentSize()).isEqualTo(64L << 20);
    assertThat(store.localBufferSize()).isEqualTo(1L << 20);

    KvClientConfig client = ConfigMapper.kvClient(config.backend().mooncakeStore());
    assertThat(client).isEqualTo(new KvClientConfig(false, 7, 2, 5, Duration.ofMillis(30)));
  }

  @Test
  void shouldNameTheSegmentAfterLocalHostnameWhenSet() {
    TqConfig config =
        TqConfig.builder().backend(b -> b.mooncakeStore(m -> m.localHostname("node-7"))).build();

    assertThat(ConfigMapper.store(config.backend().mooncakeStore()).localHostname())
        .isEqualTo("node-7");
  }

  @Test
  void shouldHandTheConfiguredUnitsToTheEmbeddedSimpleStorageBackend() {
    TqConfig config =
        TqConfig.builder()
            .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(3).totalStorageSize(10L)))
            .build();

    try (RootAllocator allocator = RootAllocator.builder().build();
        StorageManager manager =
            ConfigMapper.embeddedBackends(config)
                .create(
                    StorageManagerRegistry.SIMPLE_STORAGE,
                    new StorageContext(allocator, ProductionNotifier.NO_OP))) {
      SimpleStorageManager simple = (SimpleStorageManager) manager;
      assertThat(simple.units()).hasSize(3);
      assertThat(simple.unitStats().getFirst().capacitySamples()).hasValue(4);
    }
  }

  @Test
  void shouldGiveEachStorageRoleItsOwnJournalDirectoryOnlyWhenDurabilityIsJournal() {
    assertThat(ConfigMapper.storageJournal(TqConfig.defaults(), "storage-unit-0")).isEmpty();
    TqConfig journaled =
        TqConfig.builder()
            .set("storage.durability", "journal")
            .set("durability.journal_dir", "/var/lib/tq")
            .set("durability.sync", "interval")
            .set("durability.sync_interval", "5ms")
            .build();
    JournalSettings unit = ConfigMapper.storageJournal(journaled, "storage-unit-1").orElseThrow();
    assertThat(unit.directory()).isEqualTo(Path.of("/var/lib/tq", "storage-unit-1"));
    assertThat(unit.sync()).isEqualTo(SyncPolicy.INTERVAL);
    assertThat(unit.syncInterval()).isEqualTo(Duration.ofMillis(5));
    assertThat(unit.maxBytes()).isEqualTo(Defaults.DURABILITY_MAX_BYTES);
    assertThat(unit.segmentBytes()).isEqualTo(Defaults.DURABILITY_SEGMENT_BYTES);
    assertThatThrownBy(() -> TqConfig.builder().set("durability.sync", "sometimes").build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("durability.sync")
        .hasMessageContaining("sometimes");
    assertThatThrownBy(() -> TqConfig.builder().set("storage.durability", "disk").build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("storage.durability");
    assertThatThrownBy(
            () ->
                TqConfig.builder()
                    .set("durability.segment_bytes", 1 << 20)
                    .set("durability.max_bytes", 1 << 20)
                    .build())
        .hasMessageContaining("durability.max_bytes");
  }
}
