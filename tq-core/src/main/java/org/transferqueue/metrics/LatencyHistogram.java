package org.transferqueue.metrics;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * A latency histogram over fixed bucket bounds that estimates quantiles the way Prometheus' {@code
 * histogram_quantile} does: linear interpolation inside the bucket that holds the rank (from 0 for
 * the first bucket); a rank in the overflow bucket gives the highest bound.
 *
 * <p>Thread-safe and lock-free: recording adds to {@link LongAdder}s; reads are not atomic across
 * buckets, which is harmless for monitoring.
 */
public final class LatencyHistogram {
  private final long[] boundsNanos;
  private final LongAdder[] buckets;
  private final LongAdder count = new LongAdder();
  private final LongAdder sumNanos = new LongAdder();

  /**
   * Creates an empty histogram.
   *
   * @param bounds ascending, positive upper bounds; an overflow bucket is added
   */
  public LatencyHistogram(List<Duration> bounds) {
    this.boundsNanos = bounds.stream().mapToLong(Duration::toNanos).toArray();
    for (int i = 0; i < boundsNanos.length; i++) {
      if (boundsNanos[i] <= 0 || (i > 0 && boundsNanos[i] <= boundsNanos[i - 1])) {
        throw new IllegalArgumentException("bounds must be positive and ascending: " + bounds);
      }
    }
    this.buckets = new LongAdder[boundsNanos.length + 1];
    for (int i = 0; i < buckets.length; i++) {
      buckets[i] = new LongAdder();
    }
  }

  /**
   * Records one observation.
   *
   * @param nanos the latency; negative values count as 0
   */
  public void record(long nanos) {
    long value = Math.max(0, nanos);
    int i = 0;
    while (i < boundsNanos.length && value > boundsNanos[i]) {
      i++;
    }
    buckets[i].increment();
    count.increment();
    sumNanos.add(value);
  }

  /**
   * The number of observations.
   *
   * @return the count
   */
  public long count() {
    return count.sum();
  }

  /**
   * The mean latency.
   *
   * @return seconds, 0 without observations
   */
  public double meanSeconds() {
    long n = count.sum();
    return n == 0 ? 0.0 : sumNanos.sum() / 1e9 / n;
  }

  /**
   * Estimates a quantile.
   *
   * @param q the quantile, 0 to 1
   * @return seconds, 0 without observations
   * @throws IllegalArgumentException for {@code q} outside 0..1
   */
  public double quantileSeconds(double q) {
    if (!(q >= 0 && q <= 1)) {
      throw new IllegalArgumentException("quantile q=" + q + " is not in [0, 1]");
    }
    long[] counts = new long[buckets.length];
    long total = 0;
    for (int i = 0; i < counts.length; i++) {
      counts[i] = buckets[i].sum();
      total += counts[i];
    }
    if (total == 0) {
      return 0.0;
    }
    double rank = q * total;
    long below = 0;
    for (int i = 0; i < boundsNanos.length; i++) {
      if (below + counts[i] >= rank && counts[i] > 0) {
        double lower = i == 0 ? 0 : boundsNanos[i - 1];
        double upper = boundsNanos[i];
        return (lower + (upper - lower) * ((rank - below) / counts[i])) / 1e9;
      }
      below += counts[i];
    }
    return boundsNanos[boundsNanos.length - 1] / 1e9;
  }
}
