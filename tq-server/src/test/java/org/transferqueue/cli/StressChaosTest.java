package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.cli.RunningSystem.Result;

/**
 * {@code tq stress --chaos}: server processes killed with SIGKILL and restarted while the clients
 * run. Without a journal the harness must see the loss (a restarted storage unit is empty, so
 * acknowledged rows on it no longer read back); with the journal nothing acknowledged may be lost
 * and no read may return wrong data.
 */
class StressChaosTest {

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value) {
    return (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object value) {
    return (List<Object>) value;
  }

  private static long number(Object value) {
    return ((Number) value).longValue();
  }

  private static Map<String, Object> json(Path file) throws IOException {
    return map(Json.parse(Files.readString(file, StandardCharsets.UTF_8)));
  }

  /** The chaos figures of each backend's result. */
  private static List<Map<String, Object>> chaos(Path file) throws IOException {
    return list(json(file).get("results")).stream().map(r -> map(map(r).get("chaos"))).toList();
  }

  /** Every kill got its role back: a ready line, a PING reply, no failure. */
  private static void assertEveryRoleCameBack(Map<String, Object> chaos) {
    assertThat(list(chaos.get("restartFailures"))).isEmpty();
    for (Object each : list(chaos.get("recoveries"))) {
      Map<String, Object> recovery = map(each);
      assertThat(recovery.get("answeringMs")).as("%s", recovery).isNotNull();
      assertThat(((Number) recovery.get("answeringMs")).doubleValue())
          .isGreaterThanOrEqualTo(((Number) recovery.get("readyMs")).doubleValue());
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void shouldReportAcknowledgedRowsLostWhenStorageUnitsRestartWithoutAJournal(@TempDir Path dir)
      throws IOException {
    Path json = dir.resolve("chaos-none.json");
    Result run =
        RunningSystem.run(
            "stress",
            "--chaos",
            "--durability=none",
            "--chaos-role=storage-unit",
            "--chaos-interval=3s",
            "--backend=SimpleStorage",
            "--clients=8",
            "--connections=2",
            "--duration=10s",
            "--value-bytes=1024",
            "--recovery-timeout=20s",
            "--verify",
            "--json=" + json);

    assertThat(run.status()).as(run.out() + run.err()).isEqualTo(StressCommand.EXIT_FAILED);
    assertThat(run.out()).contains("acknowledged writes lost: ").contains("kill to PING answered");
    Map<String, Object> chaos = chaos(json).getFirst();
    assertThat(chaos.get("durability")).isEqualTo("none");
    assertThat(number(map(chaos.get("kills")).get("storage-unit"))).isGreaterThanOrEqualTo(2);
    assertThat(map(chaos.get("kills"))).doesNotContainKey("controller");
    assertEveryRoleCameBack(chaos);
    // The harness sees the loss, and a restarted empty unit never serves wrong bytes.
    assertThat(number(chaos.get("acknowledgedWritesLost"))).isPositive();
    assertThat(number(chaos.get("wrongReads"))).isZero();
    assertThat(number(map(list(json(json).get("results")).getFirst()).get("leakedBytes"))).isZero();
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void shouldLoseNothingAcknowledgedWhenStorageUnitsAreKilledWithTheJournal(@TempDir Path dir)
      throws IOException {
    Path json = dir.resolve("chaos-journal.json");
    Result run =
        RunningSystem.run(
            "stress",
            "--chaos",
            "--chaos-role=storage-unit",
            "--chaos-interval=3s",
            "--backend=SimpleStorage",
            "--clients=8",
            "--connections=2",
            "--duration=10s",
            "--value-bytes=1024",
            "--verify",
            "--json=" + json);

    Map<String, Object> chaos = chaos(json).getFirst();
    assertThat(chaos.get("durability")).isEqualTo("journal");
    assertThat(number(map(chaos.get("kills")).get("storage-unit"))).isGreaterThanOrEqualTo(2);
    assertEveryRoleCameBack(chaos);
    assertThat(number(chaos.get("acknowledgedWritesLost"))).as(run.out()).isZero();
    assertThat(number(chaos.get("wrongReads"))).as(run.out()).isZero();
    assertThat(run.status()).as(run.out() + run.err()).isZero();
  }

  @Test
  @Tag("slow")
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  void shouldLoseNothingAcknowledgedWhenEveryRoleKindIsKilledWithTheJournal(@TempDir Path dir)
      throws IOException {
    Path json = dir.resolve("chaos-all.json");
    Result run =
        RunningSystem.run(
            "stress",
            "--chaos",
            "--chaos-interval=10s",
            "--clients=64",
            "--duration=65s",
            "--verify",
            "--json=" + json);

    List<Map<String, Object>> chaos = chaos(json);
    assertThat(chaos).hasSize(2);
    assertThat(map(chaos.get(0).get("kills"))).containsOnlyKeys("controller", "storage-unit");
    assertThat(map(chaos.get(1).get("kills"))).containsOnlyKeys("controller", "store-node");
    for (Map<String, Object> each : chaos) {
      assertEveryRoleCameBack(each);
      assertThat(number(each.get("acknowledgedWritesLost"))).as(run.out()).isZero();
      assertThat(number(each.get("wrongReads"))).as(run.out()).isZero();
    }
    assertThat(run.status()).as(run.out() + run.err()).isZero();
  }

  @Test
  void shouldExitWithStatus2AndOneLineForBadChaosOptions() {
    List<List<String>> bad =
        List.of(
            List.of("stress", "--chaos", "--config=/nonexistent/tq.yaml"),
            List.of("stress", "--chaos", "--durability=disk"),
            List.of("stress", "--durability=journal"),
            List.of("stress", "--chaos", "--durability=none", "--journal-dir=/tmp"),
            List.of("stress", "--chaos", "--journal-sync=sometimes"),
            List.of("stress", "--chaos", "--chaos-role=store-node", "--backend=SimpleStorage"),
            List.of("stress", "--chaos", "--chaos-role=bogus"),
            List.of("stress", "--chaos", "--chaos-interval=0s"),
            List.of("stress", "--chaos", "--recovery-timeout=soon"));
    for (List<String> args : bad) {
      Result run = RunningSystem.run(args.toArray(String[]::new));

      assertThat(run.status()).as("%s", args).isEqualTo(StressCommand.EXIT_USAGE);
      assertThat(run.err().strip().lines()).as("%s: %s", args, run.err()).hasSize(1);
      assertThat(run.err()).as("%s", args).startsWith("tq stress: error: ");
    }
  }
}
