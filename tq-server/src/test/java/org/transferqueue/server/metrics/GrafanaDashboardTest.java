package org.transferqueue.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;

/** Checks the Grafana dashboard against what the exporter really serves. */
@Timeout(60)
class GrafanaDashboardTest {
  private static final Path DASHBOARD =
      Path.of("..", "dashboards", "grafana", "transferqueue.json");
  private static final Pattern METRIC = Pattern.compile("\\btq_[a-zA-Z0-9_]+");

  private static Map<String, Object> dashboard;

  @BeforeAll
  @SuppressWarnings("unchecked")
  static void parse() throws Exception {
    // JSON is YAML 1.2: the YAML reader the configuration uses parses it.
    Object parsed =
        new Load(LoadSettings.builder().build()).loadFromString(Files.readString(DASHBOARD));
    dashboard = (Map<String, Object>) parsed;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Object value) {
    return (List<Map<String, Object>>) value;
  }

  private static void collectExpressions(Object node, List<String> out) {
    if (node instanceof Map<?, ?> map) {
      map.forEach(
          (key, value) -> {
            if (("expr".equals(key) || "definition".equals(key)) && value instanceof String s) {
              out.add(s);
            } else {
              collectExpressions(value, out);
            }
          });
    } else if (node instanceof List<?> items) {
      items.forEach(item -> collectExpressions(item, out));
    }
  }

  private static Set<String> metricNamesOfQueries() {
    List<String> expressions = new ArrayList<>();
    collectExpressions(dashboard.get("panels"), expressions);
    collectExpressions(dashboard.get("templating"), expressions);
    Set<String> names = new TreeSet<>();
    for (String expr : expressions) {
      for (String quantile : List.of("p50", "p99")) {
        String expanded = expr.replace("${quantile}", quantile).replace("$quantile", quantile);
        Matcher m = METRIC.matcher(expanded);
        while (m.find()) {
          names.add(m.group());
        }
      }
    }
    return names;
  }

  private static Set<String> scrapedNames() throws Exception {
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
      Set<String> names = new TreeSet<>();
      for (String line : body.split("\n")) {
        if (!line.isBlank() && !line.startsWith("#")) {
          names.add(line.split("[{ ]", 2)[0]);
        }
      }
      return names;
    }
  }

  @Test
  void shouldQueryOnlyMetricsTheExporterRegisters() throws Exception {
    Set<String> queried = metricNamesOfQueries();
    assertThat(queried).hasSizeGreaterThanOrEqualTo(15);
    assertThat(scrapedNames()).containsAll(queried);
  }

  @Test
  void shouldShowEveryControllerAndStorageGauge() {
    assertThat(metricNamesOfQueries())
        .contains(
            "tq_controller_uptime_seconds",
            "tq_controller_memory_rss_bytes",
            "tq_partitions_total",
            "tq_partition_samples_total",
            "tq_partition_production_progress",
            "tq_partition_consumption_progress",
            "tq_global_index_allocated_total",
            "tq_global_index_reusable_total",
            "tq_controller_request_total",
            "tq_controller_request_duration_seconds_bucket",
            "tq_controller_request_samples_total",
            "tq_storage_capacity_total",
            "tq_storage_active_keys_total",
            "tq_storage_utilization_ratio",
            "tq_storage_memory_rss_bytes",
            "tq_storage_request_ops",
            "tq_storage_request_latency_p50",
            "tq_storage_request_latency_p99");
  }

  @Test
  void shouldHaveTheRowsAndVariablesOfTheUpstreamLayout() {
    assertThat(((Number) dashboard.get("schemaVersion")).intValue()).isGreaterThanOrEqualTo(38);
    List<String> rows =
        list(dashboard.get("panels")).stream()
            .filter(p -> "row".equals(p.get("type")))
            .map(p -> (String) p.get("title"))
            .toList();
    assertThat(rows)
        .containsExactly(
            "Controller Overview",
            "Request Throughput & Latency",
            "Partition Status",
            "Storage Units");
    @SuppressWarnings("unchecked")
    Map<String, Object> templating = (Map<String, Object>) dashboard.get("templating");
    List<String> variables =
        list(templating.get("list")).stream().map(v -> (String) v.get("name")).toList();
    assertThat(variables).containsExactly("datasource", "task_name", "op_type", "quantile");
    Map<String, Object> opType = list(templating.get("list")).get(2);
    assertThat((String) opType.get("query"))
        .isEqualTo("PUT_DATA,GET_DATA,CLEAR_DATA,GET_META,CLEAR_META,NOTIFY_DATA_UPDATE");
    for (Map<String, Object> panel : list(dashboard.get("panels"))) {
      if (!"row".equals(panel.get("type"))) {
        assertThat(panel.get("datasource").toString())
            .as(panel.get("title").toString())
            .contains("${datasource}");
      }
    }
  }
}
