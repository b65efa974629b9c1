package org.transferqueue.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.transferqueue.ErrorCode;
import org.transferqueue.config.ConfigException;
import org.transferqueue.config.ConfigKey;
import org.transferqueue.config.ConfigProblem;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.config.TransportProtocol;

class TqConfigsTest {
  /** Surefire runs in the module directory; the example lives at the repository root. */
  private static final Path EXAMPLE = Path.of("..", "config", "tq.yaml");

  @Test
  void shouldLetProgramOverridesWinOverTheFile() {
    TqConfig config =
        TqConfigs.parse(
            "backend:\n  storage_backend: SimpleStorage\n  SimpleStorage:\n    num_data_storage_units: 3\n",
            "bench.yaml",
            Map.of(),
            Map.of("backend.storage_backend", "MooncakeStore"));
    assertThat(config.backend().storageBackend()).isEqualTo(StorageBackend.MOONCAKE_STORE);
    assertThat(config.backend().simpleStorage().numDataStorageUnits()).isEqualTo(3);
  }

  @Test
  void shouldNameTheKeyWhenAProgramOverrideIsInvalid() {
    assertThatThrownBy(
            () ->
                TqConfigs.parse(
                    "", null, Map.of(), Map.of("backend.SimpleStorage.num_data_storage_units", 0)))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("backend.SimpleStorage.num_data_storage_units");
  }

  @Test
  void shouldReturnDefaultsWhenDocumentIsEmpty() {
    assertThat(TqConfigs.parse("")).isEqualTo(TqConfig.defaults());
    assertThat(TqConfigs.parse("# nothing but a comment\n")).isEqualTo(TqConfig.defaults());
    assertThat(TqConfigs.parse("controller:\n")).isEqualTo(TqConfig.defaults());
  }

  @Test
  void shouldLoadExampleFileAsTheDefaults() {
    assertThat(TqConfigs.load(EXAMPLE)).isEqualTo(TqConfig.defaults());
  }

  @Test
  void shouldListEveryKeyInExampleFile() throws IOException {
    Object doc = new Load(LoadSettings.builder().build()).loadFromString(Files.readString(EXAMPLE));
    Set<String> inFile = new TreeSet<>();
    flatten("", doc, inFile);
    Set<String> known =
        ConfigKey.all().stream().map(ConfigKey::key).collect(Collectors.toCollection(TreeSet::new));
    assertThat(inFile).isEqualTo(known);
  }

