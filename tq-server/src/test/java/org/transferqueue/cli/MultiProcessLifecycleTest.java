package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.ErrorCode;
import org.transferqueue.config.StorageBackend;

/**
 * The deployment as separate processes on loopback: a controller, two storage units and two store
 * nodes; a writer process and a reader process run the whole life cycle (put, fetch, get, verify,
 * clear) on each backend; then a storage unit is killed with SIGKILL while client processes run a
 * workload, and every client reports a typed error, not a hang. Every byte over TCP, and in the
 * slow profile once more through shared memory.
 */
class MultiProcessLifecycleTest {
  private static final Pattern ERROR = Pattern.compile("error (\\w+) (\\d+) (\\d+) .*");
  private static final Pattern READABLE = Pattern.compile("readable (\\d+)/(\\d+) (.*)");
  private static final int KEYS = 32;

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void shouldRunTheLifecycleOnBothBackendsThenFailTypedWhenAUnitIsKilled(@TempDir Path dir) {
    try (ProcessCluster cluster = new ProcessCluster(dir, 2, 2, "")) {
      lifecycle(cluster, StorageBackend.SIMPLE_STORAGE);
      lifecycle(cluster, StorageBackend.MOONCAKE_STORE);
      killUnitDuringWorkload(cluster, 2);
    }
  }

  /**
   * The same with shared memory on in every process, for bodies of every size: the writer's and
   * reader's rows travel through the servers' segments, and a killed unit still gives typed errors.
   * In the slow profile; the default suite covers shared memory across processes with {@link
   * SharedMemoryKillTest} and {@link SharedMemoryFallbackTest}.
   */
  @Test
  @Tag("slow")
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void shouldRunTheLifecycleOverSharedMemoryThenFailTypedWhenAUnitIsKilled(@TempDir Path dir) {
    try (ProcessCluster cluster =
        new ProcessCluster(dir, 2, 2, true, "  shared_memory_min_bytes: 1\n")) {
      lifecycle(cluster, StorageBackend.SIMPLE_STORAGE);
      lifecycle(cluster, StorageBackend.MOONCAKE_STORE);
      killUnitDuringWorkload(cluster, 2);
    }
  }

  /** Writer process, then reader process: both exit 0 having checked every value. */
  static void lifecycle(ProcessCluster cluster, StorageBackend backend) {
    String config = cluster.config(backend).toString();
    String partition = "life-" + backend.configName();
    RoleProcess writer =
        cluster.client(
            "writer " + backend.configName(),
            ClientProcess.class,
            "write",
            config,
            partition,
            Integer.toString(KEYS));
    assertThat(writer.awaitExit(60)).as("writer exit; stdout: %s", writer.stdout()).isZero();
    assertThat(writer.stdout()).contains("wrote " + KEYS);
    RoleProcess reader =
        cluster.client(
            "reader " + backend.configName(),
            ClientProcess.class,
            "read",
            config,
            partition,
            Integer.toString(KEYS));
    assertThat(reader.awaitExit(60))
        .as("reader exit; stdout: %s stderr: %s", reader.stdout(), reader.stderr())
        .isZero();
    assertThat(reader.stdout()).contains("verified " + KEYS + " " + KEYS, "cleared 0");
  }

  /**
   * Writes KEYS keys, starts {@code clients} workload processes, kills unit 0 once all run, and
   * checks every client's typed error and that exactly the keys of unit 1 stay readable.
   */
  static void killUnitDuringWorkload(ProcessCluster cluster, int clients) {
    String config = cluster.config(StorageBackend.SIMPLE_STORAGE).toString();
    RoleProcess writer =
        cluster.client(
            "writer before kill",
            ClientProcess.class,
            "write",
            config,
            "kill",
            Integer.toString(KEYS));
    assertThat(writer.awaitExit(60)).as("writer; stdout: %s", writer.stdout()).isZero();
    List<RoleProcess> workloads =
        java.util.stream.IntStream.range(0, clients)
            .mapToObj(
                i ->
                    cluster.client(
                        "workload " + i,
                        ClientProcess.class,
                        "workload",
                        config,
                        "kill",
                        Integer.toString(KEYS)))
            .toList();
    workloads.forEach(w -> w.awaitLine("ready"));

    long killedAt = System.currentTimeMillis();
    cluster.unit(0).kill();

    long last = 0;
    for (RoleProcess workload : workloads) {
      assertThat(workload.awaitExit(60)).as("%s: %s", workload.name(), workload.stdout()).isZero();
      Matcher error = ERROR.matcher(workload.awaitLine("error "));
      assertThat(error.matches()).isTrue();
      assertThat(ErrorCode.valueOf(error.group(1)))
          .as(workload.stdout())
          .isIn(ErrorCode.CONNECTION_FAILED, ErrorCode.DEADLINE_EXCEEDED);
      last = Math.max(last, Long.parseLong(error.group(2)) - killedAt);
      Matcher readable = READABLE.matcher(workload.awaitLine("readable "));
      assertThat(readable.matches()).isTrue();
      // Sample gi lives on unit gi mod 2: the 32 consecutive samples split evenly.
      assertThat(readable.group(1)).as(workload.stdout()).isEqualTo(Integer.toString(KEYS / 2));
      assertThat(readable.group(3)).doesNotContain("CORRUPT");
      System.out.println(
          "[faults] kill storage unit 0: "
              + workload.name()
              + " got "
              + error.group(1)
              + " "
              + (Long.parseLong(error.group(2)) - killedAt)
              + " ms after the kill (failing call "
              + error.group(3)
              + " ms); "
              + workload.awaitLine("readable "));
    }
    System.out.println(
        "[faults] kill storage unit 0: every one of "
            + clients
            + " clients had its error "
            + last
            + " ms after the kill");
  }
}
