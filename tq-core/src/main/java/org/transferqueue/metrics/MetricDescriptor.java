package org.transferqueue.metrics;

import java.time.Duration;
import java.util.List;

/**
 * Every meter of the system: its Micrometer name, the name a Prometheus scrape shows (a
 * compatibility contract with the upstream Grafana dashboard), its kind, unit and labels.
 *
 * <p>The Prometheus names follow from the Micrometer names by the Prometheus naming convention
 * (dots become underscores, the base unit and, for counters, {@code _total} are appended), except
 * that gauges named {@code ..._total} keep that suffix, which {@code tq-server}'s endpoint ensures.
 * Meters are updated without locks ({@link java.util.concurrent.atomic.LongAdder}s behind
 * Micrometer counters and timers, gauges reading published snapshots) and exported by the
 * registry's own reader.
 */
public enum MetricDescriptor {
  /** Seconds since the metrics started. */
  CONTROLLER_UPTIME(
      "tq.controller.uptime",
      "tq_controller_uptime_seconds",
      Kind.GAUGE,
      "seconds",
      List.of(),
      "Seconds since the metrics started"),
  /** Resident memory of the controller's process. */
  CONTROLLER_MEMORY_RSS(
      "tq.controller.memory.rss",
      "tq_controller_memory_rss_bytes",
      Kind.GAUGE,
      "bytes",
      List.of(),
      "Resident memory of the controller's process"),
  /** The number of partitions. */
  PARTITIONS(
      "tq.partitions.total",
      "tq_partitions_total",
      Kind.GAUGE,
      null,
      List.of(),
      "The number of partitions"),
  /** Active (produced or allocated, not pre-allocated) samples per partition. */
  PARTITION_SAMPLES(
      "tq.partition.samples.total",
      "tq_partition_samples_total",
      Kind.GAUGE,
      null,
      List.of(MetricLabels.PARTITION_ID),
      "Active (produced or allocated, not pre-allocated) samples per partition"),
  /** Samples with at least one produced field / samples, per partition, for "all" and each task. */
  PARTITION_PRODUCTION_PROGRESS(
      "tq.partition.production.progress",
      "tq_partition_production_progress",
      Kind.GAUGE,
      null,
      List.of(MetricLabels.PARTITION_ID, MetricLabels.TASK_NAME),
      "Samples with at least one produced field / samples, per partition, for \"all\" and each task"),
  /** Consumed samples / samples, per partition and task. */
  PARTITION_CONSUMPTION_PROGRESS(
      "tq.partition.consumption.progress",
      "tq_partition_consumption_progress",
      Kind.GAUGE,
      null,
      List.of(MetricLabels.PARTITION_ID, MetricLabels.TASK_NAME),
      "Consumed samples / samples, per partition and task"),
  /** Global indexes owned by a partition. */
  INDEXES_ALLOCATED(
      "tq.global.index.allocated.total",
      "tq_global_index_allocated_total",
      Kind.GAUGE,
      null,
      List.of(),
      "Global indexes owned by a partition"),
  /** Released global indexes waiting for reuse. */
  INDEXES_REUSABLE(
      "tq.global.index.reusable.total",
      "tq_global_index_reusable_total",
      Kind.GAUGE,
      null,
      List.of(),
      "Released global indexes waiting for reuse"),
  /** Controller requests handled. */
  CONTROLLER_REQUESTS(
      "tq.controller.request",
      "tq_controller_request_total",
      Kind.COUNTER,
      null,
      List.of(MetricLabels.OP_TYPE),
      "Controller requests handled"),
  /** Controller request latency, a histogram with {@link #DURATION_BUCKETS}. */
  CONTROLLER_REQUEST_DURATION(
      "tq.controller.request.duration",
      "tq_controller_request_duration_seconds",
      Kind.HISTOGRAM,
      "seconds",
      List.of(MetricLabels.OP_TYPE),
      "Controller request handling latency"),
  /** Controller requests that failed. */
  CONTROLLER_REQUEST_ERRORS(
      "tq.controller.request.errors",
      "tq_controller_request_errors_total",
      Kind.COUNTER,
      null,
      List.of(MetricLabels.OP_TYPE),
      "Controller requests that failed"),
  /** Samples produced ({@code NOTIFY_DATA_UPDATE}) or cleared ({@code CLEAR_META}). */
  CONTROLLER_REQUEST_SAMPLES(
      "tq.controller.request.samples",
      "tq_controller_request_samples_total",
      Kind.COUNTER,
      null,
      List.of(MetricLabels.OP_TYPE),
      "Samples produced (NOTIFY_DATA_UPDATE) or cleared (CLEAR_META)"),
  /** Unit capacity in samples; absent when unlimited. */
  STORAGE_CAPACITY(
      "tq.storage.capacity.total",
      "tq_storage_capacity_total",
      Kind.GAUGE,
      null,
      List.of(MetricLabels.STORAGE_UNIT_ID),
      "Unit capacity in samples; absent when unlimited"),
  /** Samples stored in the unit. */
  STORAGE_ACTIVE_KEYS(
      "tq.storage.active.keys.total",
      "tq_storage_active_keys_total",
      Kind.GAUGE,
      null,
      List.of(MetricLabels.STORAGE_UNIT_ID),
      "Samples stored in the unit"),
  /** Active keys / capacity (0 for capacity 0); absent when unlimited. */
  STORAGE_UTILIZATION(
      "tq.storage.utilization.ratio",
      "tq_storage_utilization_ratio",
      Kind.GAUGE,
      null,
      List.of(MetricLabels.STORAGE_UNIT_ID),
      "Active keys / capacity (0 for capacity 0); absent when unlimited"),
  /** Resident memory of the unit's process. */
  STORAGE_MEMORY_RSS(
      "tq.storage.memory.rss",
      "tq_storage_memory_rss_bytes",
      Kind.GAUGE,
      "bytes",
      List.of(MetricLabels.STORAGE_UNIT_ID),
      "Resident memory of the unit's process"),
  /** The unit's request count, copied at collection. */
  STORAGE_REQUEST_OPS(
      "tq.storage.request.ops",
      "tq_storage_request_ops",
      Kind.GAUGE,
      null,
      List.of(MetricLabels.STORAGE_UNIT_ID, MetricLabels.OP_TYPE),
      "The unit's request count, copied at collection"),
  /** Mean unit request latency in seconds. */
  STORAGE_REQUEST_LATENCY_AVG(
      "tq.storage.request.latency.avg",
      "tq_storage_request_latency_avg",
      Kind.GAUGE,
      null,
      List.of(MetricLabels.STORAGE_UNIT_ID, MetricLabels.OP_TYPE),
      "Mean unit request latency in seconds"),
  /** Median unit request latency in seconds, interpolated in the unit's histogram. */
  STORAGE_REQUEST_LATENCY_P50(
      "tq.storage.request.latency.p50",
      "tq_storage_request_latency_p50",
      Kind.GAUGE,
      null,
      List.of(MetricLabels.STORAGE_UNIT_ID, MetricLabels.OP_TYPE),
      "Median unit request latency in seconds, interpolated in the unit's histogram"),
  /** 99th percentile unit request latency in seconds, interpolated in the unit's histogram. */
  STORAGE_REQUEST_LATENCY_P99(
      "tq.storage.request.latency.p99",
      "tq_storage_request_latency_p99",
      Kind.GAUGE,
      null,
      List.of(MetricLabels.STORAGE_UNIT_ID, MetricLabels.OP_TYPE),
      "99th percentile unit request latency in seconds, interpolated in the unit's histogram"),
  /** Storage unit requests handled. */
  STORAGE_REQUESTS(
      "tq.storage.request",
      "tq_storage_request_total",
      Kind.COUNTER,
      null,
      List.of(MetricLabels.STORAGE_UNIT_ID, MetricLabels.OP_TYPE),
      "Storage unit requests handled"),
  /** Storage unit request latency, a histogram with {@link #DURATION_BUCKETS}. */
  STORAGE_REQUEST_DURATION(
      "tq.storage.request.duration",
      "tq_storage_request_duration_seconds",
      Kind.HISTOGRAM,
      "seconds",
      List.of(MetricLabels.STORAGE_UNIT_ID, MetricLabels.OP_TYPE),
      "Storage unit request latency"),
  /** Storage unit requests that failed. */
  STORAGE_REQUEST_ERRORS(
      "tq.storage.request.errors",
      "tq_storage_request_errors_total",
      Kind.COUNTER,
      null,
      List.of(MetricLabels.STORAGE_UNIT_ID, MetricLabels.OP_TYPE),
      "Storage unit requests that failed"),
  /** Samples processed by storage unit requests. */
  STORAGE_REQUEST_SAMPLES(
      "tq.storage.request.samples",
      "tq_storage_request_samples_total",
      Kind.COUNTER,
      null,
      List.of(MetricLabels.STORAGE_UNIT_ID, MetricLabels.OP_TYPE),
      "Samples processed by storage unit requests");

