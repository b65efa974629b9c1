package org.transferqueue.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ConfigKeyTest {

  @Test
  void shouldMapEveryUpstreamEnvironmentVariable() {
    assertThat(ConfigKey.environmentVariables().keySet())
        .contains(
            "TQ_PRE_ALLOC_SAMPLE_NUM",
            "TQ_CONTROLLER_GET_METADATA_TIMEOUT",
            "TQ_CONTROLLER_GET_METADATA_CHECK_INTERVAL",
            "TQ_STREAMING_DATASET_EMPTY_BATCH_SLEEP_INTERVAL",
            "TQ_NUM_THREADS",
            "TQ_SIMPLE_STORAGE_SEND_RECV_TIMEOUT",
            "TQ_STORAGE_POLLER_TIMEOUT",
            "TQ_STORAGE_HANDSHAKE_TIMEOUT",
            "TQ_STORAGE_HANDSHAKE_RETRY_INTERVAL",
            "TQ_STORAGE_HANDSHAKE_MAX_RETRIES",
            "TQ_DATA_UPDATE_RESPONSE_TIMEOUT",
            "TQ_METRICS_COLLECT_INTERVAL",
            "TQ_METRICS_STORAGE_TIMEOUT",
            "TQ_PERF_LOG_FLUSH_INTERVAL",
            "TQ_LOGGING_LEVEL");
  }

  @Test
  void shouldApplyEveryEnvironmentVariable() {
    Map<String, String> env =
        Map.ofEntries(
            Map.entry("TQ_PRE_ALLOC_SAMPLE_NUM", "64"),
            Map.entry("TQ_CONTROLLER_GET_METADATA_TIMEOUT", "7"),
            Map.entry("TQ_CONTROLLER_GET_METADATA_CHECK_INTERVAL", "250ms"),
            Map.entry("TQ_STREAMING_DATASET_EMPTY_BATCH_SLEEP_INTERVAL", "0.5"),
            Map.entry("TQ_NUM_THREADS", "3"),
            Map.entry("TQ_SIMPLE_STORAGE_SEND_RECV_TIMEOUT", "20"),
            Map.entry("TQ_STORAGE_POLLER_TIMEOUT", "2"),
            Map.entry("TQ_STORAGE_HANDSHAKE_TIMEOUT", "60"),
            Map.entry("TQ_STORAGE_HANDSHAKE_RETRY_INTERVAL", "3"),
            Map.entry("TQ_STORAGE_HANDSHAKE_MAX_RETRIES", "9"),
            Map.entry("TQ_DATA_UPDATE_RESPONSE_TIMEOUT", "45"),
            Map.entry("TQ_METRICS_COLLECT_INTERVAL", "1m"),
            Map.entry("TQ_METRICS_STORAGE_TIMEOUT", "6"),
            Map.entry("TQ_PERF_LOG_FLUSH_INTERVAL", "120"),
            Map.entry("TQ_LOGGING_LEVEL", "debug"),
            Map.entry("TQ_BIND_HOST", "0.0.0.0"),
            Map.entry("TQ_AUTH_TOKEN", "tok-123"),
            Map.entry("TQ_CONTROLLER_ADDRESS", "ctl:6000"),
            Map.entry("TQ_STORAGE_UNIT_ADDRESSES", "su0:7000, su1:7000"),
            Map.entry("TQ_STORE_NODE_ADDRESSES", "[::1]:8000"),
            Map.entry("UNRELATED", "ignored"));

    TqConfig c = TqConfig.builder().applyEnvironment(env).build();

    assertThat(c.controller().preallocSampleNum()).isEqualTo(64);
    assertThat(c.controller().getMetadataTimeout()).isEqualTo(Duration.ofSeconds(7));
    assertThat(c.controller().getMetadataCheckInterval()).isEqualTo(Duration.ofMillis(250));
    assertThat(c.client().emptyBatchSleepInterval()).isEqualTo(Duration.ofMillis(500));
    assertThat(c.client().numThreads()).isEqualTo(3);
    assertThat(c.backend().simpleStorage().sendRecvTimeout()).isEqualTo(Duration.ofSeconds(20));
    assertThat(c.storage().pollerTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.storage().handshakeTimeout()).isEqualTo(Duration.ofSeconds(60));
    assertThat(c.storage().handshakeRetryInterval()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.storage().handshakeMaxRetries()).isEqualTo(9);
    assertThat(c.storage().dataUpdateResponseTimeout()).isEqualTo(Duration.ofSeconds(45));
    assertThat(c.metrics().collectInterval()).isEqualTo(Duration.ofMinutes(1));
    assertThat(c.metrics().storageTimeout()).isEqualTo(Duration.ofSeconds(6));
    assertThat(c.logging().perfLogFlushInterval()).isEqualTo(Duration.ofSeconds(120));
    assertThat(c.logging().level()).isEqualTo(System.Logger.Level.DEBUG);
    assertThat(c.network().bindHost()).isEqualTo("0.0.0.0");
    assertThat(c.network().authToken()).contains("tok-123");
    assertThat(c.network().controllerAddress()).contains(new HostPort("ctl", 6000));
    assertThat(c.network().storageUnitAddresses())
        .containsExactly(new HostPort("su0", 7000), new HostPort("su1", 7000));
    assertThat(c.network().storeNodeAddresses()).containsExactly(new HostPort("::1", 8000));
  }

  @Test
  void shouldLetEnvironmentWinOverEarlierSettings() {
    TqConfig c =
        TqConfig.builder()
            .client(b -> b.numThreads(16))
            .controller(b -> b.preallocSampleNum(5))
            .applyEnvironment(Map.of("TQ_NUM_THREADS", "2"))
            .build();

    assertThat(c.client().numThreads()).isEqualTo(2);
    assertThat(c.controller().preallocSampleNum()).isEqualTo(5);
  }

  @Test
  void shouldNameVariableKeyAndValueWhenEnvironmentValueIsBad() {
    assertThatThrownBy(
            () ->
                TqConfig.builder()
                    .applyEnvironment(
                        Map.of("TQ_NUM_THREADS", "many", "TQ_STORAGE_POLLER_TIMEOUT", "soon")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("TQ_NUM_THREADS (client.num_threads): \"many\" is not an integer")
        .hasMessageContaining(
            "TQ_STORAGE_POLLER_TIMEOUT (storage.poller_timeout): \"soon\" is not a duration");
  }

  @Test
  void shouldCheckRangesOfEnvironmentValuesAtBuild() {
    TqConfig.Builder b =
        TqConfig.builder().applyEnvironment(Map.of("TQ_PRE_ALLOC_SAMPLE_NUM", "0"));
    assertThatThrownBy(b::build).hasMessage("controller.prealloc_sample_num: 0 must be at least 1");
  }

  @Test
  void shouldClearNullableKeyWhenEnvironmentValueIsEmpty() {
    TqConfig c =
        TqConfig.builder()
            .network(n -> n.authToken("from-file"))
            .applyEnvironment(Map.of("TQ_AUTH_TOKEN", ""))
            .build();
    assertThat(c.network().authToken()).isEmpty();
  }

  @Test
  void shouldRedactSecretValuesInTypeErrors() {
    ConfigKey<?> token = ConfigKey.forKey("network.auth_token").orElseThrow();
    assertThat(token.secret()).isTrue();
    assertThatThrownBy(() -> token.apply(TqConfig.builder(), 12345))
        .hasMessage("network.auth_token: <redacted> is not a string (quote it)");
  }

  @Test
  void shouldCheckTypesWhenSettingByKey() {
    TqConfig.Builder b = TqConfig.builder();
    assertThatThrownBy(() -> b.set("backend.SimpleStorage.num_data_storage_units", "three"))
        .hasMessage("backend.SimpleStorage.num_data_storage_units: \"three\" is not an integer");
    assertThatThrownBy(() -> b.set("controller.polling_mode", "yes"))
        .hasMessage("controller.polling_mode: \"yes\" is not a boolean (true or false)");
    assertThatThrownBy(() -> b.set("metrics.port", 1.5))
        .hasMessage("metrics.port: 1.5 is not an integer");
    assertThatThrownBy(() -> b.set("metrics.port", null))
        .hasMessage("metrics.port: null must be set (an integer)");
    assertThatThrownBy(() -> b.set("metrics.port", 3_000_000_000L))
        .hasMessage("metrics.port: 3000000000 is out of range for an integer");
    assertThatThrownBy(() -> b.set("backend.storage_backend", "Yuanrong"))
        .hasMessage(
            "backend.storage_backend: \"Yuanrong\" is an upstream backend that is not available in"
                + " this build (available: SimpleStorage, MooncakeStore)");
    assertThatThrownBy(() -> b.set("backend.storage_backend", "simplestorage"))
        .hasMessage(
            "backend.storage_backend: \"simplestorage\" is not a storage backend"
                + " (one of SimpleStorage, MooncakeStore)");
    assertThatThrownBy(() -> b.set("backend.MooncakeStore.protocol", "udp"))
        .hasMessage("backend.MooncakeStore.protocol: \"udp\" is not a protocol (tcp or rdma)");
    assertThatThrownBy(() -> b.set("network.controller_address", "ctl:99999"))
        .hasMessage("network.controller_address: \"ctl:99999\" has a port out of range (0-65535)");
    assertThatThrownBy(() -> b.set("no.such.key", 1))
        .hasMessage("no.such.key: 1 is not a known key");
    assertThatThrownBy(() -> b.set("client.request_timeout", "-3s"))
        .hasMessageStartingWith("client.request_timeout: \"-3s\" is not a duration");
  }

  @Test
  void shouldReadDurationsInEveryAcceptedForm() {
    assertThat(timeout(5)).isEqualTo(Duration.ofSeconds(5));
    assertThat(timeout(5_000_000_000L)).isEqualTo(Duration.ofSeconds(5_000_000_000L));
    assertThat(timeout(0.25)).isEqualTo(Duration.ofMillis(250));
    assertThat(timeout("1500ms")).isEqualTo(Duration.ofMillis(1500));
    assertThat(timeout("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(timeout("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(timeout("10us")).isEqualTo(Duration.ofNanos(10_000));
    assertThat(timeout("PT3S")).isEqualTo(Duration.ofSeconds(3));
    assertThat(timeout("7")).isEqualTo(Duration.ofSeconds(7));
  }

  @Test
  void shouldListEachKeyOnceWithSectionsAndChildren() {
    Set<String> seen = new HashSet<>();
    for (ConfigKey<?> k : ConfigKey.all()) {
      assertThat(seen.add(k.key())).as("duplicate %s", k.key()).isTrue();
      assertThat(ConfigKey.forKey(k.key())).contains(k);
    }
    assertThat(ConfigKey.isSection("backend.MooncakeStore.offload")).isTrue();
    assertThat(ConfigKey.isSection("backend.MooncakeStore.offload.enabled")).isFalse();
    assertThat(ConfigKey.childrenOf(""))
        .containsExactly(
            "metrics",
            "logging",
            "controller",
            "backend",
            "storage",
            "client",
            "memory",
            "network",
            "durability");
    assertThat(ConfigKey.childrenOf("backend"))
        .containsExactly("storage_backend", "SimpleStorage", "MooncakeStore", "Yuanrong");
  }

  @Test
  void shouldParseAndRejectHostPorts() {
    assertThat(HostPort.parse("10.0.0.1:80")).isEqualTo(new HostPort("10.0.0.1", 80));
    assertThat(HostPort.parse("[fe80::1]:9000").host()).isEqualTo("fe80::1");
    assertThat(HostPort.parse("[fe80::1]:9000")).hasToString("[fe80::1]:9000");
    assertThat(HostPort.parse("127.0.0.1:0").port()).isZero();
    for (String bad :
        List.of("host", "host:", ":80", "host:-1", "host:65536", "ho st:1", "a:b:c", "[::1]")) {
      assertThatThrownBy(() -> HostPort.parse(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  private static Duration timeout(Object raw) {
    TqConfig.Builder b = TqConfig.builder();
    b.set("client.request_timeout", raw);
    return b.build().client().requestTimeout();
  }
}
