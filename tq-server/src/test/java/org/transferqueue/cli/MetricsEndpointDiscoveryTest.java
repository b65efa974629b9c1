package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.client.TqClient;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.server.metrics.PrometheusEndpoint;

/**
 * The metrics endpoint can be found from any process: a client of {@code tq controller} asks the
 * controller ({@code METRICS_ENDPOINT}) and gets the address the role serves, as the embedded
 * system's client does.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetricsEndpointDiscoveryTest {
  private static final String METRICS = "metrics:\n  enabled: true\n  port: 0\n";

  @Test
  void shouldAnswerTheControllerRolesEndpointToARemoteClient() throws Exception {
    try (RoleRunner.ServedRole role = ControllerCommand.start(TqConfigs.parse(METRICS));
        HttpClient http = HttpClient.newHttpClient()) {
      TqConfig clientConfig =
          TqConfigs.parse("network:\n  controller_address: \"" + role.address() + "\"\n", Map.of());
      try (TqClient tq = TqClient.connect(clientConfig)) {
        String endpoint = tq.metricsEndpoint().orElseThrow();

        assertThat(endpoint).isEqualTo(role.metricsAddress().orElseThrow());
        assertThat(tq.client().metricsEndpointAsync().get(20, TimeUnit.SECONDS)).contains(endpoint);
        HttpResponse<String> scrape =
            http.send(
                HttpRequest.newBuilder(URI.create("http://" + endpoint + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(scrape.body()).contains("tq_controller_uptime_seconds");
      }
    }
  }

  @Test
  void shouldAnswerNoEndpointWhenTheControllerServesNoMetrics() {
    try (RoleRunner.ServedRole role = ControllerCommand.start(TqConfigs.parse(""))) {
      TqConfig clientConfig =
          TqConfigs.parse("network:\n  controller_address: \"" + role.address() + "\"\n", Map.of());
      try (TqClient tq = TqClient.connect(clientConfig)) {
        assertThat(tq.metricsEndpoint()).isEmpty();
        assertThat(tq.client().metricsEndpoint()).isEmpty();
      }
    }
  }

  @Test
  void shouldAnswerTheSameEndpointFromTheEmbeddedSystemsClient() {
    try (TransferQueueSystem tq =
        PrometheusEndpoint.install(TransferQueueSystem.builder().config(TqConfigs.parse(METRICS)))
            .start()) {
      assertThat(tq.client().metricsEndpoint()).isEqualTo(tq.metricsEndpoint()).isPresent();
    }
  }
}
