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
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.tensor.Batch;

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
  void shouldShowAPutInTheNextScrapeOfTheControllerAndUnitRoles(@TempDir Path dir)
      throws IOException, InterruptedException {
    // The default collection interval (10 s): the roles collected once, when they started.
    TqConfig roles = config(dir, true);
    try (RoleRunner.ServedRole controller = ControllerCommand.start(roles);
        RoleRunner.ServedRole unit0 =
            StorageUnitCommand.start(roles, new HostPort("127.0.0.1", 0), 0);
        RoleRunner.ServedRole unit1 =
            StorageUnitCommand.start(roles, new HostPort("127.0.0.1", 0), 1)) {
      String controllerMetrics = controller.metricsAddress().orElseThrow();
      String unit0Metrics = unit0.metricsAddress().orElseThrow();
      assertThat(RoleRequestMetersTest.scrape(controllerMetrics))
          .contains("tq_partitions_total 0.0");
      TqConfig client =
          TqConfigs.parse(
              "network:\n  controller_address: \""
                  + controller.address()
                  + "\"\n  storage_unit_addresses: [\""
                  + unit0.address()
                  + "\", \""
                  + unit1.address()
                  + "\"]\n",
              Map.of());
      try (TqClient tq = TqClient.connect(client);
          Batch rows = Batch.builder().objects("x", List.of(1L, 2L, 3L, 4L)).build()) {
        tq.client().put(rows, "train");
      }

      assertThat(RoleRequestMetersTest.scrape(controllerMetrics))
          .contains("tq_partitions_total 1.0")
          .contains("tq_partition_samples_total{partition_id=\"train\"} 4.0");
      // Sample i lives on unit i mod 2: unit 0 holds two of the four.
      assertThat(RoleRequestMetersTest.scrape(unit0Metrics))
          .contains("tq_storage_active_keys_total{storage_unit_id=\"TQ_STORAGE_UNIT_0\"} 2.0");
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
