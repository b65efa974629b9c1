package org.transferqueue.metrics;

import java.time.Duration;
import java.util.List;

/**
 * Meter names and label keys. Each constant is the Micrometer name; the comment gives the name a
 * Prometheus scrape shows (base units and the {@code _total} suffix of counters are added by the
 * Prometheus naming convention; {@code tq-server}'s endpoint keeps the {@code _total} of the gauges
 * that carry it upstream).
 */
public final class MetricNames {
  private MetricNames() {}

  /** Label: the partition. */
  public static final String PARTITION_ID = "partition_id";

  /** Label: the task, {@code all} for the production progress over all tasks. */
  public static final String TASK_NAME = "task_name";

  /** Label: the request type ({@link ControllerOp} or {@link StorageOp}). */
  public static final String OP_TYPE = "op_type";

  /** Label: the storage unit. */
  public static final String STORAGE_UNIT_ID = "storage_unit_id";

  /** The {@code task_name} of production progress over all tasks. */
  public static final String ALL_TASKS = "all";

  /** {@code tq_controller_uptime_seconds}: seconds since the metrics started. */
  public static final String CONTROLLER_UPTIME = "tq.controller.uptime";

  /** {@code tq_controller_memory_rss_bytes}: resident memory of the controller's process. */
  public static final String CONTROLLER_MEMORY_RSS = "tq.controller.memory.rss";

  /** {@code tq_partitions_total}: the number of partitions. */
  public static final String PARTITIONS = "tq.partitions.total";

  /** {@code tq_partition_samples_total}: active samples per partition. */
  public static final String PARTITION_SAMPLES = "tq.partition.samples.total";

  /** {@code tq_partition_production_progress}: share of samples with a produced field. */
  public static final String PARTITION_PRODUCTION_PROGRESS = "tq.partition.production.progress";

  /** {@code tq_partition_consumption_progress}: share of samples a task consumed. */
  public static final String PARTITION_CONSUMPTION_PROGRESS = "tq.partition.consumption.progress";

  /** {@code tq_global_index_allocated_total}: global indexes owned by a partition. */
  public static final String INDEXES_ALLOCATED = "tq.global.index.allocated.total";

  /** {@code tq_global_index_reusable_total}: released indexes waiting for reuse. */
  public static final String INDEXES_REUSABLE = "tq.global.index.reusable.total";

  /** {@code tq_controller_request_total}: controller requests. */
  public static final String CONTROLLER_REQUESTS = "tq.controller.request";

  /** {@code tq_controller_request_duration_seconds}: controller request latency histogram. */
  public static final String CONTROLLER_REQUEST_DURATION = "tq.controller.request.duration";

  /** {@code tq_controller_request_errors_total}: controller requests that failed. */
  public static final String CONTROLLER_REQUEST_ERRORS = "tq.controller.request.errors";

  /** {@code tq_controller_request_samples_total}: samples produced or cleared. */
  public static final String CONTROLLER_REQUEST_SAMPLES = "tq.controller.request.samples";

  /** {@code tq_storage_capacity_total}: unit capacity in samples; absent when unlimited. */
  public static final String STORAGE_CAPACITY = "tq.storage.capacity.total";

  /** {@code tq_storage_active_keys_total}: samples stored in the unit. */
  public static final String STORAGE_ACTIVE_KEYS = "tq.storage.active.keys.total";

  /** {@code tq_storage_utilization_ratio}: active keys / capacity; absent when unlimited. */
  public static final String STORAGE_UTILIZATION = "tq.storage.utilization.ratio";

  /** {@code tq_storage_memory_rss_bytes}: resident memory of the unit's process. */
  public static final String STORAGE_MEMORY_RSS = "tq.storage.memory.rss";

  /** {@code tq_storage_request_ops}: the unit's request count, copied at collection. */
  public static final String STORAGE_REQUEST_OPS = "tq.storage.request.ops";

  /** {@code tq_storage_request_latency_avg}: mean unit request latency, seconds. */
  public static final String STORAGE_REQUEST_LATENCY_AVG = "tq.storage.request.latency.avg";

  /** {@code tq_storage_request_latency_p50}: median unit request latency, seconds. */
  public static final String STORAGE_REQUEST_LATENCY_P50 = "tq.storage.request.latency.p50";

  /** {@code tq_storage_request_latency_p99}: 99th percentile unit request latency, seconds. */
  public static final String STORAGE_REQUEST_LATENCY_P99 = "tq.storage.request.latency.p99";

  /** {@code tq_storage_request_total}: storage unit requests. */
  public static final String STORAGE_REQUESTS = "tq.storage.request";

  /** {@code tq_storage_request_duration_seconds}: storage unit request latency histogram. */
  public static final String STORAGE_REQUEST_DURATION = "tq.storage.request.duration";

  /** {@code tq_storage_request_errors_total}: storage unit requests that failed. */
  public static final String STORAGE_REQUEST_ERRORS = "tq.storage.request.errors";

  /** {@code tq_storage_request_samples_total}: samples a storage unit processed. */
  public static final String STORAGE_REQUEST_SAMPLES = "tq.storage.request.samples";

  /** The histogram bucket bounds of both request duration histograms. */
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
}
