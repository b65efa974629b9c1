package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.testing.Await;

/** {@code tq up} as a real process tree: every role starts, serves, and stops on SIGTERM. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UpCommandTest {
  private static final Pattern READY = Pattern.compile("(.+) listening on (\\S+)");

  @Test
  void shouldListRolesOfTheConfigurationInStartOrder() {
    TqConfig tq =
        TqConfigs.parse(
            "network:\n"
                + "  storage_unit_addresses: [\"127.0.0.1:0\", \"localhost:0\"]\n"
                + "  store_node_addresses: [\"127.0.0.2:0\"]\n");
    assertThat(UpCommand.roles(tq, Path.of("/etc/tq.yaml")))
        .extracting(UpCommand.Role::name)
        .containsExactly("controller", "storage-unit 0", "storage-unit 1", "store-node 0");
    assertThat(UpCommand.roles(tq, Path.of("/etc/tq.yaml")).get(2).arguments())
        .containsExactly("storage-unit", "--config", "/etc/tq.yaml", "--unit", "1");
  }

  @Test
  void shouldStartEveryRoleAndStopThemAllOnSigterm(@TempDir Path dir)
      throws IOException, InterruptedException {
    // With metrics the roles log their endpoints at INFO, below the default logging.level.
    Process up =
        startUp(
            dir,
            "metrics:\n"
                + "  enabled: true\n"
                + "network:\n"
                + "  storage_unit_addresses: [\"127.0.0.1:0\", \"localhost:0\"]\n"
                + "  store_node_addresses: [\"127.0.0.2:0\"]\n");
    List<ProcessHandle> children = new ArrayList<>();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(up.getInputStream(), StandardCharsets.UTF_8))) {
      Map<String, HostPort> addresses = new LinkedHashMap<>();
      for (int i = 0; i < 4; i++) {
        String line = out.readLine();
        assertThat(line).as("ready line %d", i).isNotNull().matches(READY);
        Matcher m = READY.matcher(line);
        assertThat(m.matches()).isTrue();
        addresses.put(m.group(1), HostPort.parse(m.group(2)));
      }
      assertThat(addresses)
          .containsOnlyKeys("controller", "storage-unit 0", "storage-unit 1", "store-node 0");
      up.toHandle().children().forEach(children::add);
      assertThat(children).hasSize(4);

      TqConfig config =
          TqConfig.builder()
              .network(
                  n ->
                      n.controllerAddress(addresses.get("controller"))
                          .storageUnitAddresses(
                              List.of(
                                  addresses.get("storage-unit 0"),
                                  addresses.get("storage-unit 1"))))
              .build();
      try (TqClient tq = TqClient.connect(config);
          Batch rows = Batch.builder().objects("text", List.of("x", "y", "z")).build()) {
        tq.kv().batchPut(List.of("a", "b", "c"), "p", rows, null);
        try (Batch back = tq.kv().batchGet(List.of("c", "a"), "p", null)) {
          assertThat(((ObjectColumn) back.column("text")).values()).containsExactly("z", "x");
        }
      }

      assertThat(Files.readString(dir.resolve("stderr.txt")))
          .as("logging.level WARNING (the default)")
          .doesNotContain("INFO:");

      up.toHandle().destroy(); // SIGTERM, as Ctrl-C's SIGINT would
      assertThat(up.waitFor(60, TimeUnit.SECONDS)).as("tq up exited").isTrue();
      assertThat(up.exitValue()).isIn(0, 143);
      for (ProcessHandle child : children) {
        Await.until(() -> !child.isAlive(), "child " + child.pid() + " stopped");
      }
    } finally {
      children.forEach(ProcessHandle::destroyForcibly);
      up.destroyForcibly();
    }
  }

  @Test
  void shouldStopItsRolesWhenItIsKilled(@TempDir Path dir)
      throws IOException, InterruptedException {
    Process up =
        startUp(
            dir,
            "backend:\n"
                + "  SimpleStorage:\n"
                + "    num_data_storage_units: 1\n"
                + "network:\n"
                + "  storage_unit_addresses: [\"127.0.0.1:0\"]\n");
    List<ProcessHandle> children = new ArrayList<>();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(up.getInputStream(), StandardCharsets.UTF_8))) {
      for (int i = 0; i < 2; i++) {
        assertThat(out.readLine()).as("ready line %d", i).isNotNull().matches(READY);
      }
      up.toHandle().children().forEach(children::add);
      assertThat(children).hasSize(2);

      up.destroyForcibly(); // SIGKILL: no shutdown hook of tq up runs
      assertThat(up.waitFor(60, TimeUnit.SECONDS)).as("tq up killed").isTrue();
      for (ProcessHandle child : children) {
        Await.until(() -> !child.isAlive(), "role " + child.pid() + " stopped with its parent");
      }
    } finally {
      children.forEach(ProcessHandle::destroyForcibly);
      up.destroyForcibly();
    }
  }

  @Test
  void shouldPrintTheInfoLinesOfARoleOnlyAtLoggingLevelInfo(@TempDir Path dir) throws IOException {
    Path yaml = dir.resolve("tq.yaml");
    Files.writeString(
        yaml,
        "logging:\n  level: INFO\nmetrics:\n  enabled: true\n  port: 0\n",
        StandardCharsets.UTF_8);
    try (RoleProcess controller =
        RoleProcess.role(dir, "controller", "--config", yaml.toString())) {
      controller.awaitListeningFirstLine();
      assertThat(controller.stderr()).contains("INFO: controller metrics on http://");
    }
  }

  /**
   * Starts {@code tq up} on a configuration file of {@code yaml} in {@code dir}; stderr to a file.
   */
  private static Process startUp(Path dir, String yaml) throws IOException {
    Path file = dir.resolve("tq.yaml");
    Files.writeString(file, yaml, StandardCharsets.UTF_8);
    List<String> command = new ArrayList<>(ChildProcesses.javaCommand());
    command.addAll(List.of("up", "--config", file.toString()));
    return new ProcessBuilder(command).redirectError(dir.resolve("stderr.txt").toFile()).start();
  }
}
