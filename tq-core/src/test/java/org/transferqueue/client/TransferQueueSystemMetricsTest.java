package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.metrics.MetricDescriptor;
import org.transferqueue.metrics.SystemMetrics;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;

class TransferQueueSystemMetricsTest {
  private static final TqConfig CONFIG =
      TqConfig.builder()
          .controller(c -> c.pollingMode(true))
          .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(2).totalStorageSize(100L)))
          .metrics(m -> m.collectInterval(Duration.ofHours(1)))
          .build();

  private static TransferQueueSystem start(MeterRegistry registry) {
    return TransferQueueSystem.builder()
        .config(CONFIG)
        .leakPolicy(LeakPolicy.THROW)
        .meterRegistry(registry)
        .start();
  }

  private static Batch rows(long first, int n) {
    return Batch.builder()
        .objects("x", LongStream.range(first, first + n).boxed().map(Object.class::cast).toList())
        .build();
  }

  /** Puts 8 samples to train, fetches 4 for actor, reads them, clears 3; partition old cleared. */
  private static BatchMeta workload(TransferQueueSystem tq, Runnable beforeClearingOld) {
    MetaClient client = tq.client();
    try (Batch train = rows(0, 8);
        Batch old = rows(100, 2)) {
      client.put(train, "train");
      client.put(old, "old");
    }
    BatchMeta fetched = client.getMeta(GetMetadataRequest.fetch("train", List.of("x"), "actor", 4));
    assertThat(fetched.size()).isEqualTo(4);
    try (Batch read = client.getData(fetched)) {
      assertThat(read.rowCount()).isEqualTo(4);
    }
    client.clearSamples(fetched.selectSamples(0, 1, 2));
    beforeClearingOld.run();
    client.clearPartition("old");
    return fetched;
  }

  private static double sum(MeterRegistry registry, String name, String... tags) {
    return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
  }

  @Test
  void shouldRegisterEveryMeterWithItsTypeAndLabelsAfterAWorkload() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (TransferQueueSystem tq = start(registry)) {
      workload(tq, () -> {});
      tq.metrics().orElseThrow().collector().collectNow();

      Map<String, Set<String>> labels = new TreeMap<>();
      Map<String, Meter.Type> types = new HashMap<>();
      for (Meter meter : registry.getMeters()) {
        if (meter.getId().getName().endsWith(".histogram")) {
          continue; // SimpleMeterRegistry's own view of the timers' histogram buckets
        }
        Set<String> keys = new TreeSet<>();
        meter.getId().getTags().forEach(t -> keys.add(t.getKey()));
        Set<String> previous = labels.putIfAbsent(meter.getId().getName(), keys);
        if (previous != null) {
          assertThat(keys).as(meter.getId().getName()).isEqualTo(previous);
        }
        types.put(meter.getId().getName(), meter.getId().getType());
      }
      Set<String> none = Set.of();
      Set<String> op = Set.of("op_type");
      Set<String> partition = Set.of("partition_id");
      Set<String> task = Set.of("partition_id", "task_name");
      Set<String> unit = Set.of("storage_unit_id");
      Set<String> unitOp = Set.of("storage_unit_id", "op_type");
      Map<String, Set<String>> expected = new TreeMap<>();
      expected.put(MetricDescriptor.CONTROLLER_UPTIME.meterName(), none);
      expected.put(MetricDescriptor.CONTROLLER_MEMORY_RSS.meterName(), none);
      expected.put(MetricDescriptor.PARTITIONS.meterName(), none);
      expected.put(MetricDescriptor.PARTITION_SAMPLES.meterName(), partition);
      expected.put(MetricDescriptor.PARTITION_PRODUCTION_PROGRESS.meterName(), task);
      expected.put(MetricDescriptor.PARTITION_CONSUMPTION_PROGRESS.meterName(), task);
      expected.put(MetricDescriptor.INDEXES_ALLOCATED.meterName(), none);
      expected.put(MetricDescriptor.INDEXES_REUSABLE.meterName(), none);
      expected.put(MetricDescriptor.CONTROLLER_REQUESTS.meterName(), op);
      expected.put(MetricDescriptor.CONTROLLER_REQUEST_DURATION.meterName(), op);
      expected.put(MetricDescriptor.CONTROLLER_REQUEST_ERRORS.meterName(), op);
      expected.put(MetricDescriptor.CONTROLLER_REQUEST_SAMPLES.meterName(), op);
      expected.put(MetricDescriptor.STORAGE_CAPACITY.meterName(), unit);
      expected.put(MetricDescriptor.STORAGE_ACTIVE_KEYS.meterName(), unit);
      expected.put(MetricDescriptor.STORAGE_UTILIZATION.meterName(), unit);
      expected.put(MetricDescriptor.STORAGE_MEMORY_RSS.meterName(), unit);
      expected.put(MetricDescriptor.STORAGE_REQUEST_OPS.meterName(), unitOp);
      expected.put(MetricDescriptor.STORAGE_REQUEST_LATENCY_AVG.meterName(), unitOp);
      expected.put(MetricDescriptor.STORAGE_REQUEST_LATENCY_P50.meterName(), unitOp);
      expected.put(MetricDescriptor.STORAGE_REQUEST_LATENCY_P99.meterName(), unitOp);
      expected.put(MetricDescriptor.STORAGE_REQUESTS.meterName(), unitOp);
      expected.put(MetricDescriptor.STORAGE_REQUEST_DURATION.meterName(), unitOp);
      expected.put(MetricDescriptor.STORAGE_REQUEST_ERRORS.meterName(), unitOp);
      expected.put(MetricDescriptor.STORAGE_REQUEST_SAMPLES.meterName(), unitOp);
      assertThat(labels).isEqualTo(expected);

      Set<String> timers =
          Set.of(
              MetricDescriptor.CONTROLLER_REQUEST_DURATION.meterName(),
              MetricDescriptor.STORAGE_REQUEST_DURATION.meterName());
      Set<String> counters =
          Set.of(
              MetricDescriptor.CONTROLLER_REQUESTS.meterName(),
              MetricDescriptor.CONTROLLER_REQUEST_ERRORS.meterName(),
              MetricDescriptor.CONTROLLER_REQUEST_SAMPLES.meterName(),
              MetricDescriptor.STORAGE_REQUESTS.meterName(),
              MetricDescriptor.STORAGE_REQUEST_ERRORS.meterName(),
              MetricDescriptor.STORAGE_REQUEST_SAMPLES.meterName());
      types.forEach(
          (name, type) ->
              assertThat(type)
                  .as(name)
                  .isEqualTo(
                      timers.contains(name)
                          ? Meter.Type.TIMER
                          : counters.contains(name) ? Meter.Type.COUNTER : Meter.Type.GAUGE));

      Timer getMeta =
          registry
              .get(MetricDescriptor.CONTROLLER_REQUEST_DURATION.meterName())
              .tag("op_type", "GET_META")
              .timer();
      assertThat(getMeta.count()).isEqualTo(3); // two inserts and one fetch
      assertThat(
              sum(
                  registry,
                  MetricDescriptor.CONTROLLER_REQUESTS.meterName(),
                  "op_type",
                  "CLEAR_PARTITION"))
          .isEqualTo(1);
      assertThat(
              sum(
                  registry,
                  MetricDescriptor.CONTROLLER_REQUESTS.meterName(),
                  "op_type",
                  "GET_PARTITION_META"))
          .isEqualTo(1);
      assertThat(
              sum(
                  registry,
                  MetricDescriptor.STORAGE_REQUEST_SAMPLES.meterName(),
                  "op_type",
                  "PUT_DATA"))
          .isEqualTo(10);
      assertThat(
              sum(
                  registry,
                  MetricDescriptor.STORAGE_REQUEST_SAMPLES.meterName(),
                  "op_type",
                  "GET_DATA"))
          .isEqualTo(4);
      assertThat(
              sum(
                  registry,
                  MetricDescriptor.STORAGE_REQUEST_SAMPLES.meterName(),
                  "op_type",
                  "CLEAR_DATA"))
          .isEqualTo(5);
      assertThat(sum(registry, MetricDescriptor.STORAGE_REQUEST_ERRORS.meterName())).isZero();
      // samples are attributed to the unit that holds them: put minus cleared = stored, per unit
      for (Gauge active :
          registry.find(MetricDescriptor.STORAGE_ACTIVE_KEYS.meterName()).gauges()) {
        String unitId = active.getId().getTag("storage_unit_id");
        String samples = MetricDescriptor.STORAGE_REQUEST_SAMPLES.meterName();
        double put = sum(registry, samples, "storage_unit_id", unitId, "op_type", "PUT_DATA");
        double cleared = sum(registry, samples, "storage_unit_id", unitId, "op_type", "CLEAR_DATA");
        assertThat(put - cleared).as(unitId).isEqualTo(active.value());
      }
      assertThat(tq.metrics().orElseThrow().errors().errorCount()).isZero();
    }
  }

  @Test
  void H122_shouldCountProducedAndClearedSamples() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (TransferQueueSystem tq = start(registry)) {
      workload(tq, () -> {});
      // 8 to train and 2 to old; 3 cleared one by one, the partition clear is not counted
      assertThat(
              sum(
                  registry,
                  MetricDescriptor.CONTROLLER_REQUEST_SAMPLES.meterName(),
                  "op_type",
                  "NOTIFY_DATA_UPDATE"))
          .isEqualTo(10);
      assertThat(
              sum(
                  registry,
                  MetricDescriptor.CONTROLLER_REQUEST_SAMPLES.meterName(),
                  "op_type",
                  "CLEAR_META"))
          .isEqualTo(3);
    }
  }

  @Test
  void shouldShowProgressAndStorageOfAKnownStateAndDropTheClearedPartition() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (TransferQueueSystem tq = start(registry)) {
      SystemMetrics metrics = tq.metrics().orElseThrow();
      workload(
          tq,
          () -> {
            metrics.collector().collectNow();
            assertThat(
                    gauge(
                        registry,
                        MetricDescriptor.PARTITION_SAMPLES.meterName(),
                        "partition_id",
                        "old"))
                .isEqualTo(2);
          });
      metrics.collector().collectNow();

      // train: 5 samples left, all produced; actor consumed 4 of the 8 and 3 of those were cleared
      assertThat(gauge(registry, MetricDescriptor.PARTITIONS.meterName())).isEqualTo(1);
      assertThat(
              gauge(
                  registry,
                  MetricDescriptor.PARTITION_SAMPLES.meterName(),
                  "partition_id",
                  "train"))
          .isEqualTo(5);
      String production = MetricDescriptor.PARTITION_PRODUCTION_PROGRESS.meterName();
      assertThat(gauge(registry, production, "partition_id", "train", "task_name", "all"))
          .isEqualTo(1.0);
      assertThat(gauge(registry, production, "partition_id", "train", "task_name", "actor"))
          .isEqualTo(1.0);
      assertThat(
              gauge(
                  registry,
                  MetricDescriptor.PARTITION_CONSUMPTION_PROGRESS.meterName(),
                  "partition_id",
                  "train",
                  "task_name",
                  "actor"))
          .isEqualTo(0.2);
      assertThat(gauge(registry, MetricDescriptor.INDEXES_ALLOCATED.meterName())).isEqualTo(5);
      assertThat(gauge(registry, MetricDescriptor.INDEXES_REUSABLE.meterName())).isEqualTo(5);
      for (String name :
          List.of(
              MetricDescriptor.PARTITION_SAMPLES.meterName(),
              MetricDescriptor.PARTITION_PRODUCTION_PROGRESS.meterName(),
              MetricDescriptor.PARTITION_CONSUMPTION_PROGRESS.meterName())) {
        assertThat(registry.find(name).tag("partition_id", "old").gauges()).as(name).isEmpty();
      }

      List<Gauge> active =
          List.copyOf(registry.find(MetricDescriptor.STORAGE_ACTIVE_KEYS.meterName()).gauges());
      assertThat(active).hasSize(2);
      assertThat(active.stream().mapToDouble(Gauge::value).sum()).isEqualTo(5);
      for (Gauge g : registry.find(MetricDescriptor.STORAGE_CAPACITY.meterName()).gauges()) {
        assertThat(g.value()).isEqualTo(50);
      }
      double utilisation =
          registry.find(MetricDescriptor.STORAGE_UTILIZATION.meterName()).gauges().stream()
              .mapToDouble(Gauge::value)
              .sum();
      assertThat(utilisation).isEqualTo(5 / 50.0);
    }
  }

  private static double gauge(MeterRegistry registry, String name, String... tags) {
    Gauge g = registry.find(name).tags(tags).gauge();
    assertThat(g).as(name + " " + List.of(tags)).isNotNull();
    return g.value();
  }

  @Test
  void shouldServeRequestsWhenEveryCounterFails() {
    SimpleMeterRegistry registry =
        new SimpleMeterRegistry() {
          @Override
          protected Counter newCounter(Meter.Id id) {
            return new Counter() {
              @Override
              public void increment(double amount) {
                throw new IllegalStateException("counter " + id.getName() + " is broken");
              }

              @Override
              public double count() {
                return 0;
              }

              @Override
              public Meter.Id getId() {
                return id;
              }
            };
          }
        };
    try (TransferQueueSystem tq = start(registry)) {
      BatchMeta fetched = workload(tq, () -> {});
      assertThat(fetched.size()).isEqualTo(4);
      assertThat(tq.client().getPartitionList()).containsExactly("train");
      assertThat(tq.metrics().orElseThrow().errors().errorCount()).isPositive();
    }
  }

  @Test
  void shouldMeasureAKeyValueBackendAsOneUnitWithRequestMetersOnly() {
    MooncakeStoreConfig mooncake =
        MooncakeStoreConfig.builder()
            .globalSegmentSize(64L << 20)
            .localBufferSize(1L << 20)
            .build();
    TqConfig config =
        TqConfig.builder()
            .controller(c -> c.pollingMode(true))
            .backend(b -> b.storageBackend(StorageBackend.MOONCAKE_STORE))
            .metrics(m -> m.collectInterval(Duration.ofHours(1)))
            .build();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (TransferQueueSystem tq =
        TransferQueueSystem.builder()
            .config(config)
            .leakPolicy(LeakPolicy.THROW)
            .meterRegistry(registry)
            .storageBackends(
                StorageManagerRegistry.builder()
                    .register(
                        StorageManagerRegistry.MOONCAKE_STORE,
                        ConfigMapper.embeddedMooncakeStore(mooncake))
                    .build())
            .start()) {
      workload(tq, () -> {});
      tq.metrics().orElseThrow().collector().collectNow();
      String[] put = {"storage_unit_id", "MooncakeStore", "op_type", "PUT_DATA"};
      assertThat(sum(registry, MetricDescriptor.STORAGE_REQUEST_SAMPLES.meterName(), put))
          .isEqualTo(10);
      assertThat(gauge(registry, MetricDescriptor.STORAGE_REQUEST_OPS.meterName(), put))
          .isEqualTo(2);
      assertThat(registry.find(MetricDescriptor.STORAGE_ACTIVE_KEYS.meterName()).gauges())
          .isEmpty();
      assertThat(registry.find(MetricDescriptor.STORAGE_CAPACITY.meterName()).gauges()).isEmpty();
      assertThat(
              gauge(
                  registry,
                  MetricDescriptor.PARTITION_SAMPLES.meterName(),
                  "partition_id",
                  "train"))
          .isEqualTo(5);
    }
  }

  @Test
  void shouldMeasureNothingAndRunNoEndpointWithoutARegistry() {
    try (TransferQueueSystem tq =
        TransferQueueSystem.builder().config(CONFIG).leakPolicy(LeakPolicy.THROW).start()) {
      workload(tq, () -> {});
      assertThat(tq.metrics()).isEmpty();
      assertThat(tq.metricsEndpoint()).isEmpty();
    }
  }
}
