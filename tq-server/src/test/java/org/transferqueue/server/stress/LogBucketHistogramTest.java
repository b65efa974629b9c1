package org.transferqueue.server.stress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.transferqueue.testing.Seeds;

/** Percentiles within a sixteenth of the exact value, on seeded random durations. */
class LogBucketHistogramTest {

  @Test
  void shouldReportPercentilesWithinOneSixteenthOfTheExactValue() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    LogBucketHistogram histogram = new LogBucketHistogram();
    long[] values = new long[10_000];
    for (int i = 0; i < values.length; i++) {
      values[i] = (long) Math.exp(random.nextDouble() * 25); // 1 ns .. 72 s
      histogram.record(values[i]);
    }
    Arrays.sort(values);

    assertThat(histogram.count()).isEqualTo(values.length);
    assertThat(histogram.maxNanos()).isEqualTo(values[values.length - 1]);
    for (double q : new double[] {0.01, 0.5, 0.9, 0.99, 1.0}) {
      long exact = values[(int) Math.ceil(q * values.length) - 1];
      assertThat(histogram.percentileNanos(q))
          .as("seed %d, quantile %s", seed, q)
          .isBetween(exact, exact + exact / 16 + 1);
    }
  }

  @Test
  void shouldKeepSmallValuesExactAndBucketEdgesConsistent() {
    for (long v = 0; v < 100_000; v++) {
      int index = LogBucketHistogram.index(v);
      assertThat(LogBucketHistogram.upperEdge(index)).as("value %d", v).isGreaterThanOrEqualTo(v);
      if (index > 0) {
        assertThat(LogBucketHistogram.upperEdge(index - 1)).as("value %d", v).isLessThan(v);
      }
    }
    LogBucketHistogram histogram = new LogBucketHistogram();
    histogram.record(-5);
    histogram.record(7);

    assertThat(histogram.percentileNanos(0.5)).isZero();
    assertThat(histogram.percentileNanos(1.0)).isEqualTo(7);
    assertThatThrownBy(() -> histogram.percentileNanos(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("quantile=0.0");
  }
}
