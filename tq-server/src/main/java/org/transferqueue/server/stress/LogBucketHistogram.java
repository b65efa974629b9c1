package org.transferqueue.server.stress;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAccumulator;

/**
 * A concurrent histogram of durations in nanoseconds with log-linear buckets (unlike the
 * Prometheus-style {@code metrics.LatencyHistogram}, whose fixed bounds are too coarse for a p99
 * report): each power of two is split into {@value #SUB_BUCKETS} equal parts, so a percentile is
 * reported within 1/16 (about 6 %) of the recorded value. Values from 0 to 2^62 ns are accepted
 * (negative values count as 0). Recording is lock-free; reading while others record gives a
 * consistent-enough snapshot for a report. Thread-safe.
 */
public final class LogBucketHistogram {
  private static final int SUB_BITS = 4;
  private static final int SUB_BUCKETS = 1 << SUB_BITS;
  private static final int MAGNITUDES = 63;

  private final AtomicLongArray counts = new AtomicLongArray(MAGNITUDES * SUB_BUCKETS);
  private final LongAccumulator max = new LongAccumulator(Math::max, 0);

  /** Creates an empty histogram. */
  public LogBucketHistogram() {}

  /**
   * Records one duration.
   *
   * @param nanos the duration
   */
  public void record(long nanos) {
    long value = Math.max(0, nanos);
    counts.incrementAndGet(index(value));
    max.accumulate(value);
  }

  /**
   * The number of recorded durations.
   *
   * @return the count
   */
  public long count() {
    long total = 0;
    for (int i = 0; i < counts.length(); i++) {
      total += counts.get(i);
    }
    return total;
  }

  /**
   * The longest recorded duration.
   *
   * @return nanoseconds, 0 when empty
   */
  public long maxNanos() {
    return max.get();
  }

  /**
   * The duration below or at which a fraction of the recorded durations lie: the upper edge of the
   * bucket holding that rank, capped at the maximum.
   *
   * @param quantile in {@code (0, 1]}, e.g. 0.99
   * @return nanoseconds, 0 when empty
   */
  public long percentileNanos(double quantile) {
    if (!(quantile > 0 && quantile <= 1)) {
      throw new IllegalArgumentException("quantile=" + quantile + " is not in (0, 1]");
    }
    long total = count();
    if (total == 0) {
      return 0;
    }
    long rank = (long) Math.ceil(quantile * total);
    long seen = 0;
    for (int i = 0; i < counts.length(); i++) {
      seen += counts.get(i);
      if (seen >= rank) {
        return Math.min(upperEdge(i), maxNanos());
      }
    }
    return maxNanos();
  }

  /** Values below 16 get a bucket each; above, 16 buckets per power of two. */
  static int index(long value) {
    if (value < SUB_BUCKETS) {
      return (int) value;
    }
    int magnitude = 63 - Long.numberOfLeadingZeros(value); // >= SUB_BITS
    int sub = (int) (value >>> (magnitude - SUB_BITS)) & (SUB_BUCKETS - 1);
    return Math.min((magnitude - SUB_BITS + 1) * SUB_BUCKETS + sub, MAGNITUDES * SUB_BUCKETS - 1);
  }

  /** The largest value that falls in bucket {@code index}. */
  static long upperEdge(int index) {
    if (index < SUB_BUCKETS) {
      return index;
    }
    int magnitude = index / SUB_BUCKETS + SUB_BITS - 1;
    long sub = index % SUB_BUCKETS;
    long base = (SUB_BUCKETS + sub) << (magnitude - SUB_BITS);
    return base + (1L << (magnitude - SUB_BITS)) - 1;
  }
}
