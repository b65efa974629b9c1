package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ObjectColumn;

/** {@code tq controller} as a real child process: ready line, remote use, SIGTERM. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ControllerProcessTest {
  private static final Pattern LISTENING = Pattern.compile("listening on (\\S+)");

  @Test
  void shouldServeUntilSigtermWhenStartedAsChildProcess(@TempDir Path dir)
      throws IOException, InterruptedException {
    Path yaml = dir.resolve("tq.yaml");
    Files.writeString(
        yaml, "network:\n  bind_host: 127.0.0.1\n  auth_token: it-token\n", StandardCharsets.UTF_8);
    List<String> command = new ArrayList<>(ChildProcesses.javaCommand());
    command.addAll(List.of("controller", "--config", yaml.toString()));
    Process process =
        new ProcessBuilder(command).redirectError(dir.resolve("stderr.txt").toFile()).start();
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line = out.readLine();
      assertThat(line).as("first line of stdout").isNotNull().matches(LISTENING);
      Matcher m = LISTENING.matcher(line);
      assertThat(m.matches()).isTrue();
      HostPort address = HostPort.parse(m.group(1));

      TqConfig config =
          TqConfigs.parse(
              "network:\n  auth_token: it-token\n  controller_address: \"" + address + "\"\n");
      try (TqClient tq = TqClient.connect(config);
          Batch row = Batch.builder().objects("text", List.of("hi")).build()) {
        KvBatchMeta meta = tq.kv().batchPut(List.of("k"), "p", row, List.of(Map.of("n", 1L)));
        assertThat(meta.keys()).containsExactly("k");
        assertThat(tq.kv().list("p").get("p")).containsOnlyKeys("k");
        try (Batch back = tq.kv().batchGet(List.of("k"), "p", null)) {
          assertThat(((ObjectColumn) back.column("text")).values()).containsExactly("hi");
        }
      }

      process.toHandle().destroy(); // SIGTERM, without closing our end of the pipes
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("exited after SIGTERM").isTrue();
      assertThat(process.exitValue()).as("exit status after SIGTERM").isIn(0, 143);
      assertThat(out.readLine()).as("nothing after the ready line").isNull();
    } finally {
      process.destroyForcibly();
    }
    String stderr = Files.readString(dir.resolve("stderr.txt"), StandardCharsets.UTF_8);
    assertThat(stderr).doesNotContain("Exception");
  }

  @Test
  void shouldRequireTheTokenGivenThroughTheEnvironment(@TempDir Path dir)
      throws IOException, InterruptedException {
    Path yaml = dir.resolve("tq.yaml");
    Files.writeString(yaml, "network:\n  bind_host: 127.0.0.1\n", StandardCharsets.UTF_8);
    List<String> command = new ArrayList<>(ChildProcesses.javaCommand());
    command.addAll(List.of("controller", "--config", yaml.toString()));
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectError(dir.resolve("stderr.txt").toFile());
    builder.environment().put("TQ_AUTH_TOKEN", "env-token");
    Process process = builder.start();
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      Matcher m = LISTENING.matcher(String.valueOf(out.readLine()));
      assertThat(m.matches()).isTrue();
      String address = m.group(1);
      TqConfig withoutToken =
          TqConfigs.parse("network:\n  controller_address: \"" + address + "\"\n");
      assertThatThrownBy(() -> TqClient.connect(withoutToken).close())
          .isInstanceOf(TqException.class)
          .satisfies(
              e ->
                  assertThat(((TqException) e).code())
                      .isIn(ErrorCode.UNAUTHENTICATED, ErrorCode.CONNECTION_FAILED));
      TqConfig withToken =
          TqConfigs.parse(
              "network:\n  auth_token: env-token\n  controller_address: \"" + address + "\"\n");
      try (TqClient tq = TqClient.connect(withToken)) {
        assertThat(tq.kv().list(null)).isEmpty();
      }
      process.toHandle().destroy();
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      process.destroyForcibly();
    }
  }
}
