package org.transferqueue.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Records controller requests into Micrometer: per {@code op_type} a request counter, a latency
 * histogram with the buckets of {@link MetricDescriptor#DURATION_BUCKETS}, an error counter and a
 * sample counter. Every meter is registered when this object is created, so each series exists from
 * the start.
 *
 * <p>Thread-safe.
 */
public final class ControllerRequestMeters implements ControllerRequestHandler {
  private final Map<ControllerOp, Meters> meters = new EnumMap<>(ControllerOp.class);

  private record Meters(Counter requests, Timer duration, Counter errors, Counter samples) {}

  /**
   * Registers the meters.
   *
   * @param registry where the meters live
   */
  public ControllerRequestMeters(MeterRegistry registry) {
    for (ControllerOp op : ControllerOp.values()) {
      String tag = op.name();
      meters.put(
          op,
          new Meters(
              Counter.builder(MetricDescriptor.CONTROLLER_REQUESTS.meterName())
                  .description(MetricDescriptor.CONTROLLER_REQUESTS.description())
                  .tag(MetricLabels.OP_TYPE, tag)
                  .register(registry),
              Timer.builder(MetricDescriptor.CONTROLLER_REQUEST_DURATION.meterName())
                  .description(MetricDescriptor.CONTROLLER_REQUEST_DURATION.description())
                  .tag(MetricLabels.OP_TYPE, tag)
                  .serviceLevelObjectives(
                      MetricDescriptor.DURATION_BUCKETS.toArray(Duration[]::new))
                  .register(registry),
              Counter.builder(MetricDescriptor.CONTROLLER_REQUEST_ERRORS.meterName())
                  .description(MetricDescriptor.CONTROLLER_REQUEST_ERRORS.description())
                  .tag(MetricLabels.OP_TYPE, tag)
                  .register(registry),
              Counter.builder(MetricDescriptor.CONTROLLER_REQUEST_SAMPLES.meterName())
                  .description(MetricDescriptor.CONTROLLER_REQUEST_SAMPLES.description())
                  .tag(MetricLabels.OP_TYPE, tag)
                  .register(registry)));
    }
  }

  @Override
  public void onRequest(ControllerOp op, long durationNanos, long samples, boolean failed) {
    Meters m = meters.get(op);
    m.requests.increment();
    m.duration.record(Math.max(0, durationNanos), TimeUnit.NANOSECONDS);
    if (failed) {
      m.errors.increment();
    }
    if (samples > 0) {
      m.samples.increment(samples);
    }
  }
}
