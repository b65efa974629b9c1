package org.transferqueue.server.bench;

/**
 * The timings of one iteration (put, list, get, clear of the whole batch) and the figures derived
 * from them. Throughput counts the workload's bytes once per put and once per get.
 *
 * <p>Two units are reported: {@code GB/s} is 10^9 bytes per second; {@code Gbps} is upstream's
 * figure, GiB (2^30 bytes) times 8 per second. A ratio is a GB/s figure divided by the baseline's
 * GB/s, both from the same run.
 *
 * @param iteration the iteration number, from 1
 * @param bytes bytes of one put (and of one get)
 * @param putSeconds time of the batch put
 * @param listSeconds time of the key listing
 * @param getSeconds time of the batch get
 * @param clearSeconds time of the clear
 * @param baselineGbPerSec the baseline this iteration is compared with, in GB/s
 * @param putCpuSeconds CPU time of the put, summed over the processes of the case (this one and, in
 *     loopback mode, the servers); NaN when not measured
 * @param getCpuSeconds CPU time of the get, summed the same way; NaN when not measured
 * @param cpuSeconds CPU time of the whole iteration (put to clear), summed the same way; NaN when
 *     not measured
 * @param compilerCpuSeconds the part of {@code cpuSeconds} the JIT compiler threads used; NaN when
 *     not measured
 */
public record IterationResult(
    int iteration,
    long bytes,
    double putSeconds,
    double listSeconds,
    double getSeconds,
    double clearSeconds,
    double baselineGbPerSec,
    double putCpuSeconds,
    double getCpuSeconds,
    double cpuSeconds,
    double compilerCpuSeconds) {

  private static final double GIB = 1024.0 * 1024 * 1024;

  /**
   * An iteration without CPU times.
   *
   * @param iteration the iteration number, from 1
   * @param bytes bytes of one put (and of one get)
   * @param putSeconds time of the batch put
   * @param listSeconds time of the key listing
   * @param getSeconds time of the batch get
   * @param clearSeconds time of the clear
   * @param baselineGbPerSec the baseline this iteration is compared with, in GB/s
   */
  public IterationResult(
      int iteration,
      long bytes,
      double putSeconds,
      double listSeconds,
      double getSeconds,
      double clearSeconds,
      double baselineGbPerSec) {
    this(
        iteration,
        bytes,
        putSeconds,
        listSeconds,
        getSeconds,
        clearSeconds,
        baselineGbPerSec,
        Double.NaN,
        Double.NaN,
        Double.NaN,
        Double.NaN);
  }

  /**
   * The data size in GiB, upstream's {@code total_data_size_gb}.
   *
   * @return bytes / 2^30
   */
  public double gib() {
    return bytes / GIB;
  }

  /**
   * Put throughput.
   *
   * @return 10^9 bytes per second
   */
  public double putGbPerSec() {
    return bytes / 1e9 / putSeconds;
  }

  /**
   * Get throughput.
   *
   * @return 10^9 bytes per second
   */
  public double getGbPerSec() {
    return bytes / 1e9 / getSeconds;
  }

  /**
   * Round-trip throughput: the bytes of the put and of the get over both times.
   *
   * @return 10^9 bytes per second
   */
  public double totalGbPerSec() {
    return 2.0 * bytes / 1e9 / (putSeconds + getSeconds);
  }

  /**
   * Upstream's {@code put_gbit_per_sec}.
   *
   * @return GiB x 8 per second
   */
  public double putGbps() {
    return gib() * 8 / putSeconds;
  }

  /**
   * Upstream's {@code get_gbit_per_sec}.
   *
   * @return GiB x 8 per second
   */
  public double getGbps() {
    return gib() * 8 / getSeconds;
  }

  /**
   * Upstream's {@code total_gbit_per_sec}.
   *
   * @return GiB x 16 per (put + get) second
   */
  public double totalGbps() {
    return gib() * 16 / (putSeconds + getSeconds);
  }

  /**
   * Put throughput relative to the baseline.
   *
   * @return {@link #putGbPerSec()} / baseline
   */
  public double putRatio() {
    return putGbPerSec() / baselineGbPerSec;
  }

  /**
   * Get throughput relative to the baseline.
   *
   * @return {@link #getGbPerSec()} / baseline
   */
  public double getRatio() {
    return getGbPerSec() / baselineGbPerSec;
  }

  /**
   * Round-trip throughput relative to the baseline.
   *
   * @return {@link #totalGbPerSec()} / baseline
   */
  public double totalRatio() {
    return totalGbPerSec() / baselineGbPerSec;
  }
}
