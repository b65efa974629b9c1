package org.transferqueue.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.transferqueue.Clock;
import org.transferqueue.DistinctErrorLog;
import org.transferqueue.controller.Controller;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.simple.SimpleStorageManager;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.storage.simple.StorageUnitStats;

/**
 * The meters of one embedded system, wired in two steps because the controller's request meters are
 * needed before storage exists (storage notifies the controller):
 *
 * <pre>{@code
 * SystemMetrics metrics = new SystemMetrics(registry, Clock.SYSTEM);
 * ControllerRequests requests = metrics.controllerRequests();    // wrap controller calls
 * StorageManager measured = metrics.attach(controller, storage); // per-unit request meters
 * metrics.collector().start(Duration.ofSeconds(10));             // or collectNow() in tests
 * }</pre>
 *
 * <p>Storage units: SimpleStorage's units report capacity, active keys and the process's RSS; any
 * other backend is measured as one unit named after the backend, with request meters only (its
 * occupancy is not known to this process). Thread-safe after {@link #attach}.
 */
public final class SystemMetrics implements AutoCloseable {
  private final MeterRegistry registry;
  private final Clock nanoClock;
  private final DistinctErrorLog errors =
      new DistinctErrorLog(System.getLogger(SystemMetrics.class.getName()));
  private final ControllerRequests controllerRequests;
  private volatile MetricsCollector collector;

  /**
   * Registers the controller request meters.
   *
   * @param registry where every meter lives; not closed by this object
   * @param nanoClock a monotonic clock in nanoseconds
   */
  public SystemMetrics(MeterRegistry registry, Clock nanoClock) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    this.controllerRequests =
        new ControllerRequests(new ControllerRequestMeters(registry), nanoClock, errors);
  }

  /**
   * The measuring wrapper for controller calls.
   *
   * @return the wrapper
   */
  public ControllerRequests controllerRequests() {
    return controllerRequests;
  }

  /**
   * Where failures of meters and collections go.
   *
   * @return the handler, with its count
   */
  public DistinctErrorLog errors() {
    return errors;
  }

  /**
   * Registers the storage and controller gauges and returns a measured view of {@code storage}.
   *
   * @param controller the controller whose statistics the gauges show
   * @param storage the storage manager
   * @return a manager measuring the requests of {@code storage}'s units; closing it closes {@code
   *     storage}
   * @throws IllegalStateException if called twice
   */
  public synchronized StorageManager attach(Controller controller, StorageManager storage) {
    Objects.requireNonNull(controller, "controller");
    Objects.requireNonNull(storage, "storage");
    if (collector != null) {
      throw new IllegalStateException("metrics are already attached to a system");
    }
    List<String> unitIds;
    List<StorageUnitProbe> probes;
    if (storage instanceof SimpleStorageManager simple) {
      unitIds = simple.units().stream().map(StorageUnit::id).toList();
      probes = simple.units().stream().map(SystemMetrics::probe).toList();
    } else {
      unitIds = List.of(storage.backendName());
      probes = List.of();
    }
    StorageRequestMeters storageMeters = new StorageRequestMeters(registry, unitIds);
    collector =
        new MetricsCollector(
            registry,
            controller::statistics,
            probes,
            storageMeters,
            nanoClock,
            ProcessMemory::rssBytes,
            errors);
    return new MeteredStorageManager(storage, storageMeters, nanoClock, errors);
  }

  private static StorageUnitProbe probe(StorageUnit unit) {
    return () -> {
      StorageUnitStats stats = unit.stats();
      return new StorageUnitReport(
          stats.unitId(), stats.capacitySamples(), stats.samples(), ProcessMemory.rssBytes());
    };
  }

  /**
   * The gauge collector.
   *
   * @return the collector
   * @throws IllegalStateException before {@link #attach}
   */
  public MetricsCollector collector() {
    MetricsCollector c = collector;
    if (c == null) {
      throw new IllegalStateException("metrics are not attached to a system yet");
    }
    return c;
  }

  /**
   * Collects once, then every {@code interval}.
   *
   * @param interval the period
   */
  public void start(Duration interval) {
    collector().start(interval);
  }

  /** Stops periodic collection. Idempotent. Meters stay in the registry. */
  @Override
  public void close() {
    MetricsCollector c = collector;
    if (c != null) {
      c.close();
    }
  }
}
