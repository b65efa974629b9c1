package org.transferqueue.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class LatencyHistogramTest {
  private static final long MS = 1_000_000L;

  @Test
  void shouldReportZeroWhenEmpty() {
    LatencyHistogram h = new LatencyHistogram(MetricDescriptor.DURATION_BUCKETS);
    assertThat(h.count()).isZero();
    assertThat(h.meanSeconds()).isZero();
    assertThat(h.quantileSeconds(0.5)).isZero();
  }

  @Test
  void shouldInterpolateInsideTheBucketHoldingTheRank() {
    LatencyHistogram h =
        new LatencyHistogram(List.of(Duration.ofMillis(10), Duration.ofMillis(20)));
    // 4 observations in (0, 10 ms], 4 in (10, 20 ms]
    for (int i = 0; i < 4; i++) {
      h.record(5 * MS);
      h.record(15 * MS);
    }
    assertThat(h.count()).isEqualTo(8);
    assertThat(h.meanSeconds()).isCloseTo(0.010, within(1e-12));
    // rank 4 of 8 is the top of the first bucket
    assertThat(h.quantileSeconds(0.5)).isCloseTo(0.010, within(1e-12));
    // rank 6 is half way through the second bucket
    assertThat(h.quantileSeconds(0.75)).isCloseTo(0.015, within(1e-12));
    // rank 2 is half way through the first bucket
    assertThat(h.quantileSeconds(0.25)).isCloseTo(0.005, within(1e-12));
  }

  @Test
  void shouldGiveTheHighestBoundForARankInTheOverflowBucket() {
    LatencyHistogram h = new LatencyHistogram(List.of(Duration.ofMillis(1), Duration.ofSeconds(5)));
    h.record(60_000 * MS);
    assertThat(h.quantileSeconds(0.99)).isEqualTo(5.0);
  }

  @Test
  void shouldRejectBadBoundsAndQuantiles() {
    assertThatThrownBy(
            () -> new LatencyHistogram(List.of(Duration.ofMillis(5), Duration.ofMillis(1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ascending");
    LatencyHistogram h = new LatencyHistogram(MetricDescriptor.DURATION_BUCKETS);
    assertThatThrownBy(() -> h.quantileSeconds(1.5)).hasMessageContaining("q=1.5");
  }
}
