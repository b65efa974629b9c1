package org.transferqueue.server.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;

class BenchPlanTest {

  private static BenchPlan plan(List<BenchMode> modes, String yaml) {
    return new BenchPlan(
        List.of(BenchSize.TINY),
        false,
        List.of(BenchBackend.MOONCAKE_STORE),
        modes,
        List.of(),
        3,
        WarmupPolicy.fixed(1),
        1,
        yaml,
        null,
        Map.of(),
        "tq bench");
  }

  @Test
  void shouldExpandAllToTheRunnableModesAndListTheOthers() {
    assertThat(BenchMode.parse("ALL"))
        .containsExactly(BenchMode.EMBEDDED, BenchMode.LOOPBACK, BenchMode.SHM);
    assertThat(BenchMode.parse("loopback, SHM,loopback"))
        .containsExactly(BenchMode.LOOPBACK, BenchMode.SHM);
    assertThat(BenchMode.parse("shm")).containsExactly(BenchMode.SHM);
    assertThatThrownBy(() -> BenchMode.parse("loopback,tcp"))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("'tcp'");
    assertThat(BenchMode.skipped("all")).isEmpty();
    assertThat(BenchMode.parse("loopback")).containsExactly(BenchMode.LOOPBACK);
    assertThat(BenchMode.parse("Embedded")).containsExactly(BenchMode.EMBEDDED);
    assertThat(BenchMode.skipped("embedded")).isEmpty();
    assertThat(BenchBackend.parse("all"))
        .containsExactly(BenchBackend.SIMPLE_STORAGE, BenchBackend.MOONCAKE_STORE);
    assertThat(BenchBackend.parse("mooncakestore")).containsExactly(BenchBackend.MOONCAKE_STORE);
  }

  @Test
  void shouldConfigureEachCaseOverTheUsersYaml() {
    BenchPlan plan =
        plan(
            List.of(BenchMode.EMBEDDED),
            "backend:\n  SimpleStorage:\n    num_data_storage_units: 3\n");
    long bytes = 100L << 20;
    TqConfig mooncake = plan.caseConfig(BenchBackend.MOONCAKE_STORE, BenchSize.SMALL, bytes);
    assertThat(mooncake.backend().storageBackend()).isEqualTo(StorageBackend.MOONCAKE_STORE);
    assertThat(mooncake.backend().mooncakeStore().globalSegmentSize())
        .isEqualTo(MemoryCheck.mooncakeSegmentBytes(bytes))
        .isGreaterThan(bytes);
    TqConfig simple = plan.caseConfig(BenchBackend.SIMPLE_STORAGE, BenchSize.SMALL, bytes);
    assertThat(simple.backend().storageBackend()).isEqualTo(StorageBackend.SIMPLE_STORAGE);
    assertThat(simple.backend().simpleStorage().numDataStorageUnits()).isEqualTo(3);
    assertThat(simple.backend().simpleStorage().totalStorageSize().getAsLong())
        .isEqualTo(1024L * 3);
  }
}
