package org.transferqueue.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.transferqueue.controller.ControllerStatistics;
import org.transferqueue.controller.PartitionStatistics;

class MetricsCollectorTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final AtomicLong clock = new AtomicLong(1_000);
  private final MetricsErrorHandler errors = new MetricsErrorHandler();
  private final AtomicReference<ControllerStatistics> stats =
      new AtomicReference<>(new ControllerStatistics(List.of(), 0, 0, 0));
  private final List<StorageUnitProbe> probes = new ArrayList<>();

  private MetricsCollector collector(StorageRequestMeters storageMeters) {
    return new MetricsCollector(
        registry, stats::get, probes, storageMeters, clock::get, () -> 4096, errors);
  }

  private static PartitionStatistics partition(
      String id, int total, int produced, Map<String, Integer> consumed) {
    return new PartitionStatistics(
        id, 0, total, 0, 1, List.copyOf(consumed.keySet()), produced, Map.of(), consumed);
  }

  private Gauge gauge(String name, String... tags) {
    return registry.find(name).tags(tags).gauge();
  }

  private double value(String name, String... tags) {
    Gauge g = gauge(name, tags);
    assertThat(g).as(name + " " + List.of(tags)).isNotNull();
    return g.value();
  }

  @Test
  void H118_shouldShowPartitionGaugesOfASnapshot() {
    MetricsCollector collector = collector(null);
    stats.set(
        new ControllerStatistics(
            List.of(
                partition("train_0", 20, 16, Map.of("gen", 10)),
                partition("train_1", 10, 10, Map.of("gen", 10, "train", 3))),
            30,
            5,
            35));
    clock.addAndGet(2_500_000_000L);
    collector.collectNow();

    assertThat(value(MetricDescriptor.PARTITIONS.meterName())).isEqualTo(2);
    assertThat(value(MetricDescriptor.INDEXES_ALLOCATED.meterName())).isEqualTo(30);
    assertThat(value(MetricDescriptor.INDEXES_REUSABLE.meterName())).isEqualTo(5);
    assertThat(value(MetricDescriptor.PARTITION_SAMPLES.meterName(), "partition_id", "train_0"))
        .isEqualTo(20);
    assertThat(value(MetricDescriptor.PARTITION_SAMPLES.meterName(), "partition_id", "train_1"))
        .isEqualTo(10);
    String production = MetricDescriptor.PARTITION_PRODUCTION_PROGRESS.meterName();
    String consumption = MetricDescriptor.PARTITION_CONSUMPTION_PROGRESS.meterName();
    assertThat(value(production, "partition_id", "train_0", "task_name", "all")).isEqualTo(0.8);
    assertThat(value(production, "partition_id", "train_0", "task_name", "gen")).isEqualTo(0.8);
    assertThat(value(consumption, "partition_id", "train_0", "task_name", "gen")).isEqualTo(0.5);
    assertThat(value(production, "partition_id", "train_1", "task_name", "gen")).isEqualTo(1.0);
    assertThat(value(consumption, "partition_id", "train_1", "task_name", "gen")).isEqualTo(1.0);
    assertThat(value(consumption, "partition_id", "train_1", "task_name", "train"))
        .isCloseTo(0.3, within(1e-12));
    assertThat(gauge(consumption, "partition_id", "train_0", "task_name", "train")).isNull();
    assertThat(value(MetricDescriptor.CONTROLLER_UPTIME.meterName())).isEqualTo(2.5);
    assertThat(value(MetricDescriptor.CONTROLLER_MEMORY_RSS.meterName())).isEqualTo(4096);
  }

  @Test
  void H118_shouldShowZerosForAnEmptySnapshot() {
    collector(null).collectNow();
    assertThat(value(MetricDescriptor.PARTITIONS.meterName())).isZero();
    assertThat(value(MetricDescriptor.INDEXES_ALLOCATED.meterName())).isZero();
    assertThat(value(MetricDescriptor.INDEXES_REUSABLE.meterName())).isZero();
    assertThat(registry.find(MetricDescriptor.PARTITION_SAMPLES.meterName()).gauges()).isEmpty();
  }

  @Test
  void H121_shouldRemoveTheSeriesOfAClearedPartitionAtTheNextCollection() {
    MetricsCollector collector = collector(null);
    stats.set(
        new ControllerStatistics(
            List.of(
                partition("train_0", 4, 4, Map.of("gen", 2)),
                partition("train_1", 2, 1, Map.of("gen", 1))),
            6,
            0,
            6));
    collector.collectNow();
    assertThat(gauge(MetricDescriptor.PARTITION_SAMPLES.meterName(), "partition_id", "train_0"))
        .isNotNull();

    stats.set(
        new ControllerStatistics(List.of(partition("train_1", 2, 1, Map.of("gen", 1))), 2, 4, 6));
    collector.collectNow();

    for (String name :
        List.of(
            MetricDescriptor.PARTITION_SAMPLES.meterName(),
            MetricDescriptor.PARTITION_PRODUCTION_PROGRESS.meterName(),
            MetricDescriptor.PARTITION_CONSUMPTION_PROGRESS.meterName())) {
      assertThat(registry.find(name).tag("partition_id", "train_0").gauges()).as(name).isEmpty();
      assertThat(registry.find(name).tag("partition_id", "train_1").gauges()).as(name).isNotEmpty();
    }
    assertThat(value(MetricDescriptor.PARTITIONS.meterName())).isEqualTo(1);
    assertThat(value(MetricDescriptor.INDEXES_REUSABLE.meterName())).isEqualTo(4);
  }

  @Test
  void H120_shouldShowStorageGaugesOfAUnit() {
    probes.add(() -> new StorageUnitReport("SU_001", OptionalLong.of(1000), 250, 536_870_912L));
    collector(null).collectNow();
    assertThat(value(MetricDescriptor.STORAGE_CAPACITY.meterName(), "storage_unit_id", "SU_001"))
        .isEqualTo(1000);
    assertThat(value(MetricDescriptor.STORAGE_ACTIVE_KEYS.meterName(), "storage_unit_id", "SU_001"))
        .isEqualTo(250);
    assertThat(value(MetricDescriptor.STORAGE_UTILIZATION.meterName(), "storage_unit_id", "SU_001"))
        .isEqualTo(0.25);
    assertThat(value(MetricDescriptor.STORAGE_MEMORY_RSS.meterName(), "storage_unit_id", "SU_001"))
        .isEqualTo(536_870_912.0);
  }

  @Test
  void H120_shouldCollectTheOtherUnitsWhenOneFails() {
    probes.add(
        () -> {
          throw new IllegalStateException("SU_001 unreachable");
        });
    probes.add(() -> new StorageUnitReport("SU_002", OptionalLong.of(500), 0, 0));
    collector(null).collectNow();
    assertThat(value(MetricDescriptor.STORAGE_CAPACITY.meterName(), "storage_unit_id", "SU_002"))
        .isEqualTo(500);
    assertThat(value(MetricDescriptor.STORAGE_UTILIZATION.meterName(), "storage_unit_id", "SU_002"))
        .isZero();
    assertThat(errors.errorCount()).isEqualTo(1);
  }

  @Test
  void H120_shouldOmitCapacityAndUtilisationOfAnUnlimitedUnit() {
    probes.add(() -> new StorageUnitReport("SU_UNLIMITED", OptionalLong.empty(), 42, 1));
    collector(null).collectNow();
    assertThat(
            gauge(MetricDescriptor.STORAGE_CAPACITY.meterName(), "storage_unit_id", "SU_UNLIMITED"))
        .isNull();
    assertThat(
            gauge(
                MetricDescriptor.STORAGE_UTILIZATION.meterName(),
                "storage_unit_id",
                "SU_UNLIMITED"))
        .isNull();
    assertThat(
            value(
                MetricDescriptor.STORAGE_ACTIVE_KEYS.meterName(),
                "storage_unit_id",
                "SU_UNLIMITED"))
        .isEqualTo(42);
    assertThat(
            value(
                MetricDescriptor.STORAGE_MEMORY_RSS.meterName(), "storage_unit_id", "SU_UNLIMITED"))
        .isEqualTo(1);
  }

  @Test
  void H120_shouldDropCapacitySeriesWhenAUnitBecomesUnlimited() {
    AtomicReference<StorageUnitReport> report =
        new AtomicReference<>(new StorageUnitReport("SU_001", OptionalLong.of(1000), 250, 0));
    probes.add(report::get);
    MetricsCollector collector = collector(null);
    collector.collectNow();
    assertThat(gauge(MetricDescriptor.STORAGE_CAPACITY.meterName(), "storage_unit_id", "SU_001"))
        .isNotNull();

    report.set(new StorageUnitReport("SU_001", OptionalLong.empty(), 300, 0));
    collector.collectNow();
    assertThat(gauge(MetricDescriptor.STORAGE_CAPACITY.meterName(), "storage_unit_id", "SU_001"))
        .isNull();
    assertThat(gauge(MetricDescriptor.STORAGE_UTILIZATION.meterName(), "storage_unit_id", "SU_001"))
        .isNull();
    assertThat(value(MetricDescriptor.STORAGE_ACTIVE_KEYS.meterName(), "storage_unit_id", "SU_001"))
        .isEqualTo(300);
  }

  @Test
  void shouldCopyUnitRequestStatisticsIntoGauges() {
    StorageRequestMeters meters = new StorageRequestMeters(registry, List.of("SU_001"));
    probes.add(() -> new StorageUnitReport("SU_001", OptionalLong.empty(), 0, 0));
    meters.record("SU_001", StorageOp.PUT_DATA, 2_000_000, 4, false);
    meters.record("SU_001", StorageOp.PUT_DATA, 4_000_000, 4, false);
    collector(meters).collectNow();
    String[] put = {"storage_unit_id", "SU_001", "op_type", "PUT_DATA"};
    assertThat(value(MetricDescriptor.STORAGE_REQUEST_OPS.meterName(), put)).isEqualTo(2);
    assertThat(value(MetricDescriptor.STORAGE_REQUEST_LATENCY_AVG.meterName(), put))
        .isCloseTo(0.003, within(1e-12));
    // both observations lie in (1 ms, 5 ms]: the median is the middle of that bucket
    assertThat(value(MetricDescriptor.STORAGE_REQUEST_LATENCY_P50.meterName(), put))
        .isCloseTo(0.003, within(1e-12));
    assertThat(value(MetricDescriptor.STORAGE_REQUEST_LATENCY_P99.meterName(), put))
        .isBetween(0.001, 0.005);
    String[] get = {"storage_unit_id", "SU_001", "op_type", "GET_DATA"};
    assertThat(value(MetricDescriptor.STORAGE_REQUEST_OPS.meterName(), get)).isZero();
  }

  @Test
  void shouldReportAFailingStatisticsSourceAndKeepTheLastValues() {
    MetricsCollector collector = collector(null);
    stats.set(new ControllerStatistics(List.of(partition("p", 1, 1, Map.of())), 1, 0, 1));
    collector.collectNow();
    stats.set(null);
    collector.collectNow();
    assertThat(errors.errorCount()).isEqualTo(1);
    assertThat(value(MetricDescriptor.PARTITIONS.meterName())).isEqualTo(1);
  }
}
