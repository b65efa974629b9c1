package org.transferqueue.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.InstanceOfAssertFactories.type;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;

class TqConfigTest {

  @Test
  void shouldUseUpstreamDefaultsWhenNothingIsSet() {
    TqConfig c = TqConfig.defaults();

    assertThat(c.metrics().enabled()).isFalse();
    assertThat(c.metrics().port()).isZero();
    assertThat(c.metrics().collectInterval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.metrics().storageTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.logging().level()).isEqualTo(System.Logger.Level.WARNING);
    assertThat(c.logging().perfLogFlushInterval()).isEqualTo(Duration.ofSeconds(300));
    assertThat(c.controller().sampler()).isEqualTo("SequentialSampler");
    assertThat(c.controller().builtInSampler()).isTrue();
    assertThat(c.controller().pollingMode()).isFalse();
    assertThat(c.controller().preallocSampleNum()).isEqualTo(1);
    assertThat(c.controller().getMetadataTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.controller().getMetadataCheckInterval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.backend().storageBackend()).isEqualTo(StorageBackend.SIMPLE_STORAGE);
    SimpleStorageConfig s = c.backend().simpleStorage();
    assertThat(s.totalStorageSize()).isEmpty();
    assertThat(s.numDataStorageUnits()).isEqualTo(2);
    assertThat(s.sendRecvTimeout()).isEqualTo(Duration.ofSeconds(200));
    MooncakeStoreConfig m = c.backend().mooncakeStore();
    assertThat(m.autoInit()).isTrue();
    assertThat(m.metadataServer()).isEqualTo("localhost:50050");
    assertThat(m.masterServerAddress()).isEqualTo(new HostPort("localhost", 50051));
    assertThat(m.localHostname()).isEmpty();
    assertThat(m.protocol()).isEqualTo(TransportProtocol.TCP);
    assertThat(m.globalSegmentSize()).isEqualTo(4_294_967_296L);
    assertThat(m.localBufferSize()).isEqualTo(1_073_741_824L);
    assertThat(m.deviceName()).isEmpty();
    assertThat(m.hardPin()).isEmpty();
    assertThat(m.effectiveHardPin()).isTrue();
    assertThat(m.useGdr()).isFalse();
    assertThat(m.gdrStagingBufferMb()).isEqualTo(1024);
    assertThat(m.batchSizeLimit()).isEqualTo(400);
    assertThat(m.maxBatchWorkerThreads()).isEqualTo(4);
    assertThat(m.maxSerialWorkerThreads()).isEqualTo(4);
    assertThat(m.maxRetries()).isEqualTo(3);
    assertThat(m.retryDelay()).isEqualTo(Duration.ofSeconds(1));
    MooncakeOffloadConfig o = m.offload();
    assertThat(o.enabled()).isFalse();
    assertThat(o.fileStoragePath()).isEqualTo("/tmp/mooncake_offload");
    assertThat(o.localBufferSizeBytes()).isEqualTo(2_147_483_648L);
    assertThat(o.useUring()).isFalse();
    assertThat(o.heartbeatIntervalSeconds()).isEqualTo(2);
    assertThat(o.clientPort()).isEqualTo(42052);
    assertThat(o.evictionHighWatermarkRatio()).isEqualTo(0.9);
    assertThat(o.evictionRatio()).isEqualTo(0.1);
    assertThat(c.storage().pollerTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.storage().handshakeTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.storage().handshakeRetryInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.storage().handshakeMaxRetries()).isEqualTo(3);
    assertThat(c.storage().dataUpdateResponseTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.client().numThreads()).isEqualTo(8);
    assertThat(c.client().emptyBatchSleepInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.memory().limitBytes()).isEmpty();
    assertThat(c.memory().storageUnitLimitBytes()).isEmpty();
    assertThat(c.network().bindHost()).isEqualTo("127.0.0.1");
    assertThat(c.network().authToken()).isEmpty();
    assertThat(c.network().controllerAddress()).isEmpty();
    assertThat(c.network().storageUnitAddresses()).isEmpty();
    assertThat(c.network().storeNodeAddresses()).isEmpty();
  }

