package org.transferqueue.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The request meters of storage units: per unit and {@code op_type} a request counter, a latency
 * histogram, an error counter and a sample counter (labelled {@code storage_unit_id} as well, since
 * the units of an embedded system share one registry), plus a {@link LatencyHistogram} from which
 * the unit's {@link StorageOpStats} are computed.
 *
 * <p>Thread-safe; the set of units is fixed at creation.
 */
public final class StorageRequestMeters {
  private final Map<String, Map<StorageOp, Meters>> units = new LinkedHashMap<>();

  private record Meters(
      Counter requests,
      Timer duration,
      Counter errors,
      Counter samples,
      LatencyHistogram histogram) {}

  /**
   * Registers the meters of every unit.
   *
   * @param registry where the meters live
   * @param unitIds the units
   */
  public StorageRequestMeters(MeterRegistry registry, List<String> unitIds) {
    Objects.requireNonNull(registry, "registry");
    for (String unit : unitIds) {
      Map<StorageOp, Meters> perOp = new EnumMap<>(StorageOp.class);
      for (StorageOp op : StorageOp.values()) {
        Tags tags = Tags.of(MetricLabels.STORAGE_UNIT_ID, unit, MetricLabels.OP_TYPE, op.name());
        perOp.put(
            op,
            new Meters(
                Counter.builder(MetricDescriptor.STORAGE_REQUESTS.meterName())
                    .description(MetricDescriptor.STORAGE_REQUESTS.description())
                    .tags(tags)
                    .register(registry),
                Timer.builder(MetricDescriptor.STORAGE_REQUEST_DURATION.meterName())
                    .description(MetricDescriptor.STORAGE_REQUEST_DURATION.description())
                    .tags(tags)
                    .serviceLevelObjectives(
                        MetricDescriptor.DURATION_BUCKETS.toArray(Duration[]::new))
                    .register(registry),
                Counter.builder(MetricDescriptor.STORAGE_REQUEST_ERRORS.meterName())
                    .description(MetricDescriptor.STORAGE_REQUEST_ERRORS.description())
                    .tags(tags)
                    .register(registry),
                Counter.builder(MetricDescriptor.STORAGE_REQUEST_SAMPLES.meterName())
                    .description(MetricDescriptor.STORAGE_REQUEST_SAMPLES.description())
                    .tags(tags)
                    .register(registry),
                new LatencyHistogram(MetricDescriptor.DURATION_BUCKETS)));
      }
      units.put(unit, perOp);
    }
  }

  /**
   * The units, in the order given at creation.
   *
   * @return the unit ids
   */
  public List<String> unitIds() {
    return List.copyOf(units.keySet());
  }

  /**
   * Records one request of one unit.
   *
   * @param unitId the unit; unknown units are ignored
   * @param op the request type
   * @param durationNanos how long it took
   * @param samples the samples it processed
   * @param failed whether it failed
   */
  public void record(
      String unitId, StorageOp op, long durationNanos, long samples, boolean failed) {
    Map<StorageOp, Meters> perOp = units.get(unitId);
    if (perOp == null) {
      return;
    }
    Meters m = perOp.get(op);
    m.requests.increment();
    m.duration.record(Math.max(0, durationNanos), TimeUnit.NANOSECONDS);
    m.histogram.record(durationNanos);
    if (failed) {
      m.errors.increment();
    }
    if (samples > 0) {
      m.samples.increment(samples);
    }
  }

  /**
   * The request statistics of one unit.
   *
   * @param unitId the unit
   * @return per request type, empty for an unknown unit
   */
  public Map<StorageOp, StorageOpStats> opStats(String unitId) {
    Map<StorageOp, Meters> perOp = units.get(unitId);
    Map<StorageOp, StorageOpStats> stats = new EnumMap<>(StorageOp.class);
    if (perOp != null) {
      perOp.forEach(
          (op, m) ->
              stats.put(
                  op,
                  new StorageOpStats(
                      m.histogram.count(),
                      m.histogram.meanSeconds(),
                      m.histogram.quantileSeconds(0.5),
                      m.histogram.quantileSeconds(0.99))));
    }
    return stats;
  }
}
