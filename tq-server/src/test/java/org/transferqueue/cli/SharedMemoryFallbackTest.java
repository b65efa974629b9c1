package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.config.StorageBackend;

/**
 * Shared memory falls back to TCP across processes: with shared memory off in the servers or in the
 * client, and for a client in another pid namespace (which cannot open the servers' {@code
 * /proc/<pid>/fd} entries), every put and get still returns the right data, and the client maps
 * none of the servers' segments; with both sides on, the same client does map them (the control
 * that shows the check can see a mapping). Servers and clients are separate processes on loopback
 * (a controller, a storage unit and a store node; each client process runs both backends' configs).
 */
class SharedMemoryFallbackTest {
  private static final Pattern MAPPED = Pattern.compile("mapped (\\d+)");

  /** 8 rows of 64 KiB: each put and get is above the 64 KiB shared-memory minimum. */
  private static final int KEYS = 8;

  private static final int FLOATS = 16_384;

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void shouldUseSharedMemoryWhenBothSidesHaveItOnAndTcpWhenTheClientTurnsItOffOrCannotMapIt(
      @TempDir Path dir) throws IOException {
    try (ProcessCluster cluster = new ProcessCluster(dir, 1, 1, true, "")) {
      for (StorageBackend backend : StorageBackend.values()) {
        Path config = cluster.config(backend);
        assertThat(roundTrip(cluster, "on " + backend.configName(), List.of(), config))
            .as("segments a %s client maps with shared memory on", backend.configName())
            .isPositive();
        Path off = withClientSharedMemory(dir, config, false);
        assertThat(roundTrip(cluster, "client off " + backend.configName(), List.of(), off))
            .as("segments a %s client with shared memory off maps", backend.configName())
            .isZero();
      }
      assumeTrue(
          unshareWorks(),
          "unshare --pid --fork --mount-proc is not permitted here: no pid-namespace case");
      for (StorageBackend backend : StorageBackend.values()) {
        assertThat(
                roundTrip(
                    cluster,
                    "pid namespace " + backend.configName(),
                    List.of("unshare", "--pid", "--fork", "--kill-child", "--mount-proc"),
                    cluster.config(backend)))
            .as("segments a %s client in another pid namespace maps", backend.configName())
            .isZero();
      }
    }
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void shouldUseTcpWhenTheServersHaveSharedMemoryOff(@TempDir Path dir) throws IOException {
    try (ProcessCluster cluster = new ProcessCluster(dir, 1, 1, false, "")) {
      for (StorageBackend backend : StorageBackend.values()) {
        Path on = withClientSharedMemory(dir, cluster.config(backend), true);
        assertThat(roundTrip(cluster, "servers off " + backend.configName(), List.of(), on))
            .as("segments a %s client maps of servers with shared memory off", backend.configName())
            .isZero();
      }
    }
  }

  /**
   * Runs a {@code roundtrip} client process (put, get, compare, clear) and returns how many
   * shared-memory segments it mapped while it held the result.
   */
  private static int roundTrip(
      ProcessCluster cluster, String name, List<String> wrapper, Path config) {
    RoleProcess client =
        RoleProcess.wrapped(
            name,
            config.getParent(),
            wrapper,
            ShmClientProcess.class,
            "roundtrip",
            config.toString(),
            "p-" + name.replace(' ', '-'),
            Integer.toString(KEYS),
            Integer.toString(FLOATS));
    try (client) {
      assertThat(client.awaitExit(90))
          .as("%s: stdout %s stderr %s", name, client.stdout(), client.stderr())
          .isZero();
      assertThat(client.stdout()).contains("verified " + KEYS);
      Matcher mapped = MAPPED.matcher(client.line("mapped ").orElseThrow());
      assertThat(mapped.matches()).isTrue();
      int segments = Integer.parseInt(mapped.group(1));
      System.out.println("[shm] " + name + ": verified " + KEYS + " keys, mapped " + segments);
      return segments;
    }
  }

  /** A copy of {@code config} whose {@code network.shared_memory} is {@code on}. */
  private static Path withClientSharedMemory(Path dir, Path config, boolean on) throws IOException {
    String yaml =
        Files.readString(config, StandardCharsets.UTF_8)
            .replace("  shared_memory: false\n", "")
            .replace("  shared_memory: true\n", "")
            .replace("network:\n", "network:\n  shared_memory: " + on + "\n");
    Path copy = dir.resolve("client-" + on + "-" + config.getFileName());
    return Files.writeString(copy, yaml, StandardCharsets.UTF_8);
  }

  /** Whether this machine lets us start a process in a new pid namespace. */
  private static boolean unshareWorks() {
    try {
      Process p =
          new ProcessBuilder("unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "true")
              .redirectErrorStream(true)
              .start();
      p.getInputStream().readAllBytes();
      return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
