package org.transferqueue.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.transferqueue.Clock;
import org.transferqueue.ErrorHandler;
import org.transferqueue.Threads;
import org.transferqueue.controller.ControllerStatistics;
import org.transferqueue.controller.PartitionStatistics;

/**
 * Refreshes the gauges of the controller and of the storage units from snapshots: the controller's
 * {@link ControllerStatistics}, one {@link StorageUnitReport} per unit and the units' request
 * statistics.
 *
 * <p>Labelled gauges are replaced as a whole at each collection, so the series of a partition that
 * was cleared, or the capacity and utilisation series of a unit that became unlimited, disappear at
 * the next collection. Each step is guarded: a failing unit probe skips that unit only, and any
 * failure goes to the {@link ErrorHandler}.
 *
 * <p>Thread-safe: collections are serialised; gauges read values published by the last one. {@link
 * #start} runs collections periodically on one daemon thread until {@link #close()}; {@link
 * #refresh} runs one on that thread at once (a Prometheus endpoint calls it before each scrape, so
 * a scrape shows the state at scrape time rather than at the last periodic collection).
 */
public final class MetricsCollector implements AutoCloseable {
  /**
   * How long a scrape waits for {@link #refresh} before it shows the gauges' previous values: well
   * below a scraper's usual timeout (Prometheus: 10 s), far above a collection's usual time.
   */
  public static final Duration SCRAPE_REFRESH_DEADLINE = Duration.ofSeconds(2);

  /** Null for a collector of storage-unit gauges only ({@link #forStorageUnits}). */
  private final Supplier<ControllerStatistics> controllerStatistics;

  private final List<StorageUnitProbe> probes;
  private final StorageRequestMeters storageRequests;
  private final Clock nanoClock;
  private final LongSupplier rssBytes;
  private final ErrorHandler errors;
  private final long startNanos;

  private final MultiGauge partitionSamples;
  private final MultiGauge productionProgress;
  private final MultiGauge consumptionProgress;
  private final MultiGauge storageCapacity;
  private final MultiGauge storageActiveKeys;
  private final MultiGauge storageUtilization;
  private final MultiGauge storageRss;
  private final MultiGauge storageRequestOps;
  private final MultiGauge storageLatencyAvg;
  private final MultiGauge storageLatencyP50;
  private final MultiGauge storageLatencyP99;

  // Written by the collecting thread under this, read by gauges on any thread.
  private volatile double uptimeSeconds;
  private volatile double controllerRss;
  private volatile double partitions;
  private volatile double allocatedIndexes;
  private volatile double reusableIndexes;

  /** Runs every collection but {@link #collectNow} called directly; its thread starts lazily. */
  private final ScheduledExecutorService collecting =
      Executors.newSingleThreadScheduledExecutor(Threads.namedDaemon("tq-metrics-collector"));

  /** Guards {@link #queued} and {@link #started}. */
  private final Object refreshLock = new Object();

  /** A refresh collection submitted and not begun yet, which later refreshes join; or null. */
  private CompletableFuture<Void> queued;

  private boolean started;

  /**
   * Registers the gauges; they read 0 (and labelled ones are absent) until the first collection.
   *
   * @param registry where the gauges live
   * @param controllerStatistics takes the controller's statistics
   * @param probes one per storage unit
   * @param storageRequests the units' request meters, or null when storage requests are not
   *     measured
   * @param nanoClock a monotonic clock in nanoseconds; uptime counts from this constructor
   * @param rssBytes the process's resident memory
   * @param errors receives failures
   */
  public MetricsCollector(
      MeterRegistry registry,
      Supplier<ControllerStatistics> controllerStatistics,
      List<StorageUnitProbe> probes,
      StorageRequestMeters storageRequests,
      Clock nanoClock,
      LongSupplier rssBytes,
      ErrorHandler errors) {
    this(
        registry,
        Objects.requireNonNull(controllerStatistics, "statistics"),
        probes,
        storageRequests,
        nanoClock,
        rssBytes,
        errors,
        true);
  }

  /**
   * A collector of storage-unit gauges only (capacity, active keys, utilisation, memory), for a
   * process that serves storage units without a controller: the controller and partition gauges are
   * not registered.
   *
   * @param registry where the gauges live
   * @param probes one per storage unit
   * @param errors receives failures
   * @return the collector
   */
  public static MetricsCollector forStorageUnits(
      MeterRegistry registry, List<StorageUnitProbe> probes, ErrorHandler errors) {
    return new MetricsCollector(
        registry, null, probes, null, Clock.SYSTEM, ProcessMemory::rssBytes, errors, false);
  }