  /** What a meter is. */
  public enum Kind {
    /** A value that goes up and down. */
    GAUGE,
    /** A monotonic count. */
    COUNTER,
    /** A latency histogram (Micrometer timer). */
    HISTOGRAM
  }

  /** The bucket bounds of both request duration histograms: 1 ms to 5 s. */
  public static final List<Duration> DURATION_BUCKETS =
      List.of(
          Duration.ofMillis(1),
          Duration.ofMillis(5),
          Duration.ofMillis(10),
          Duration.ofMillis(25),
          Duration.ofMillis(50),
          Duration.ofMillis(100),
          Duration.ofMillis(250),
          Duration.ofMillis(500),
          Duration.ofSeconds(1),
          Duration.ofSeconds(5));

  private final String meterName;
  private final String prometheusName;
  private final Kind kind;
  private final String baseUnit;
  private final List<String> labels;
  private final String description;

  MetricDescriptor(
      String meterName,
      String prometheusName,
      Kind kind,
      String baseUnit,
      List<String> labels,
      String description) {
    this.meterName = meterName;
    this.prometheusName = prometheusName;
    this.kind = kind;
    this.baseUnit = baseUnit;
    this.labels = labels;
    this.description = description;
  }

  /**
   * What the meter shows, as its help text.
   *
   * @return one sentence
   */
  public String description() {
    return description;
  }

  /**
   * The Micrometer meter name.
   *
   * @return the name, such as {@code tq.partitions.total}
   */
  public String meterName() {
    return meterName;
  }

  /**
   * The name a Prometheus scrape shows (for a histogram, the base of its {@code _bucket}, {@code
   * _count} and {@code _sum} series).
   *
   * @return the name, such as {@code tq_partitions_total}
   */
  public String prometheusName() {
    return prometheusName;
  }

  /**
   * The kind of meter.
   *
   * @return the kind
   */
  public Kind kind() {
    return kind;
  }

  /**
   * The Micrometer base unit.
   *
   * @return {@code seconds}, {@code bytes} or null
   */
  public String baseUnit() {
    return baseUnit;
  }

  /**
   * The label keys, in the order the specification lists them.
   *
   * @return the keys
   */
  public List<String> labels() {
    return labels;
  }
}
