package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.config.TqConfigs;

/** The {@code tq controller} role in the test JVM serves Prometheus metrics when enabled. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ControllerMetricsTest {

  private static TqConfig config(Path dir, boolean metrics) throws IOException {
    Path file = dir.resolve("tq.yaml");
    Files.writeString(
        file,
        "network:\n"
            + "  bind_host: \"127.0.0.1\"\n"
            + "metrics:\n"
            + "  enabled: "
            + metrics
            + "\n"
            + "  port: 0\n",
        StandardCharsets.UTF_8);
    return TqConfigs.load(file, Map.of());
  }

  @Test
  void shouldServeControllerUptimeOnMetricsWhenEnabled(@TempDir Path dir)
      throws IOException, InterruptedException {
    try (ControllerCommand.ControllerRole role = ControllerCommand.start(config(dir, true));
        HttpClient http = HttpClient.newHttpClient()) {
      String address = role.metricsAddress().orElseThrow();
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://" + address + "/metrics")).build(),
              HttpResponse.BodyHandlers.ofString());

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).contains("tq_controller_uptime_seconds");
      assertThat(address).isNotEqualTo(role.address().toString());
    }
  }

  @Test
  void shouldServeNoMetricsWhenDisabled(@TempDir Path dir) throws IOException {
    try (ControllerCommand.ControllerRole role = ControllerCommand.start(config(dir, false))) {
      assertThat(role.metricsAddress()).isEmpty();
      assertThat(role.address().port()).isPositive();
    }
  }
}