  private MetricsCollector(
      MeterRegistry registry,
      Supplier<ControllerStatistics> controllerStatistics,
      List<StorageUnitProbe> probes,
      StorageRequestMeters storageRequests,
      Clock nanoClock,
      LongSupplier rssBytes,
      ErrorHandler errors,
      boolean controllerGauges) {
    Objects.requireNonNull(registry, "registry");
    this.controllerStatistics = controllerStatistics;
    this.probes = List.copyOf(probes);
    this.storageRequests = storageRequests;
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    this.rssBytes = Objects.requireNonNull(rssBytes, "rssBytes");
    this.errors = Objects.requireNonNull(errors, "errors");
    this.startNanos = nanoClock.nanoTime();

    if (controllerGauges) {
      gauge(registry, MetricDescriptor.CONTROLLER_UPTIME, () -> uptimeSeconds);
      gauge(registry, MetricDescriptor.CONTROLLER_MEMORY_RSS, () -> controllerRss);
      gauge(registry, MetricDescriptor.PARTITIONS, () -> partitions);
      gauge(registry, MetricDescriptor.INDEXES_ALLOCATED, () -> allocatedIndexes);
      gauge(registry, MetricDescriptor.INDEXES_REUSABLE, () -> reusableIndexes);
      partitionSamples = multi(registry, MetricDescriptor.PARTITION_SAMPLES);
      productionProgress = multi(registry, MetricDescriptor.PARTITION_PRODUCTION_PROGRESS);
      consumptionProgress = multi(registry, MetricDescriptor.PARTITION_CONSUMPTION_PROGRESS);
    } else {
      partitionSamples = null;
      productionProgress = null;
      consumptionProgress = null;
    }
    storageCapacity = multi(registry, MetricDescriptor.STORAGE_CAPACITY);
    storageActiveKeys = multi(registry, MetricDescriptor.STORAGE_ACTIVE_KEYS);
    storageUtilization = multi(registry, MetricDescriptor.STORAGE_UTILIZATION);
    storageRss = multi(registry, MetricDescriptor.STORAGE_MEMORY_RSS);
    storageRequestOps = multi(registry, MetricDescriptor.STORAGE_REQUEST_OPS);
    storageLatencyAvg = multi(registry, MetricDescriptor.STORAGE_REQUEST_LATENCY_AVG);
    storageLatencyP50 = multi(registry, MetricDescriptor.STORAGE_REQUEST_LATENCY_P50);
    storageLatencyP99 = multi(registry, MetricDescriptor.STORAGE_REQUEST_LATENCY_P99);
  }

  private static void gauge(
      MeterRegistry registry, MetricDescriptor descriptor, Supplier<Number> value) {
    Gauge.builder(descriptor.meterName(), value)
        .description(descriptor.description())
        .baseUnit(descriptor.baseUnit())
        .register(registry);
  }

  private static MultiGauge multi(MeterRegistry registry, MetricDescriptor descriptor) {
    return MultiGauge.builder(descriptor.meterName())
        .description(descriptor.description())
        .baseUnit(descriptor.baseUnit())
        .register(registry);
  }

  /** Refreshes every gauge now. Never throws; failures go to the error handler. */
  public synchronized void collectNow() {
    if (controllerStatistics != null) {
      try {
        uptimeSeconds = (nanoClock.nanoTime() - startNanos) / 1e9;
        controllerRss = rssBytes.getAsLong();
      } catch (RuntimeException e) {
        errors.onError("process gauges", e);
      }
      try {
        collectController(controllerStatistics.get());
      } catch (RuntimeException e) {
        errors.onError("controller statistics", e);
      }
    }
    try {
      collectStorage();
    } catch (RuntimeException e) {
      errors.onError("storage gauges", e);
    }
  }

  private void collectController(ControllerStatistics stats) {
    List<MultiGauge.Row<?>> samples = new ArrayList<>();
    List<MultiGauge.Row<?>> production = new ArrayList<>();
    List<MultiGauge.Row<?>> consumption = new ArrayList<>();
    for (PartitionStatistics p : stats.partitions()) {
      String id = p.partitionId();
      samples.add(MultiGauge.Row.of(Tags.of(MetricLabels.PARTITION_ID, id), p.totalSamples()));
      production.add(row(id, MetricLabels.ALL_TASKS, p.productionProgress()));
      for (String task : p.registeredTasks()) {
        production.add(row(id, task, p.productionProgress()));
        consumption.add(row(id, task, p.consumptionProgress(task)));
      }
    }
    partitionSamples.register(samples, true);
    productionProgress.register(production, true);
    consumptionProgress.register(consumption, true);
    partitions = stats.partitions().size();
    allocatedIndexes = stats.allocatedIndexes();
    reusableIndexes = stats.reusableIndexes();
  }

  private static MultiGauge.Row<?> row(String partitionId, String task, double value) {
    return MultiGauge.Row.of(
        Tags.of(MetricLabels.PARTITION_ID, partitionId, MetricLabels.TASK_NAME, task), value);
  }