  @Test
  void shouldMapEveryKeyOntoTheRecords() {
    String yaml =
        """
        metrics:
          enabled: true
          port: 9100
          collect_interval: 3
          storage_timeout: 1500ms
        logging:
          level: info
          perf_log_flush_interval: 2m
        controller:
          sampler: GRPOGroupNSampler
          sampler_args:
            n_samples_per_prompt: 4
            group_tag: prompt
          polling_mode: true
          prealloc_sample_num: 256
          get_metadata_timeout: 20s
          get_metadata_check_interval: 0.1
        backend:
          storage_backend: MooncakeStore
          SimpleStorage:
            total_storage_size: 10000
            num_data_storage_units: 3
            send_recv_timeout: 60
          MooncakeStore:
            auto_init: false
            metadata_server: P2PHANDSHAKE
            master_server_address: 10.0.0.5:50051
            local_hostname: 10.0.0.7
            protocol: rdma
            global_segment_size: 8589934592
            local_buffer_size: 0
            device_name: mlx5_0
            hard_pin: false
            offload:
              enabled: true
              file_storage_path: /data/offload
              local_buffer_size_bytes: 1048576
              use_uring: true
              heartbeat_interval_seconds: 5
              client_port: 43000
              eviction_high_watermark_ratio: 0.8
              eviction_ratio: 0.2
            use_gdr: true
            gdr_staging_buffer_mb: 512
            batch_size_limit: 200
            max_batch_worker_threads: 8
            max_serial_worker_threads: 2
            max_retries: 5
            retry_delay: 250ms
        storage:
          poller_timeout: 4
          handshake_timeout: 40
          handshake_retry_interval: 2
          handshake_max_retries: 0
          data_update_response_timeout: 15
        client:
          num_threads: 16
          request_timeout: 45s
          empty_batch_sleep_interval: 100ms
        memory:
          limit_bytes: 68719476736
          storage_unit_limit_bytes: 17179869184
        network:
          bind_host: 0.0.0.0
          auth_token: "abc-123"
          controller_address: ctl.example:6000
          storage_unit_addresses: [su0:7000, su1:7000, su2:7000]
          store_node_addresses: ["[fd00::1]:8000"]
          connect_timeout: 3s
          max_frame_bytes: 268435456
        """;

    TqConfig expected =
        TqConfig.builder()
            .metrics(
                m ->
                    m.enabled(true)
                        .port(9100)
                        .collectInterval(Duration.ofSeconds(3))
                        .storageTimeout(Duration.ofMillis(1500)))
            .logging(
                l -> l.level(System.Logger.Level.INFO).perfLogFlushInterval(Duration.ofMinutes(2)))
            .controller(
                c ->
                    c.sampler("GRPOGroupNSampler")
                        .samplerArgs(Map.of("n_samples_per_prompt", 4L, "group_tag", "prompt"))
                        .pollingMode(true)
                        .preallocSampleNum(256)
                        .getMetadataTimeout(Duration.ofSeconds(20))
                        .getMetadataCheckInterval(Duration.ofMillis(100)))
            .backend(
                b ->
                    b.storageBackend(StorageBackend.MOONCAKE_STORE)
                        .simpleStorage(
                            s ->
                                s.totalStorageSize(10_000L)
                                    .numDataStorageUnits(3)
                                    .sendRecvTimeout(Duration.ofSeconds(60)))
                        .mooncakeStore(
                            m ->
                                m.autoInit(false)
                                    .metadataServer("P2PHANDSHAKE")
                                    .masterServerAddress(new HostPort("10.0.0.5", 50051))
                                    .localHostname("10.0.0.7")
                                    .protocol(TransportProtocol.RDMA)
                                    .globalSegmentSize(8_589_934_592L)
                                    .localBufferSize(0)
                                    .deviceName("mlx5_0")
                                    .hardPin(false)
                                    .offload(
                                        o ->
                                            o.enabled(true)
                                                .fileStoragePath("/data/offload")
                                                .localBufferSizeBytes(1_048_576)
                                                .useUring(true)
                                                .heartbeatIntervalSeconds(5)
                                                .clientPort(43000)
                                                .evictionHighWatermarkRatio(0.8)
                                                .evictionRatio(0.2))
                                    .useGdr(true)
                                    .gdrStagingBufferMb(512)
                                    .batchSizeLimit(200)
                                    .maxBatchWorkerThreads(8)
                                    .maxSerialWorkerThreads(2)
                                    .maxRetries(5)
                                    .retryDelay(Duration.ofMillis(250))))
            .storage(
                s ->
                    s.pollerTimeout(Duration.ofSeconds(4))
                        .handshakeTimeout(Duration.ofSeconds(40))
                        .handshakeRetryInterval(Duration.ofSeconds(2))
                        .handshakeMaxRetries(0)
                        .dataUpdateResponseTimeout(Duration.ofSeconds(15)))
            .client(
                c ->
                    c.numThreads(16)
                        .requestTimeout(Duration.ofSeconds(45))
                        .emptyBatchSleepInterval(Duration.ofMillis(100)))
            .memory(m -> m.limitBytes(68_719_476_736L).storageUnitLimitBytes(17_179_869_184L))
            .network(
                n ->
                    n.bindHost("0.0.0.0")
                        .authToken("abc-123")
                        .controllerAddress(new HostPort("ctl.example", 6000))
                        .storageUnitAddresses(
                            List.of(
                                new HostPort("su0", 7000),
                                new HostPort("su1", 7000),
                                new HostPort("su2", 7000)))
                        .storeNodeAddresses(List.of(new HostPort("fd00::1", 8000)))
                        .connectTimeout(Duration.ofSeconds(3))
                        .maxFrameBytes(268_435_456))
            .build();

    TqConfig parsed = TqConfigs.parse(yaml);

    assertThat(parsed).isEqualTo(expected);
    assertThat(parsed.backend().mooncakeStore().effectiveHardPin()).isFalse();
    assertThat(parsed.backend().simpleStorage().perUnitCapacity()).hasValue(3334);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "surprise",
        "metrics.surprise",
        "logging.surprise",
        "controller.surprise",
        "backend.surprise",
        "backend.SimpleStorage.surprise",
        "backend.MooncakeStore.surprise",
        "backend.MooncakeStore.offload.surprise",
        "storage.surprise",
        "client.surprise",
        "memory.surprise",
        "network.surprise"
      })
  void shouldRejectUnknownKeyWithItsFullPathAtEveryLevel(String path) {
    assertThatThrownBy(() -> TqConfigs.parse(yamlAt(path, "1")))
        .isInstanceOf(ConfigException.class)
        .hasMessage(path + ": 1 is not a known key");
  }

  @Test
  void shouldSuggestTheKeyMeantWhenMisspelled() {
    assertThatThrownBy(
            () -> TqConfigs.parse(yamlAt("backend.SimpleStorage.num_storage_units", "3")))
        .hasMessage(
            "backend.SimpleStorage.num_storage_units: 3 is not a known key"
                + " (did you mean backend.SimpleStorage.num_data_storage_units?)");
    assertThatThrownBy(() -> TqConfigs.parse(yamlAt("controller.pollingmode", "true")))
        .hasMessage(
            "controller.pollingmode: true is not a known key (did you mean controller.polling_mode?)");
  }

  @Test
  void shouldNameKeyAndValueWhenTypeIsWrong() {
    assertThatThrownBy(
            () ->
                TqConfigs.parse(
                    yamlAt("backend.SimpleStorage.num_data_storage_units", "\"three\"")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("backend.SimpleStorage.num_data_storage_units: \"three\" is not an integer")
        .extracting(e -> ((ConfigException) e).code())
        .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "backend.SimpleStorage.num_data_storage_units | 0     | backend.SimpleStorage.num_data_storage_units: 0 must be at least 1",
        "backend.SimpleStorage.num_data_storage_units | '\"3\"' | backend.SimpleStorage.num_data_storage_units: \"3\" is not an integer",
        "backend.SimpleStorage.total_storage_size   | -100  | backend.SimpleStorage.total_storage_size: -100 must be at least 1",
        "backend.MooncakeStore.global_segment_size  | -1    | backend.MooncakeStore.global_segment_size: -1 is not 0 or in [1024, 1099511627776]",
        "backend.MooncakeStore.offload.local_buffer_size_bytes | -2 | backend.MooncakeStore.offload.local_buffer_size_bytes: -2 must be at least 1",
        "memory.limit_bytes                        | -1    | memory.limit_bytes: -1 must be at least 1",
        "controller.polling_mode                   | maybe | controller.polling_mode: \"maybe\" is not a boolean (true or false)",
        "controller.get_metadata_timeout           | -1    | controller.get_metadata_timeout: -1s must be positive",
        "metrics.port                              | -1    | metrics.port: -1 is not a port (0 = any free port, 1-65535)",
        "backend.storage_backend                   | Redis | backend.storage_backend: \"Redis\" is not a storage backend (one of SimpleStorage, MooncakeStore)",
        "backend.storage_backend                   | RayStore | backend.storage_backend: \"RayStore\" is an upstream backend that is not available in this build (available: SimpleStorage, MooncakeStore)",
        "backend.MooncakeStore.master_server_address | localhost | backend.MooncakeStore.master_server_address: \"localhost\" is not host:port",
        "backend.MooncakeStore.master_server_address | 'h:99999' | backend.MooncakeStore.master_server_address: \"h:99999\" has a port out of range (0-65535)",
        "network.controller_address                | 'ctl:x' | network.controller_address: \"ctl:x\" has no valid port (host:port, port 0-65535)",
        "network.bind_host                         | 'not a host' | network.bind_host: \"not a host\" is not a host name or address",
        "network.storage_unit_addresses            | '[\"a:1\", b]' | network.storage_unit_addresses: [\"a:1\", \"b\"] is not a list of host:port (item 1: \"b\")",
        "backend.MooncakeStore.offload.eviction_ratio | '\"half\"' | backend.MooncakeStore.offload.eviction_ratio: \"half\" is not a number",
        "backend.MooncakeStore.offload.eviction_ratio | 0.0 | backend.MooncakeStore.offload.eviction_ratio: 0.0 is not a ratio in (0, 1]",
        "client.num_threads                        | 1.5   | client.num_threads: 1.5 is not an integer",
        "client.num_threads                        | 99999999999 | client.num_threads: 99999999999 is out of range for an integer",
        "client.num_threads                        | ''    | client.num_threads: null must be set (an integer)",
        "metrics                                   | 5     | metrics: 5 is not a section (a mapping of keys)",
      })
  void shouldRejectBadValuesNamingKeyAndValue(String path, String value, String message) {
    assertThatThrownBy(() -> TqConfigs.parse(yamlAt(path, value)))
        .isInstanceOf(ConfigException.class)
        .hasMessage(message);
  }

  @Test
  void shouldReportEveryProblemOfTheFileAtOnce() {
    String yaml =
        """
        controller:
          polling_mode: "yes"
          prealloc_sample_num: 0
        backend:
          SimpleStorage:
            num_data_storage_units: -2
            extra: 1
        """;
    ConfigException e = catchConfig(() -> TqConfigs.parse(yaml));
    assertThat(e.problems())
        .extracting(ConfigProblem::toString)
        .containsExactlyInAnyOrder(
            "controller.polling_mode: \"yes\" is not a boolean (true or false)",
            "backend.SimpleStorage.extra: 1 is not a known key",
            "controller.prealloc_sample_num: 0 must be at least 1",
            "backend.SimpleStorage.num_data_storage_units: -2 must be at least 1");
  }

  @Test
  void shouldLetEnvironmentOverrideTheFile(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("tq.yaml");
    Files.writeString(
        file,
        """
        client:
          num_threads: 16
        controller:
          prealloc_sample_num: 4
          get_metadata_timeout: 9
        """);

    TqConfig c =
        TqConfigs.load(
            file, Map.of("TQ_NUM_THREADS", "2", "TQ_CONTROLLER_GET_METADATA_TIMEOUT", "3"));

    assertThat(c.client().numThreads()).isEqualTo(2);
    assertThat(c.controller().getMetadataTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.controller().preallocSampleNum()).isEqualTo(4);
    assertThat(TqConfigs.load(file).client().numThreads()).isEqualTo(16);
  }

  @Test
  void shouldNameTheFileAndTheVariableWhenOverrideIsBad(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("tq.yaml");
    Files.writeString(file, "client:\n  num_threads: 0\n");
    assertThatThrownBy(() -> TqConfigs.load(file, Map.of("TQ_STORAGE_HANDSHAKE_MAX_RETRIES", "x")))
        .hasMessageStartingWith(file + ": 2 configuration problems:")
        .hasMessageContaining(
            "TQ_STORAGE_HANDSHAKE_MAX_RETRIES (storage.handshake_max_retries): \"x\" is not an"
                + " integer")
        .hasMessageContaining("client.num_threads: 0 must be at least 1");
  }

  @Test
  void shouldAcceptRuntimeKeysOnlyWhenNull() {
    TqConfig c =
        TqConfigs.parse(
            """
            metrics:
              endpoint: null
            controller:
              zmq_info: null
            backend:
              SimpleStorage:
                zmq_info: null
            """);
    assertThat(c).isEqualTo(TqConfig.defaults());
    assertThatThrownBy(() -> TqConfigs.parse(yamlAt("controller.zmq_info", "{ip: 1.2.3.4}")))
        .hasMessage(
            "controller.zmq_info: {\"ip\": \"1.2.3.4\"} is filled in at run time and must not be set"
                + " (use network.controller_address)");
  }

  @Test
  void shouldValidateTheSectionsOfBackendsThisBuildLacks() {
    assertThat(
            TqConfigs.parse(yamlAt("backend.Yuanrong.worker_port", "31502"))
                .backend()
                .yuanrong()
                .workerPort())
        .isEqualTo(31502);
    assertThatThrownBy(() -> TqConfigs.parse(yamlAt("backend.Yuanrong.worker_prot", "31501")))
        .hasMessage(
            "backend.Yuanrong.worker_prot: 31501 is not a known key (did you mean"
                + " backend.Yuanrong.worker_port?)");
  }

  @Test
  void shouldRejectAMapWhereAValueBelongs() {
    assertThatThrownBy(() -> TqConfigs.parse(yamlAt("metrics.port", "{a: 1}")))
        .hasMessage("metrics.port: {...} is a section, but the key takes an integer");
  }

  @Test
  void shouldNotEchoValuesOfMisspelledSecretKeys() {
    assertThatThrownBy(() -> TqConfigs.parse(yamlAt("network.auth_tokn", "hunter2")))
        .hasMessageStartingWith("network.auth_tokn: <redacted> is not a known key")
        .message()
        .doesNotContain("hunter2");
  }

  @Test
  void shouldRejectInvalidYamlAndDuplicateKeys() {
    assertThatThrownBy(() -> TqConfigs.parse("controller: [unclosed"))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("<string>: not valid YAML:");
    assertThatThrownBy(() -> TqConfigs.parse("metrics:\n  port: 1\n  port: 2\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("port");
    assertThatThrownBy(() -> TqConfigs.parse("- a\n- b\n"))
        .hasMessage(
            "(document): [\"a\", \"b\"] is not a mapping of sections (metrics, controller, ...)");
  }

  @Test
  void shouldNameMissingFile(@TempDir Path dir) {
    Path missing = dir.resolve("absent.yaml");
    assertThatThrownBy(() -> TqConfigs.load(missing))
        .isInstanceOf(ConfigException.class)
        .hasMessage("configuration file " + missing + " does not exist");
  }

  /** Builds a nested YAML document that sets one dotted path. */
  private static String yamlAt(String path, String value) {
    String[] parts = path.split("\\.");
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < parts.length; i++) {
      sb.append("  ".repeat(i)).append(parts[i]).append(':');
      if (i == parts.length - 1) {
        sb.append(' ').append(value);
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  private static void flatten(String prefix, Object node, Set<String> out) {
    if (prefix.equals("backend.RayStore")) {
      return; // upstream's backend without settings: an empty section
    }
    boolean mappingKey = ConfigKey.forKey(prefix).map(ConfigKey::takesMapping).orElse(false);
    if (node instanceof Map<?, ?> map && !mappingKey) {
      for (Map.Entry<?, ?> e : map.entrySet()) {
        flatten(
            prefix.isEmpty() ? (String) e.getKey() : prefix + "." + e.getKey(), e.getValue(), out);
      }
    } else {
      out.add(prefix);
    }
  }

  private static ConfigException catchConfig(Runnable r) {
    try {
      r.run();
    } catch (ConfigException e) {
      return e;
    }
    throw new AssertionError("expected a ConfigException");
  }
}
