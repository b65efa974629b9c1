package org.transferqueue.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.metrics.MetricDescriptor;
import org.transferqueue.tensor.Batch;

@Timeout(60)
class PrometheusEndpointTest {

  private static TransferQueueSystem start(boolean enabled) {
    TqConfig config =
        TqConfig.builder()
            .controller(c -> c.pollingMode(true))
            .metrics(m -> m.enabled(enabled).port(0).collectInterval(Duration.ofHours(1)))
            .build();
    return PrometheusEndpoint.install(TransferQueueSystem.builder().config(config)).start();
  }

  @Test
  void A10_shouldRunNoEndpointWhenMetricsAreDisabled() {
    try (TransferQueueSystem tq = start(false)) {
      assertThat(tq.metricsEndpoint()).isEmpty();
    }
  }

  @Test
  void A10_shouldServeMetricsOnAFreePortWhenEnabled() throws Exception {
    try (TransferQueueSystem tq = start(true)) {
      String endpoint = tq.metricsEndpoint().orElseThrow();
      assertThat(endpoint).matches("127\\.0\\.0\\.1:\\d+");
      assertThat(Integer.parseInt(endpoint.substring(endpoint.indexOf(':') + 1))).isPositive();

      HttpResponse<String> response = MetricsWorkload.get(endpoint, "/metrics", "GET");
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("Content-Type"))
          .hasValue("text/plain; version=0.0.4; charset=utf-8");
      assertThat(response.body()).contains("tq_controller_uptime_seconds");
    }
  }

  @Test
  void shouldExportTheUpstreamNamesAfterAWorkload() throws Exception {
    try (TransferQueueSystem tq = start(true)) {
      MetricsWorkload.run(tq);
      String body =
          MetricsWorkload.get(tq.metricsEndpoint().orElseThrow(), "/metrics", "GET").body();
      assertThat(body)
          .contains("# TYPE tq_partitions_total gauge")
          .contains("tq_partitions_total 1.0")
          .contains("tq_partition_samples_total{partition_id=\"train\"} 4.0")
          .contains(
              "tq_partition_consumption_progress{partition_id=\"train\",task_name=\"actor\"} 0.5")
          .contains(
              "tq_partition_production_progress{partition_id=\"train\",task_name=\"all\"} 1.0")
          .contains("tq_global_index_allocated_total 4.0")
          .contains("tq_global_index_reusable_total 2.0")
          .contains("tq_controller_memory_rss_bytes")
          .contains("# TYPE tq_controller_request_total counter")
          .contains("tq_controller_request_samples_total{op_type=\"NOTIFY_DATA_UPDATE\"} 6.0")
          .contains("tq_controller_request_samples_total{op_type=\"CLEAR_META\"} 2.0")
          .contains("tq_controller_request_errors_total{op_type=\"GET_META\"} 0.0")
          .contains(
              "tq_controller_request_duration_seconds_bucket{op_type=\"GET_META\",le=\"0.001\"}")
          .contains("tq_storage_active_keys_total{storage_unit_id=")
          .contains("tq_storage_memory_rss_bytes{storage_unit_id=")
          .contains("tq_storage_request_ops{op_type=\"PUT_DATA\",storage_unit_id=")
          .contains("tq_storage_request_latency_p99{op_type=\"GET_DATA\",storage_unit_id=")
          .contains("tq_storage_request_total{op_type=\"CLEAR_DATA\",storage_unit_id=")
          .doesNotContain("tq_storage_capacity_total{"); // unlimited by default
    }
  }

  @Test
  void shouldShowAPutInTheNextScrapeWithoutWaitingForTheCollectionInterval() throws Exception {
    // The default collection interval (10 s): the periodic collection ran at start-up only.
    TqConfig config = TqConfig.builder().metrics(m -> m.enabled(true).port(0)).build();
    try (TransferQueueSystem tq =
            PrometheusEndpoint.install(TransferQueueSystem.builder().config(config)).start();
        Batch rows = Batch.builder().objects("x", List.of(1L, 2L, 3L)).build()) {
      String endpoint = tq.metricsEndpoint().orElseThrow();
      assertThat(MetricsWorkload.get(endpoint, "/metrics", "GET").body())
          .contains("tq_partitions_total 0.0");
      tq.client().put(rows, "train");

      assertThat(MetricsWorkload.get(endpoint, "/metrics", "GET").body())
          .contains("tq_partitions_total 1.0")
          .contains("tq_partition_samples_total{partition_id=\"train\"} 3.0")
          .contains(
              "tq_partition_production_progress{partition_id=\"train\",task_name=\"all\"} 1.0");
      tq.client().clearPartition("train");
      assertThat(MetricsWorkload.get(endpoint, "/metrics", "GET").body())
          .contains("tq_partitions_total 0.0")
          .doesNotContain("tq_partition_samples_total{");
    }
  }

  @Test
  void H117_shouldExportEveryDescribedFamilyWithItsPrometheusNameAndType() throws Exception {
    TqConfig config =
        TqConfig.builder()
            .controller(c -> c.pollingMode(true))
            .backend(b -> b.simpleStorage(s -> s.totalStorageSize(100L)))
            .metrics(m -> m.enabled(true).port(0).collectInterval(Duration.ofHours(1)))
            .build();
    try (TransferQueueSystem tq =
        PrometheusEndpoint.install(TransferQueueSystem.builder().config(config)).start()) {
      MetricsWorkload.run(tq);
      String body =
          MetricsWorkload.get(tq.metricsEndpoint().orElseThrow(), "/metrics", "GET").body();
      for (MetricDescriptor d : MetricDescriptor.values()) {
        String type = d.kind().name().toLowerCase(java.util.Locale.ROOT);
        assertThat(body).contains("# TYPE " + d.prometheusName() + " " + type + "\n");
        String sample = d.kind() == MetricDescriptor.Kind.HISTOGRAM ? "_bucket{" : "";
        assertThat(body).as(d.name()).contains("\n" + d.prometheusName() + sample);
      }
    }
  }

  @Test
  void shouldAnswerOtherPathsAndMethodsWithErrors() throws Exception {
    try (TransferQueueSystem tq = start(true)) {
      String endpoint = tq.metricsEndpoint().orElseThrow();
      assertThat(MetricsWorkload.get(endpoint, "/metricsx", "GET").statusCode()).isEqualTo(404);
      assertThat(MetricsWorkload.get(endpoint, "/metrics", "POST").statusCode()).isEqualTo(405);
      assertThat(MetricsWorkload.get(endpoint, "/metrics", "HEAD").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void shouldStopServingWhenTheSystemCloses() {
    String endpoint;
    try (TransferQueueSystem tq = start(true)) {
      endpoint = tq.metricsEndpoint().orElseThrow();
    }
    assertThatThrownBy(() -> MetricsWorkload.get(endpoint, "/metrics", "GET"))
        .isInstanceOf(java.io.IOException.class);
  }

  @Test
  void shouldNameHostAndPortWhenItCannotBind() {
    try (PrometheusEndpoint first =
        PrometheusEndpoint.start(PrometheusEndpoint.newRegistry(), "127.0.0.1", 0)) {
      int port = Integer.parseInt(first.address().substring("127.0.0.1:".length()));
      assertThatThrownBy(
              () -> PrometheusEndpoint.start(PrometheusEndpoint.newRegistry(), "127.0.0.1", port))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED))
          .hasMessageContaining("127.0.0.1:" + port);
    }
  }
}