  private void collectStorage() {
    List<MultiGauge.Row<?>> capacity = new ArrayList<>();
    List<MultiGauge.Row<?>> active = new ArrayList<>();
    List<MultiGauge.Row<?>> utilization = new ArrayList<>();
    List<MultiGauge.Row<?>> rss = new ArrayList<>();
    List<MultiGauge.Row<?>> ops = new ArrayList<>();
    List<MultiGauge.Row<?>> avg = new ArrayList<>();
    List<MultiGauge.Row<?>> p50 = new ArrayList<>();
    List<MultiGauge.Row<?>> p99 = new ArrayList<>();
    for (StorageUnitProbe probe : probes) {
      StorageUnitReport report;
      try {
        report = probe.probe();
      } catch (RuntimeException e) {
        errors.onError("storage unit probe", e);
        continue;
      }
      Tags unit = Tags.of(MetricLabels.STORAGE_UNIT_ID, report.unitId());
      active.add(MultiGauge.Row.of(unit, report.activeKeys()));
      rss.add(MultiGauge.Row.of(unit, report.rssBytes()));
      if (report.capacity().isPresent()) {
        long cap = report.capacity().getAsLong();
        capacity.add(MultiGauge.Row.of(unit, cap));
        utilization.add(
            MultiGauge.Row.of(unit, cap == 0 ? 0.0 : (double) report.activeKeys() / cap));
      }
    }
    if (storageRequests != null) {
      for (String unitId : storageRequests.unitIds()) {
        for (Map.Entry<StorageOp, StorageOpStats> e : storageRequests.opStats(unitId).entrySet()) {
          Tags tags =
              Tags.of(
                  MetricLabels.STORAGE_UNIT_ID, unitId, MetricLabels.OP_TYPE, e.getKey().name());
          StorageOpStats s = e.getValue();
          ops.add(MultiGauge.Row.of(tags, s.requestCount()));
          avg.add(MultiGauge.Row.of(tags, s.latencyAvgSeconds()));
          p50.add(MultiGauge.Row.of(tags, s.latencyP50Seconds()));
          p99.add(MultiGauge.Row.of(tags, s.latencyP99Seconds()));
        }
      }
    }
    storageCapacity.register(capacity, true);
    storageActiveKeys.register(active, true);
    storageUtilization.register(utilization, true);
    storageRss.register(rss, true);
    storageRequestOps.register(ops, true);
    storageLatencyAvg.register(avg, true);
    storageLatencyP50.register(p50, true);
    storageLatencyP99.register(p99, true);
  }

  /**
   * Collects now and then every {@code interval} on a daemon thread, until {@link #close()}.
   *
   * @param interval the period, positive
   * @throws IllegalStateException if already started
   */
  public void start(Duration interval) {
    synchronized (refreshLock) {
      if (started) {
        throw new IllegalStateException("the collector is already started");
      }
      started = true;
    }
    long periodNanos = interval.toNanos();
    collecting.scheduleAtFixedRate(this::collectNow, 0, periodNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Brings every gauge up to the state at this call, waiting at most {@code deadline}: a collection
   * that begins after this call, on the collector's thread, whose results the gauges show once it
   * is done. Concurrent callers share one collection, so a burst of scrapes takes the controller's
   * statistics once; a collection already running when this is called does not count (it may have
   * read the state before the change the caller wants to see).
   *
   * @param deadline how long to wait; past it the gauges keep their previous values and the
   *     collection still completes in the background
   * @return true if the gauges now reflect the state at the call; false past the deadline, after
   *     {@link #close()}, or when the calling thread is interrupted (its flag is kept)
   */
  public boolean refresh(Duration deadline) {
    CompletableFuture<Void> done;
    synchronized (refreshLock) {
      if (queued == null) {
        CompletableFuture<Void> next = new CompletableFuture<>();
        try {
          collecting.execute(
              () -> {
                synchronized (refreshLock) {
                  if (queued == next) {
                    queued = null;
                  }
                }
                try {
                  collectNow();
                  next.complete(null);
                } catch (RuntimeException | Error e) {
                  next.completeExceptionally(e);
                  throw e;
                }
              });
        } catch (RejectedExecutionException e) {
          return false; // closed
        }
        queued = next;
      }
      done = queued;
    }
    try {
      done.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      errors.onError(
          "metrics refresh",
          new TimeoutException(
              "collection took longer than " + deadline + "; the gauges keep their last values"));
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException e) {
      // collectNow reports its own failures; an Error escaping it is reported here.
      errors.onError("metrics refresh", e.getCause());
      return false;
    } catch (CancellationException e) {
      return false; // closed while waiting
    }
  }

  /**
   * Stops periodic collection and refreshes. Idempotent; the gauges stay registered with their last
   * values.
   */
  @Override
  public void close() {
    collecting.shutdownNow();
    synchronized (refreshLock) {
      if (queued != null) {
        queued.cancel(false);
        queued = null;
      }
    }
  }
}
