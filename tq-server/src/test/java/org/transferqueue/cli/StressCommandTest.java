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
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.cli.RunningSystem.Result;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;

/** {@code tq stress}: its report, its exit status and its one-line usage errors. */
@ExtendWith(LeakCheckExtension.class)
class StressCommandTest {

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

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void shouldReportACleanRunAsTableAndJsonWhenRunAgainstAConfiguredSystem(
      BufferAllocator allocator, @TempDir Path dir) throws IOException {
    Path json = dir.resolve("stress.json");
    Result run;
    try (RunningSystem system = new RunningSystem(allocator, dir, 2)) {
      run =
          system.tq(
              "stress",
              "--clients=16",
              "--connections=4",
              "--duration=1s",
              "--value-bytes=1024",
              "--verify",
              "--json=" + json);
    }

    assertThat(run.err()).isEmpty();
    assertThat(run.status()).isZero();
    assertThat(run.out())
        .contains("16 clients on 4 connections")
        .contains("SimpleStorage: lost: 0, corrupted: 0")
        .contains("peak RSS (VmHWM): client");
    Map<String, Object> report = json(json);
    assertThat(report.get("clean")).isEqualTo(true);
    assertThat(String.valueOf(report.get("command"))).startsWith("tq stress --clients=16");
    Map<String, Object> result = map(list(report.get("results")).getFirst());
    assertThat(result.get("backend")).isEqualTo("SimpleStorage");
    assertThat(number(result.get("lost"))).isZero();
    assertThat(number(result.get("corrupted"))).isZero();
    assertThat(map(result.get("errors"))).isEmpty();
    assertThat(number(result.get("rowsVerified"))).isEqualTo(number(result.get("rowsWritten")));
    assertThat(number(result.get("rowsVerified"))).isGreaterThanOrEqualTo(3 * 16 * 4);
    Map<String, Object> operations = map(result.get("operations"));
    assertThat(operations)
        .containsOnlyKeys("put", "fetch", "get", "clear", "kv_put", "kv_get", "kv_clear");
    Map<String, Object> get = map(operations.get("get"));
    assertThat(number(get.get("bytes"))).isEqualTo(number(map(operations.get("put")).get("bytes")));
    assertThat(((Number) get.get("p99Ms")).doubleValue())
        .isGreaterThanOrEqualTo(((Number) get.get("p50Ms")).doubleValue());
    assertThat(number(map(result.get("peakRssBytes")).get("client"))).isPositive();
  }

  @Test
  void shouldExitWithStatus2AndOneLineForBadOptions() {
    List<List<String>> bad =
        List.of(
            List.of("stress", "--clients=0"),
            List.of("stress", "--clients=4", "--connections=5"),
            List.of("stress", "--duration=soon"),
            List.of("stress", "--value-bytes=8"),
            List.of("stress", "--backend=Redis"),
            List.of("stress", "--flows=own,bogus"),
            List.of("stress", "--clients=many"),
            List.of("stress", "--no-such-option"),
            List.of("stress", "--config=/nonexistent/tq.yaml"),
            List.of("stress", "--config=/nonexistent/tq.yaml", "--backend=SimpleStorage"));
    for (List<String> args : bad) {
      Result run = RunningSystem.run(args.toArray(String[]::new));

      assertThat(run.status()).as("%s", args).isEqualTo(StressCommand.EXIT_USAGE);
      assertThat(run.err().strip().lines()).as("%s: %s", args, run.err()).hasSize(1);
      assertThat(run.err()).as("%s", args).startsWith("tq stress: error: ");
      assertThat(run.out()).as("%s", args).isEmpty();
    }
    assertThat(RunningSystem.run("stress", "--clients=0").err()).contains("--clients=0");
    assertThat(RunningSystem.run("stress", "--backend=Redis").err()).contains("Redis");
  }

  /** The command as a user runs it: 1024 clients, both backends on child-process servers. */
  @Test
  @Tag("slow")
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  void shouldLoseAndCorruptNothingWith1024ClientsOnBothBackendsOverLoopbackProcesses(
      @TempDir Path dir) throws IOException {
    Path json = dir.resolve("stress-1024.json");
    Result run =
        RunningSystem.run(
            "stress", "--clients=1024", "--duration=20s", "--verify", "--json=" + json);

    assertThat(run.status()).as(run.out() + run.err()).isZero();
    Map<String, Object> report = json(json);
    assertThat(report.get("clean")).isEqualTo(true);
    List<Object> results = list(report.get("results"));
    assertThat(results)
        .extracting(r -> map(r).get("backend"))
        .containsExactly("SimpleStorage", "MooncakeStore");
    for (Object r : results) {
      assertThat(number(map(r).get("lost"))).isZero();
      assertThat(number(map(r).get("corrupted"))).isZero();
      assertThat(map(map(r).get("peakRssBytes"))).hasSize(4);
    }
  }
}
