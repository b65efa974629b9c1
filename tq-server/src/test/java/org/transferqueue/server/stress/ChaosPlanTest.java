package org.transferqueue.server.stress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.server.bench.BenchBackend;
import org.transferqueue.server.config.TqConfigs;

/** The chaos plan: its roles, its validation and the durability settings it gives the children. */
class ChaosPlanTest {

  private static ChaosPlan plan(boolean journal, Optional<String> sync) {
    return new ChaosPlan(
        EnumSet.allOf(ChaosRole.class),
        Duration.ofSeconds(20),
        journal,
        Optional.empty(),
        sync,
        Duration.ofSeconds(60));
  }

  @Test
  void shouldParseRolesByTheirCommandNames() {
    assertThat(ChaosRole.parse("all")).containsExactly(ChaosRole.values());
    assertThat(ChaosRole.parse("store-node, controller"))
        .containsExactly(ChaosRole.CONTROLLER, ChaosRole.STORE_NODE);
    assertThat(ChaosRole.STORAGE_UNIT.label()).isEqualTo("storage-unit");
    assertThatThrownBy(() -> ChaosRole.parse("controller,disk"))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("'disk'")
        .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void shouldPlaceEachStorageRoleInItsBackendAndTheControllerInBoth() {
    for (BenchBackend backend : BenchBackend.values()) {
      assertThat(ChaosRole.CONTROLLER.runsIn(backend)).isTrue();
    }
    assertThat(ChaosRole.STORAGE_UNIT.runsIn(BenchBackend.SIMPLE_STORAGE)).isTrue();
    assertThat(ChaosRole.STORAGE_UNIT.runsIn(BenchBackend.MOONCAKE_STORE)).isFalse();
    assertThat(ChaosRole.STORE_NODE.runsIn(BenchBackend.MOONCAKE_STORE)).isTrue();
  }

  @Test
  void shouldJournalEveryRoleIntoTheRunsDirectoryWithTheJournal() {
    String yaml = plan(true, Optional.of("FSYNC")).yaml(Path.of("/tmp/j"));

    assertThat(yaml)
        .contains("controller:\n  durability: journal\n")
        .contains("storage:\n  durability: journal\n")
        .contains("durability:\n  journal_dir: \"/tmp/j\"\n  sync: fsync\n");
    assertThat(plan(true, Optional.empty()).yaml(Path.of("/tmp/j"))).doesNotContain("sync");
    String odd = plan(true, Optional.empty()).yaml(Path.of("/tmp/a\"b\\c"));
    assertThat(TqConfigs.parse(odd).durability().journalDir()).isEqualTo("/tmp/a\"b\\c");
    assertThat(plan(false, Optional.empty()).yaml(Path.of("/tmp/j"))).isEmpty();
    assertThat(plan(false, Optional.empty()).durability()).isEqualTo("none");
  }

  @Test
  void shouldRejectBadValuesNamingTheOption() {
    List<Runnable> bad =
        List.of(
            () -> plan(true, Optional.of("sometimes")),
            () -> plan(false, Optional.of("fsync")),
            () ->
                new ChaosPlan(
                    Set.of(),
                    Duration.ofSeconds(1),
                    true,
                    Optional.empty(),
                    Optional.empty(),
                    Duration.ofSeconds(1)),
            () ->
                new ChaosPlan(
                    Set.of(ChaosRole.CONTROLLER),
                    Duration.ZERO,
                    true,
                    Optional.empty(),
                    Optional.empty(),
                    Duration.ofSeconds(1)),
            () ->
                new ChaosPlan(
                    Set.of(ChaosRole.CONTROLLER),
                    Duration.ofSeconds(1),
                    false,
                    Optional.of(Path.of("/tmp")),
                    Optional.empty(),
                    Duration.ofSeconds(1)));
    for (Runnable each : bad) {
      assertThatThrownBy(each::run).isInstanceOf(TqException.class).hasMessageStartingWith("--");
    }
  }

  @Test
  void shouldKillEachKindInTurnAndEachRankWithinItsKind() {
    List<String> children = List.of("controller", "storage-unit", "storage-unit");

    assertThat(ChaosConductor.victims(children, EnumSet.allOf(ChaosRole.class)))
        .containsExactly(0, 1, 0, 2);
    assertThat(ChaosConductor.victims(children, EnumSet.of(ChaosRole.STORAGE_UNIT)))
        .containsExactly(1, 2);
    assertThat(ChaosConductor.victims(children, EnumSet.of(ChaosRole.CONTROLLER)))
        .containsExactly(0);
    assertThat(ChaosConductor.victims(children, EnumSet.of(ChaosRole.STORE_NODE))).isEmpty();
  }

  @Test
  void shouldTakeNearestRankPercentilesOfTheRecoveriesThatGotThere() {
    List<ChaosFigures.Recovery> recoveries = new ArrayList<>();
    for (long ms = 1; ms <= 10; ms++) {
      recoveries.add(
          new ChaosFigures.Recovery(
              ms % 2 == 0 ? ChaosRole.CONTROLLER : ChaosRole.STORAGE_UNIT,
              "x",
              ms,
              ms * 1_000_000,
              ms == 10 ? -1 : ms * 2_000_000,
              null));
    }
    recoveries.add(
        new ChaosFigures.Recovery(ChaosRole.STORE_NODE, "store-node 0", -1, -1, -1, "refused"));
    ChaosFigures figures = new ChaosFigures("journal", 20_000, recoveries, 0, 0);

    assertThat(figures.answering())
        .isEqualTo(new ChaosFigures.Percentiles(10, 5_000_000, 10_000_000, 10_000_000));
    assertThat(figures.firstOp())
        .isEqualTo(new ChaosFigures.Percentiles(9, 10_000_000, 18_000_000, 18_000_000));
    assertThat(figures.killsByRole())
        .containsExactly(
            Map.entry(ChaosRole.CONTROLLER, 5),
            Map.entry(ChaosRole.STORAGE_UNIT, 5),
            Map.entry(ChaosRole.STORE_NODE, 1));
    assertThat(figures.failures()).containsExactly("store-node 0: refused");
    assertThat(new ChaosFigures("none", 1, List.of(), 0, 0).answering().count()).isZero();
  }
}
