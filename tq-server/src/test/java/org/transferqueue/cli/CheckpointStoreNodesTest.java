package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.cli.RunningSystem.Result;
import org.transferqueue.config.HostPort;

/**
 * {@code tq checkpoint save|load} against a multi-process MooncakeStore system: a {@code tq
 * controller} and two {@code tq store-node} child processes, each node writing and reading its own
 * checkpoint file; the commands run in this JVM.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CheckpointStoreNodesTest {
  private final List<RoleProcess> processes = new ArrayList<>();
  private Path dir;
  private Path config;

  @BeforeEach
  void start(@TempDir Path dir) throws IOException {
    this.dir = dir;
    Path roles = dir.resolve("roles.yaml");
    Files.writeString(
        roles,
        """
        backend:
          storage_backend: MooncakeStore
          MooncakeStore:
            global_segment_size: 8388608
            local_buffer_size: 1048576
        network:
          bind_host: 127.0.0.1
          store_node_addresses: ["127.0.0.1:0"]
        """);
    HostPort controller = launch("controller", "controller", "--config", roles.toString());
    List<String> nodes = new ArrayList<>();
    for (int n = 0; n < 2; n++) {
      nodes.add(
          "\""
              + launch("node" + n, "store-node", "--config", roles.toString(), "--node", "0")
              + "\"");
    }
    config = dir.resolve("tq.yaml");
    Files.writeString(
        config,
        """
        backend:
          storage_backend: MooncakeStore
          MooncakeStore:
            global_segment_size: 8388608
            local_buffer_size: 1048576
        network:
          controller_address: "%s"
          store_node_addresses: [%s]
        """
            .formatted(controller, String.join(", ", nodes)));
  }

  private HostPort launch(String name, String... args) throws IOException {
    Path home = Files.createDirectories(dir.resolve(name));
    RoleProcess process = RoleProcess.role(home, args);
    processes.add(process);
    return process.awaitListeningFirstLine();
  }

  @AfterEach
  void stop() {
    processes.reversed().forEach(RoleProcess::close);
  }

  private Result tq(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--config");
    all.add(config.toString());
    return RunningSystem.run(all.toArray(String[]::new));
  }

  private Result ok(String... args) {
    Result result = tq(args);
    assertThat(result.status())
        .as("tq %s: out=%s err=%s", String.join(" ", args), result.out(), result.err())
        .isZero();
    return result;
  }

  private void put(String key, String value) {
    ok(
        "kv",
        "put",
        "--partition",
        "train",
        "--key",
        key,
        "x=float32:" + value,
        "note=\"" + key + "\"",
        "--tag",
        "score=0.5");
  }

  private String everything(String... keys) {
    List<String> args = new ArrayList<>(List.of("kv", "get", "--partition", "train", "--json"));
    for (String key : keys) {
      args.add("--key");
      args.add(key);
    }
    return ok(args.toArray(String[]::new)).out() + ok("kv", "list", "--json").out();
  }

  @Test
  void shouldRoundTripTheStoreNodesDataAndLeaveItUnchangedWhenANodeFileIsCorrupt()
      throws IOException {
    for (int k = 0; k < 6; k++) {
      put("k" + k, "[[" + k + ",2.5],[3," + (k * 7) + "]]");
    }
    String before = everything("k0", "k1", "k2", "k3", "k4", "k5");
    Path ckpt = dir.resolve("ckpt/step_1");

    Result saved = ok("checkpoint", "save", "--dir", ckpt.toString());
    assertThat(saved.out()).startsWith("saved checkpoint " + ckpt.toAbsolutePath());
    assertThat(ckpt.resolve("mooncake_store/store_node_info.json")).exists();
    assertThat(Files.size(ckpt.resolve("mooncake_store/node_0.ckpt"))).isPositive();
    assertThat(Files.size(ckpt.resolve("mooncake_store/node_1.ckpt"))).isPositive();
    assertThat(Files.readString(ckpt.resolve("MANIFEST")))
        .contains("storage_saved true", "file mooncake_store/node_1.ckpt ");

    ok("kv", "clear", "--partition", "train", "--key", "k0", "--key", "k1", "--key", "k2");
    put("later", "[[9,9],[9,9]]");

    ok("checkpoint", "load", "--dir", ckpt.toString());
    assertThat(everything("k0", "k1", "k2", "k3", "k4", "k5")).isEqualTo(before);
    assertThat(ok("kv", "list", "--json").out()).doesNotContain("later");

    // A corrupt node file: the load fails and nothing changes, on either node or the controller.
    put("later", "[[9,9],[9,9]]");
    String changed = everything("k0", "k5", "later");
    Path nodeFile = ckpt.resolve("mooncake_store/node_1.ckpt");
    byte[] bytes = Files.readAllBytes(nodeFile);
    bytes[bytes.length - 1] ^= 0x5A;
    Files.write(nodeFile, bytes);

    Result failed = tq("checkpoint", "load", "--dir", ckpt.toString());
    assertThat(failed.status()).isOne();
    assertThat(failed.err()).contains("corrupt checkpoint").contains("mooncake_store/node_1.ckpt");
    assertThat(everything("k0", "k5", "later")).isEqualTo(changed);
  }
}
