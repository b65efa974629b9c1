package org.transferqueue.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.transferqueue.DistinctErrorLog;
import org.transferqueue.controller.ControllerStatistics;
import org.transferqueue.controller.PartitionStatistics;
import org.transferqueue.testing.Await;

class MetricsCollectorTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final AtomicLong clock = new AtomicLong(1_000);
  private final DistinctErrorLog errors =
      new DistinctErrorLog(System.getLogger(getClass().getName()));
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

  @Test
  void shouldShowTheStateAtARefreshWithoutWaitingForThePeriod() {
    MetricsCollector collector = collector(null);
    try {
      collector.start(Duration.ofHours(1));
      Await.until(() -> gauge(MetricDescriptor.PARTITIONS.meterName()) != null, "first collection");
      stats.set(new ControllerStatistics(List.of(partition("p", 3, 3, Map.of())), 3, 0, 3));

      assertThat(collector.refresh(Duration.ofSeconds(10))).isTrue();

      assertThat(value(MetricDescriptor.PARTITIONS.meterName())).isEqualTo(1);
      assertThat(value(MetricDescriptor.PARTITION_SAMPLES.meterName(), "partition_id", "p"))
          .isEqualTo(3);
    } finally {
      collector.close();
    }
    assertThat(collector.refresh(Duration.ofSeconds(10))).as("after close").isFalse();
  }

  @Test
  void shouldGiveUpARefreshAtItsDeadlineAndShareOneCollectionAmongWaiters() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger reads = new AtomicInteger();
    MetricsCollector collector =
        new MetricsCollector(
            registry,
            () -> {
              reads.incrementAndGet();
              entered.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return stats.get();
            },
            probes,
            null,
            clock::get,
            () -> 4096,
            errors);
    List<Thread> scrapers = new ArrayList<>();
    try {
      // A slow statistics source: the refresh returns at its deadline with the previous values.
      long start = System.nanoTime();
      assertThat(collector.refresh(Duration.ofMillis(200))).isFalse();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
      // While that collection runs, three scrapes queue one collection between them.
      List<CompletableFuture<Boolean>> waiting = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        waiting.add(result);
        scrapers.add(
            Thread.ofPlatform()
                .start(() -> result.complete(collector.refresh(Duration.ofSeconds(30)))));
      }
      // Each one is parked in its timed wait for the queued collection (its only timed wait).
      Await.until(
          () -> scrapers.stream().allMatch(t -> t.getState() == Thread.State.TIMED_WAITING),
          "three scrapes waiting");
      release.countDown();
      for (CompletableFuture<Boolean> f : waiting) {
        assertThat(f.get(30, TimeUnit.SECONDS)).isTrue();
      }
      assertThat(reads.get()).as("one collection timed out, one shared by three").isEqualTo(2);
    } finally {
      release.countDown();
      collector.close();
      for (Thread t : scrapers) {
        t.join(Duration.ofSeconds(30));
      }
    }
  }
}
