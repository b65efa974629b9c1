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
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.config.TqConfigs;

/**
 * The {@code tq controller} and {@code tq storage-unit} roles in the test JVM serve Prometheus
 * metrics when enabled.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoleMetricsTest {

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
    try (RoleRunner.ServedRole role = ControllerCommand.start(config(dir, true));
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
  void shouldServeOnlyUnitGaugesOfAStorageUnitRoleWhenEnabled(@TempDir Path dir)
      throws IOException, InterruptedException {
    try (RoleRunner.ServedRole role =
            StorageUnitCommand.start(config(dir, true), new HostPort("127.0.0.1", 0), 3);
        HttpClient http = HttpClient.newHttpClient()) {
      String address = role.metricsAddress().orElseThrow();
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://" + address + "/metrics")).build(),
              HttpResponse.BodyHandlers.ofString());

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body())
          .contains("tq_storage_active_keys_total{storage_unit_id=\"TQ_STORAGE_UNIT_3\"} 0.0")
          .doesNotContain("tq_controller_uptime_seconds");
    }
  }

  @Test
  void shouldServeNoMetricsWhenDisabled(@TempDir Path dir) throws IOException {
    try (RoleRunner.ServedRole role = ControllerCommand.start(config(dir, false))) {
      assertThat(role.metricsAddress()).isEmpty();
      assertThat(role.address().port()).isPositive();
    }
    try (RoleRunner.ServedRole role =
        StorageUnitCommand.start(config(dir, false), new HostPort("127.0.0.1", 0), 0)) {
      assertThat(role.metricsAddress()).isEmpty();
    }
  }
}
