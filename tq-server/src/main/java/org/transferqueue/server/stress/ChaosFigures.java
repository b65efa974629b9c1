package org.transferqueue.server.stress;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * What the chaos of a stress run did and how the system recovered.
 *
 * @param durability {@code journal} or {@code none}: how the server processes ran
 * @param intervalMillis the time between kills
 * @param recoveries every kill in order, with its recovery times
 * @param strandedRows acknowledged shared rows no fetch ever returned to a client but that are
 *     intact (readable by index after the run): consumed by a fetch whose reply was lost in a crash
 * @param strandedAllowance the most rows such fetches could have consumed: batch rows times the
 *     shared fetches and reads that failed with the role unreachable; stranded rows beyond it are
 *     counted as lost
 */
public record ChaosFigures(
    String durability,
    long intervalMillis,
    List<Recovery> recoveries,
    long strandedRows,
    long strandedAllowance) {

  /** Copies the list. */
  public ChaosFigures {
    recoveries = List.copyOf(recoveries);
  }

  /**
   * One kill and restart.
   *
   * @param role the kind of role killed
   * @param name the process, e.g. {@code storage-unit 1}
   * @param readyNanos from the SIGKILL to the restarted process's ready line; -1 if never
   * @param answeringNanos from the SIGKILL to the restarted role's first PING reply; -1 if never
   * @param firstOpNanos from the SIGKILL to the end of the first client operation that started
   *     after it and reached the role (a put or fetch for the controller, a put or get of one of
   *     its samples for a storage process); -1 if none did
   * @param failure why the role could not be restarted, or null
   */
  public record Recovery(
      ChaosRole role,
      String name,
      long readyNanos,
      long answeringNanos,
      long firstOpNanos,
      String failure) {}

  /**
   * Kills per kind of role.
   *
   * @return counts, in declaration order of {@link ChaosRole}, only kinds that were killed
   */
  public Map<ChaosRole, Integer> killsByRole() {
    Map<ChaosRole, Integer> out = new EnumMap<>(ChaosRole.class);
    for (Recovery r : recoveries) {
      out.merge(r.role(), 1, Integer::sum);
    }
    return out;
  }

  /**
   * Restarts that failed, in words.
   *
   * @return one line per failed restart
   */
  public List<String> failures() {
    List<String> out = new ArrayList<>();
    for (Recovery r : recoveries) {
      if (r.failure() != null) {
        out.add(r.name() + ": " + r.failure());
      }
    }
    return out;
  }

  /**
   * Percentiles of the time from the kill to the role's first PING reply.
   *
   * @return p50, p99 and max in nanoseconds over the recoveries that got there
   */
  public Percentiles answering() {
    return Percentiles.of(recoveries, Recovery::answeringNanos);
  }

  /**
   * Percentiles of the time from the kill to the first client operation that reached the role.
   *
   * @return p50, p99 and max in nanoseconds over the recoveries that got there
   */
  public Percentiles firstOp() {
    return Percentiles.of(recoveries, Recovery::firstOpNanos);
  }

  /**
   * Nearest-rank percentiles of a few durations.
   *
   * @param count how many durations there were
   * @param p50Nanos the median, -1 without any
   * @param p99Nanos the 99th percentile, -1 without any
   * @param maxNanos the longest, -1 without any
   */
  public record Percentiles(int count, long p50Nanos, long p99Nanos, long maxNanos) {
    static Percentiles of(List<Recovery> recoveries, ToLongFunction<Recovery> value) {
      long[] sorted = recoveries.stream().mapToLong(value).filter(v -> v >= 0).sorted().toArray();
      if (sorted.length == 0) {
        return new Percentiles(0, -1, -1, -1);
      }
      return new Percentiles(
          sorted.length, rank(sorted, 0.50), rank(sorted, 0.99), sorted[sorted.length - 1]);
    }

    private static long rank(long[] sorted, double q) {
      int index = (int) Math.ceil(q * sorted.length) - 1;
      return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
  }
}
