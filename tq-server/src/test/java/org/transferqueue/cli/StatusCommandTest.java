package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.cli.RunningSystem.Result;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.server.config.TqConfigs;

/** {@code tq status} in-process against servers on loopback ports. */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StatusCommandTest {
  private RunningSystem system;

  @BeforeEach
  void start(BufferAllocator allocator, @TempDir Path dir) {
    system = new RunningSystem(allocator, dir, 2);
  }

  @AfterEach
  void stop() {
    system.close();
  }

  private Result ok(String... args) {
    Result result = system.tq(args);
    assertThat(result.status()).as("out=%s err=%s", result.out(), result.err()).isZero();
    return result;
  }

  /**
   * Writes four samples of "train" (one without "score", one with only a tag) and lets task "actor"
   * consume two.
   */
  private void populate() {
    ok("kv", "put", "--partition", "train", "--key", "a", "ids=int64:[1,2]", "score=1");
    ok("kv", "put", "--partition", "train", "--key", "b", "ids=int64:[3,4]", "score=2");
    ok("kv", "put", "--partition", "train", "--key", "c", "ids=int64:[5,6]");
    ok("kv", "put", "--partition", "train", "--key", "d", "--tag", "pending=true");
    try (TqClient tq = TqClient.connect(TqConfigs.load(system.config))) {
      BatchMeta consumed =
          tq.client().getMeta(GetMetadataRequest.fetch("train", List.of("score"), "actor", 2));
      assertThat(consumed.size()).isEqualTo(2);
    }
  }

  @Test
  void shouldPrintPartitionsProductionConsumptionAndUnitsAsTables() {
    populate();
    List<String> lines = ok("status").out().lines().toList();
    List<String> addresses = system.unitAddresses().stream().map(Object::toString).toList();
    assertThat(lines.subList(0, 3))
        .containsExactly(
            "Partitions",
            "PARTITION  SAMPLES  PRODUCED  FIELDS  TASKS",
            "train      4        3         2       1");
    assertThat(lines)
        .containsSubsequence(
            "Production per field",
            "PARTITION  FIELD  PRODUCED  OF",
            "train      ids    3         4",
            "train      score  2         4",
            "Consumption per task",
            "PARTITION  TASK   CONSUMED  OF",
            "train      actor  2         4",
            "Storage units");
    String unitHeader = lines.get(lines.indexOf("Storage units") + 1);
    assertThat(unitHeader).startsWith("UNIT  ADDRESS").contains("SAMPLES", "BYTES", "CAPACITY");
    List<String> unitRows = lines.subList(lines.indexOf("Storage units") + 2, lines.size());
    assertThat(unitRows).hasSize(2);
    assertThat(unitRows.get(0)).startsWith("0     " + addresses.get(0)).endsWith("unlimited");
    assertThat(unitRows.get(1)).startsWith("1     " + addresses.get(1));
  }

  @Test
  void shouldPrintTheSameFiguresAsJson() {
    populate();
    String json = ok("status", "--json").out();
    assertThat(json)
        .startsWith(
            "{\"partitions\":[{\"partition\":\"train\",\"samples\":4,\"produced_samples\":3,"
                + "\"produced_per_field\":{\"ids\":3,\"score\":2},"
                + "\"consumed_per_task\":{\"actor\":2}}],\"total_samples\":4,"
                + "\"storage_units\":[{\"unit\":0,\"address\":\""
                + system.unitAddresses().get(0)
                + "\",\"id\":\"TQ_STORAGE_UNIT_0\",\"samples\":");
    long stored = system.units.stream().mapToLong(u -> u.stats().samples()).sum();
    assertThat(stored).isEqualTo(3);
    for (int i = 0; i < 2; i++) {
      assertThat(json)
          .contains(
              "\"unit\":" + i + ",\"address\":\"" + system.unitAddresses().get(i) + "\"",
              "\"id\":\"TQ_STORAGE_UNIT_"
                  + i
                  + "\",\"samples\":"
                  + system.units.get(i).stats().samples());
    }
  }

  @Test
  void shouldReportAnUnreachableUnitInItsRowAndStillSucceed() {
    populate();
    system.closeUnitServer(1);
    Result result = ok("status");
    String row = result.out().lines().filter(l -> l.startsWith("1     ")).findFirst().orElseThrow();
    assertThat(row).contains(system.unitAddresses().get(1).toString()).contains("error: ");
    assertThat(result.out()).contains("0     " + system.unitAddresses().get(0));
  }

  @Test
  void shouldListTheStoreNodesThatHoldTheDataOfAMooncakeStoreDeployment(@TempDir Path dir)
      throws IOException {
    String backend =
        "backend:\n"
            + "  storage_backend: MooncakeStore\n"
            + "  MooncakeStore:\n"
            + "    global_segment_size: 8388608\n"
            + "    local_buffer_size: 1048576\n";
    TqConfig roles = TqConfigs.parse(backend + "network:\n  bind_host: 127.0.0.1\n");
    List<RoleRunner.ServedRole> running = new ArrayList<>();
    try {
      RoleRunner.ServedRole controller = ControllerCommand.start(roles);
      running.add(controller);
      RoleRunner.ServedRole node0 = StoreNodeCommand.start(roles, new HostPort("127.0.0.1", 0), 0);
      running.add(node0);
      RoleRunner.ServedRole node1 = StoreNodeCommand.start(roles, new HostPort("127.0.0.1", 0), 1);
      running.add(node1);
      List<String> nodes = List.of(node0.address().toString(), node1.address().toString());
      Path config = dir.resolve("mooncake.yaml");
      Files.writeString(
          config,
          backend
              + "network:\n  controller_address: \""
              + controller.address()
              + "\"\n  store_node_addresses: [\""
              + nodes.get(0)
              + "\", \""
              + nodes.get(1)
              + "\"]\n",
          StandardCharsets.UTF_8);
      // Four samples with two cells each: samples 0 and 2 on node 0, 1 and 3 on node 1.
      for (String key : List.of("a", "b", "c", "d")) {
        ok(config, "kv", "put", "--partition", "train", "--key", key, "ids=int64:[1,2]", "n=1");
      }

      List<String> lines = ok(config, "status").out().lines().toList();
      assertThat(lines)
          .contains("train      4        4         2       0")
          .doesNotContain("Storage units");
      int at = lines.indexOf("Store nodes");
      assertThat(at).as("a store nodes table in %s", lines).isPositive();
      assertThat(lines.get(at + 1))
          .matches("NODE  ADDRESS +OBJECTS  USED_BYTES  CAPACITY_BYTES  EVICTED");
      assertThat(lines.subList(at + 2, lines.size())).hasSize(2);
      for (int i = 0; i < 2; i++) {
        assertThat(lines.get(at + 2 + i))
            .startsWith(i + "     " + nodes.get(i))
            .containsPattern(" 4 +[1-9][0-9]* +8388608 +0$");
      }
      String json = ok(config, "status", "--json").out();
      assertThat(json)
          .contains(
              "\"store_nodes\":[{\"node\":0,\"address\":\"" + nodes.get(0) + "\",\"objects\":4,",
              "{\"node\":1,\"address\":\"" + nodes.get(1) + "\",\"objects\":4,",
              "\"capacity_bytes\":8388608,\"evicted_objects\":0}")
          .doesNotContain("storage_units");

      // Cleared keys leave the nodes; a node that does not answer is reported in its row.
      ok(config, "kv", "clear", "--partition", "train", "--key", "a", "--key", "b");
      running.remove(node1);
      node1.close();
      lines = ok(config, "status").out().lines().toList();
      assertThat(lines.get(at + 2)).startsWith("0     " + nodes.get(0)).contains(" 2 ");
      assertThat(lines.get(at + 3)).startsWith("1     " + nodes.get(1)).contains("error: ");
    } finally {
      running.reversed().forEach(RoleRunner.ServedRole::close);
    }
  }

  private static Result ok(Path config, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--config");
    all.add(config.toString());
    Result result = RunningSystem.run(all.toArray(String[]::new));
    assertThat(result.status()).as("out=%s err=%s", result.out(), result.err()).isZero();
    return result;
  }

  @Test
  void shouldSayThatThereIsNothingYet() {
    List<String> lines = ok("status").out().lines().toList();
    assertThat(lines)
        .containsSubsequence(
            "Partitions", "  (no partitions)", "Production per field", "  (no fields produced)");
  }
}