  @Test
  void shouldNameKeyAndValueWhenUnitsAreZero() {
    assertThatThrownBy(
            () ->
                TqConfig.builder()
                    .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(0)))
                    .build())
        .isInstanceOf(ConfigException.class)
        .hasMessage("backend.SimpleStorage.num_data_storage_units: 0 must be at least 1")
        .extracting(e -> ((ConfigException) e).code())
        .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
  }

  @Test
  void shouldReportEveryProblemOfOneBuildTogether() {
    ConfigException e =
        catchConfig(
            () ->
                TqConfig.builder()
                    .metrics(m -> m.port(70_000))
                    .controller(c -> c.preallocSampleNum(0).getMetadataTimeout(Duration.ZERO))
                    .backend(
                        b ->
                            b.simpleStorage(s -> s.totalStorageSize(-5L))
                                .mooncakeStore(
                                    m ->
                                        m.globalSegmentSize(-1)
                                            .localBufferSize(512)
                                            .offload(o -> o.evictionRatio(1.5).clientPort(0))))
                    .memory(m -> m.limitBytes(0L))
                    .network(n -> n.bindHost("bad host").maxFrameBytes(10))
                    .build());

    assertThat(e.problems())
        .extracting(ConfigProblem::toString)
        .containsExactlyInAnyOrder(
            "metrics.port: 70000 is not a port (0 = any free port, 1-65535)",
            "controller.prealloc_sample_num: 0 must be at least 1",
            "controller.get_metadata_timeout: 0s must be positive",
            "backend.SimpleStorage.total_storage_size: -5 must be at least 1",
            "backend.MooncakeStore.offload.client_port: 0 is not a port (1-65535)",
            "backend.MooncakeStore.offload.eviction_ratio: 1.5 is not a ratio in (0, 1]",
            "backend.MooncakeStore.global_segment_size: -1 is not 0 or in [1024, 1099511627776]",
            "backend.MooncakeStore.local_buffer_size: 512 is not 0 or in [1024, 1099511627776]",
            "memory.limit_bytes: 0 must be at least 1",
            "network.bind_host: \"bad host\" is not a host name or address",
            "network.max_frame_bytes: 10 must be at least 4096");
    assertThat(e.getMessage()).startsWith("11 configuration problems:");
  }

  @Test
  void shouldRejectGpuDirectWhenProtocolIsTcp() {
    assertThatThrownBy(
            () -> TqConfig.builder().backend(b -> b.mooncakeStore(m -> m.useGdr(true))).build())
        .hasMessage(
            "backend.MooncakeStore.use_gdr: true requires backend.MooncakeStore.protocol: rdma,"
                + " but got tcp");

    MooncakeStoreConfig rdma =
        MooncakeStoreConfig.builder().useGdr(true).protocol(TransportProtocol.RDMA).build();
    assertThat(rdma.gdrRequested()).isTrue();
    assertThat(
            MooncakeStoreConfig.builder()
                .useGdr(true)
                .protocol(TransportProtocol.RDMA)
                .gdrStagingBufferMb(0)
                .build()
                .gdrRequested())
        .isFalse();
  }

  @Test
  void shouldDeriveHardPinFromOffloadWhenHardPinIsUnset() {
    assertThat(MooncakeStoreConfig.builder().build().effectiveHardPin()).isTrue();
    assertThat(
            MooncakeStoreConfig.builder().offload(o -> o.enabled(true)).build().effectiveHardPin())
        .isFalse();
    assertThat(
            MooncakeStoreConfig.builder()
                .offload(o -> o.enabled(true))
                .hardPin(true)
                .build()
                .effectiveHardPin())
        .isTrue();
    assertThat(MooncakeStoreConfig.builder().hardPin(false).build().effectiveHardPin()).isFalse();
  }

  @Test
  void shouldNormaliseMetadataServerLikeUpstream() {
    assertThat(metadataUrl("localhost:50050")).isEqualTo("http://localhost:50050/metadata");
    assertThat(metadataUrl("http://10.0.0.1:8080")).isEqualTo("http://10.0.0.1:8080/metadata");
    assertThat(metadataUrl("http://h:1/metadata")).isEqualTo("http://h:1/metadata");
    assertThat(metadataUrl("etcd://10.0.0.1:2379")).isEqualTo("etcd://10.0.0.1:2379");
    assertThat(metadataUrl(" p2phandshake ")).isEqualTo("P2PHANDSHAKE");
    assertThat(metadataUrl("https://h:1")).isEqualTo("https://h:1/metadata");
  }

  @Test
  void shouldRejectMetadataServerWithoutPort() {
    assertThatThrownBy(() -> MooncakeStoreConfig.builder().metadataServer("localhost").build())
        .hasMessageStartingWith(
            "backend.MooncakeStore.metadata_server: \"localhost\" needs a host and a port");
  }

  @Test
  void shouldSplitTotalStorageSizeOverUnitsRoundingUp() {
    assertThat(
            SimpleStorageConfig.builder()
                .totalStorageSize(10_000L)
                .numDataStorageUnits(3)
                .build()
                .perUnitCapacity())
        .hasValue(3334);
    assertThat(
            SimpleStorageConfig.builder()
                .totalStorageSize(10L)
                .numDataStorageUnits(4)
                .build()
                .perUnitCapacity())
        .hasValue(3);
    assertThat(SimpleStorageConfig.builder().build().perUnitCapacity())
        .isEqualTo(OptionalLong.empty());
  }

  @Test
  void shouldRejectUnitAddressesThatDoNotMatchUnitCount() {
    assertThatThrownBy(
            () ->
                TqConfig.builder()
                    .network(n -> n.storageUnitAddresses(List.of(HostPort.parse("h1:7001"))))
                    .build())
        .hasMessage(
            "network.storage_unit_addresses: [\"h1:7001\"] has 1 addresses but"
                + " backend.SimpleStorage.num_data_storage_units is 2");
  }

  @Test
  void shouldRejectDuplicateAndSharedAddresses() {
    HostPort a = HostPort.parse("h1:7001");
    ConfigException e =
        catchConfig(() -> NetworkConfig.builder().storeNodeAddresses(List.of(a, a)).build());
    assertThat(e)
        .hasMessage("network.store_node_addresses: [\"h1:7001\", \"h1:7001\"] lists h1:7001 twice");

    assertThatThrownBy(
            () ->
                TqConfig.builder()
                    .network(
                        n ->
                            n.controllerAddress(a)
                                .storageUnitAddresses(List.of(a, HostPort.parse("h2:7001"))))
                    .build())
        .hasMessageContaining("network.storage_unit_addresses")
        .hasMessageContaining("contains network.controller_address h1:7001");
  }

  @Test
  void shouldRejectUnknownSamplerNameButAcceptClassName() {
    assertThatThrownBy(() -> ControllerConfig.builder().sampler("FancySampler").build())
        .hasMessageStartingWith(
            "controller.sampler: \"FancySampler\" is not a sampler (one of SequentialSampler");
    ControllerConfig custom = ControllerConfig.builder().sampler("com.example.MySampler").build();
    assertThat(custom.builtInSampler()).isFalse();
  }

  @Test
  void shouldNeverShowTheAuthTokenInMessagesOrToString() {
    NetworkConfig n = NetworkConfig.builder().authToken("s3cr3t-token").build();
    assertThat(n.authToken()).contains("s3cr3t-token");
    assertThat(n.toString()).doesNotContain("s3cr3t").contains("<redacted>");
    assertThat(TqConfig.builder().network(b -> b.authToken("s3cr3t-token")).build().toString())
        .doesNotContain("s3cr3t");

    assertThatThrownBy(() -> NetworkConfig.builder().authToken("has space").build())
        .hasMessage(
            "network.auth_token: <redacted> must be non-empty and contain no white space or"
                + " control characters")
        .message()
        .doesNotContain("has space");
  }

  @Test
  void shouldRejectStorageUnitLimitAboveProcessLimit() {
    assertThatThrownBy(
            () -> MemoryConfig.builder().limitBytes(1024L).storageUnitLimitBytes(2048L).build())
        .hasMessage("memory.storage_unit_limit_bytes: 2048 exceeds memory.limit_bytes: 1024");
    MemoryConfig ok = MemoryConfig.builder().limitBytes(4096L).storageUnitLimitBytes(2048L).build();
    assertThat(ok.limitBytes()).hasValue(4096);
  }

  @Test
  void shouldProduceRecordsThatCompareByValue() {
    TqConfig a = TqConfig.builder().controller(c -> c.pollingMode(true)).build();
    TqConfig b = TqConfig.builder().controller(c -> c.pollingMode(true)).build();
    assertThat(a).isEqualTo(b).isNotEqualTo(TqConfig.defaults());
    assertThat(a.network().controllerAddress()).isEqualTo(Optional.empty());
  }

  @Test
  void shouldCarryProblemsWithTheirParts() {
    ConfigException e = catchConfig(() -> ClientConfig.builder().numThreads(-1).build());
    assertThat(e.problems())
        .singleElement()
        .asInstanceOf(type(ConfigProblem.class))
        .satisfies(
            p -> {
              assertThat(p.key()).isEqualTo("client.num_threads");
              assertThat(p.value()).isEqualTo("-1");
              assertThat(p.reason()).isEqualTo("must be at least 1");
            });
  }

  static String metadataUrl(String value) {
    return MooncakeStoreConfig.builder().metadataServer(value).build().metadataServerUrl();
  }

  static ConfigException catchConfig(Runnable r) {
    try {
      r.run();
    } catch (ConfigException e) {
      return e;
    }
    throw new AssertionError("expected a ConfigException");
  }
}
