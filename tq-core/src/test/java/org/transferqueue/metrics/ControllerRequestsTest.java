package org.transferqueue.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.transferqueue.DistinctErrorLog;

class ControllerRequestsTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final AtomicLong clock = new AtomicLong();
  private final DistinctErrorLog errors =
      new DistinctErrorLog(System.getLogger(getClass().getName()));
  private final ControllerRequests requests =
      new ControllerRequests(new ControllerRequestMeters(registry), clock::get, errors);

  private double count(String name, ControllerOp op) {
    return registry.get(name).tag(MetricLabels.OP_TYPE, op.name()).counter().count();
  }

  private Timer timer(ControllerOp op) {
    return registry
        .get(MetricDescriptor.CONTROLLER_REQUEST_DURATION.meterName())
        .tag(MetricLabels.OP_TYPE, op.name())
        .timer();
  }

  @Test
  void H119_shouldCountAndTimeARequest() {
    String result =
        requests.measure(
            ControllerOp.GET_META,
            () -> {
              clock.addAndGet(3_000_000);
              return "meta";
            });
    assertThat(result).isEqualTo("meta");
    assertThat(count(MetricDescriptor.CONTROLLER_REQUESTS.meterName(), ControllerOp.GET_META))
        .isEqualTo(1);
    assertThat(timer(ControllerOp.GET_META).count()).isEqualTo(1);
    assertThat(timer(ControllerOp.GET_META).totalTime(TimeUnit.NANOSECONDS)).isEqualTo(3_000_000);
    assertThat(count(MetricDescriptor.CONTROLLER_REQUEST_ERRORS.meterName(), ControllerOp.GET_META))
        .isZero();
  }

  @Test
  void H119_shouldCountAFailedRequestAsErrorAndRethrow() {
    IllegalStateException boom = new IllegalStateException("BAD_OP");
    assertThatThrownBy(
            () ->
                requests.measure(
                    ControllerOp.CLEAR_META,
                    () -> {
                      throw boom;
                    }))
        .isSameAs(boom);
    assertThat(count(MetricDescriptor.CONTROLLER_REQUESTS.meterName(), ControllerOp.CLEAR_META))
        .isEqualTo(1);
    assertThat(
            count(MetricDescriptor.CONTROLLER_REQUEST_ERRORS.meterName(), ControllerOp.CLEAR_META))
        .isEqualTo(1);
    assertThat(
            count(MetricDescriptor.CONTROLLER_REQUEST_SAMPLES.meterName(), ControllerOp.CLEAR_META))
        .isZero();
  }

  @Test
  void H119_shouldKeepSeparateTotalsPerOpType() {
    for (int i = 0; i < 3; i++) {
      requests.measure(ControllerOp.GET_META, () -> 1);
    }
    for (int i = 0; i < 2; i++) {
      requests.run(ControllerOp.CLEAR_PARTITION, () -> {});
    }
    assertThat(count(MetricDescriptor.CONTROLLER_REQUESTS.meterName(), ControllerOp.GET_META))
        .isEqualTo(3);
    assertThat(
            count(MetricDescriptor.CONTROLLER_REQUESTS.meterName(), ControllerOp.CLEAR_PARTITION))
        .isEqualTo(2);
    assertThat(count(MetricDescriptor.CONTROLLER_REQUESTS.meterName(), ControllerOp.KV_LIST))
        .isZero();
  }

  @Test
  void shouldCountSamplesOfASuccessfulRequest() {
    requests.measure(ControllerOp.NOTIFY_DATA_UPDATE, () -> 8, n -> n);
    assertThat(
            count(
                MetricDescriptor.CONTROLLER_REQUEST_SAMPLES.meterName(),
                ControllerOp.NOTIFY_DATA_UPDATE))
        .isEqualTo(8);
  }

  @Test
  void shouldRegisterEveryOpTypeFromTheStart() {
    for (ControllerOp op : ControllerOp.values()) {
      assertThat(
              registry
                  .find(MetricDescriptor.CONTROLLER_REQUESTS.meterName())
                  .tag("op_type", op.name())
                  .counter())
          .as(op.name())
          .isNotNull();
    }
  }

  @Test
  void shouldPassTheResultOnWhenTheHandlerFails() {
    ControllerRequests failing =
        new ControllerRequests(
            (op, nanos, samples, failed) -> {
              throw new IllegalStateException("meter broken");
            },
            clock::get,
            errors);
    assertThat(failing.measure(ControllerOp.GET_META, () -> "meta")).isEqualTo("meta");
    IllegalArgumentException original = new IllegalArgumentException("bad request");
    assertThatThrownBy(
            () ->
                failing.measure(
                    ControllerOp.GET_META,
                    () -> {
                      throw original;
                    }))
        .isSameAs(original);
    assertThat(errors.errorCount()).isEqualTo(2);
  }

  @Test
  void shouldPassTheResultOnWhenTheSampleCountFails() {
    Integer result =
        requests.measure(
            ControllerOp.CLEAR_META,
            () -> 3,
            n -> {
              throw new ArithmeticException("count broken");
            });
    assertThat(result).isEqualTo(3);
    assertThat(errors.errorCount()).isEqualTo(1);
  }

  @Test
  void shouldRunCallsDirectlyWhenNotMeasuring() {
    assertThat(ControllerRequests.NOOP.measure(ControllerOp.GET_META, () -> "x")).isEqualTo("x");
    Counter unused = registry.find(MetricDescriptor.CONTROLLER_REQUESTS.meterName()).counter();
    assertThat(unused.count()).isZero();
  }
}
