package org.transferqueue.server.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.config.TqConfigs;

/** The configuration file the loopback servers and their client share. */
class LoopbackServersTest {
  private static final List<Integer> PORTS = List.of(47001, 47002, 47003);

  private static TqConfig caseConfig(BenchBackend backend) {
    return caseConfig(backend, BenchMode.LOOPBACK, "");
  }

  private static TqConfig caseConfig(BenchBackend backend, BenchMode mode, String networkYaml) {
    BenchPlan plan =
        new BenchPlan(
            List.of(BenchSize.TINY),
            false,
            List.of(backend),
            List.of(mode),
            List.of(),
            3,
            WarmupPolicy.fixed(1),
            1L,
            "memory:\n  limit_bytes: 4294967296\n" + networkYaml,
            null,
            Map.of(),
            "tq bench");
    return plan.caseConfig(backend, mode, BenchSize.TINY, 2L << 20);
  }

  @Test
  void shouldListTheControllerAndTwoStorageUnitsWhenSimpleStorage() {
    TqConfig config = caseConfig(BenchBackend.SIMPLE_STORAGE);
    TqConfig written =
        TqConfigs.parse(
            LoopbackServers.yaml(BenchBackend.SIMPLE_STORAGE, config, PORTS),
            null,
            Map.of(),
            Map.of());

    assertThat(written.backend().storageBackend()).isEqualTo(StorageBackend.SIMPLE_STORAGE);
    assertThat(written.network().controllerAddress()).contains(new HostPort("127.0.0.1", 47001));
    assertThat(written.network().storageUnitAddresses())
        .containsExactly(new HostPort("127.0.0.1", 47002), new HostPort("127.0.0.1", 47003));
    assertThat(written.network().storeNodeAddresses()).isEmpty();
    assertThat(written.backend().simpleStorage().totalStorageSize())
        .isEqualTo(config.backend().simpleStorage().totalStorageSize());
    assertThat(written.memory().limitBytes()).hasValue(4294967296L);
    assertThat(written.network().maxFrameBytes()).isEqualTo(config.network().maxFrameBytes());
  }

  @Test
  void shouldListTheControllerAndTwoStoreNodesWithTheCaseSegmentWhenMooncakeStore() {
    TqConfig config = caseConfig(BenchBackend.MOONCAKE_STORE);
    TqConfig written =
        TqConfigs.parse(
            LoopbackServers.yaml(BenchBackend.MOONCAKE_STORE, config, PORTS),
            null,
            Map.of(),
            Map.of());

    assertThat(written.backend().storageBackend()).isEqualTo(StorageBackend.MOONCAKE_STORE);
    assertThat(written.network().storeNodeAddresses())
        .containsExactly(new HostPort("127.0.0.1", 47002), new HostPort("127.0.0.1", 47003));
    assertThat(written.network().storageUnitAddresses()).isEmpty();
    assertThat(written.backend().mooncakeStore().globalSegmentSize())
        .isEqualTo(config.backend().mooncakeStore().globalSegmentSize());
    assertThat(written.backend().mooncakeStore().localBufferSize())
        .isEqualTo(config.backend().mooncakeStore().localBufferSize());
  }

  @Test
  void shouldTurnSharedMemoryOffForLoopbackAndOnForShmWhateverTheYamlSays() {
    String network =
        "network:\n"
            + "  shared_memory: true\n"
            + "  shared_memory_segment_bytes: 8388608\n"
            + "  shared_memory_min_bytes: 4096\n";
    TqConfig tcp = caseConfig(BenchBackend.SIMPLE_STORAGE, BenchMode.LOOPBACK, network);
    TqConfig shm =
        caseConfig(
            BenchBackend.MOONCAKE_STORE,
            BenchMode.SHM,
            network.replace("shared_memory: true", "shared_memory: false"));

    TqConfig writtenTcp =
        TqConfigs.parse(
            LoopbackServers.yaml(BenchBackend.SIMPLE_STORAGE, tcp, PORTS),
            null,
            Map.of(),
            Map.of());
    TqConfig writtenShm =
        TqConfigs.parse(
            LoopbackServers.yaml(BenchBackend.MOONCAKE_STORE, shm, PORTS),
            null,
            Map.of(),
            Map.of());

    assertThat(writtenTcp.network().sharedMemory()).isFalse();
    assertThat(writtenShm.network().sharedMemory()).isTrue();
    for (TqConfig written : List.of(writtenTcp, writtenShm)) {
      assertThat(written.network().sharedMemorySegmentBytes()).isEqualTo(8L << 20);
      assertThat(written.network().sharedMemoryMinBytes()).isEqualTo(4096);
    }
  }
}
