package org.transferqueue.server.stress;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters every client of one stress run adds to: operations, bytes and latencies per {@link
 * StressOp}, errors by error code, lost and corrupted rows, and the first problems in words (at
 * most {@value #MAX_PROBLEMS_PER_KIND} per error code, lost or corrupted, {@value #MAX_PROBLEMS} in
 * all). The counters are lock-free; keeping a problem message takes a lock. Thread-safe.
 */
final class StressStats {
  static final int MAX_PROBLEMS = 20;
  static final int MAX_PROBLEMS_PER_KIND = 3;

  private final Map<StressOp, LongAdder> operations = new EnumMap<>(StressOp.class);
  private final Map<StressOp, LongAdder> bytes = new EnumMap<>(StressOp.class);
  private final Map<StressOp, LogBucketHistogram> latencies = new EnumMap<>(StressOp.class);
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
  private final LongAdder rowsWritten = new LongAdder();
  private final LongAdder rowsVerified = new LongAdder();
  private final LongAdder lost = new LongAdder();
  private final LongAdder corrupted = new LongAdder();
  private final List<String> problems = new ArrayList<>();
  private final Map<String, Integer> problemsPerKind = new HashMap<>();

  StressStats() {
    for (StressOp op : StressOp.values()) {
      operations.put(op, new LongAdder());
      bytes.put(op, new LongAdder());
      latencies.put(op, new LogBucketHistogram());
    }
  }

  void operation(StressOp op, long nanos, long movedBytes) {
    operations.get(op).increment();
    bytes.get(op).add(movedBytes);
    latencies.get(op).record(nanos);
  }

  /** Counts an error under its code name, or under the exception's class for a non-typed one. */
  void error(String code, String message) {
    errors.computeIfAbsent(code, c -> new LongAdder()).increment();
    problem(code, code + ": " + message);
  }

  void written(long rows) {
    rowsWritten.add(rows);
  }

  void verified(long rows) {
    rowsVerified.add(rows);
  }

  void lost(long rows, String message) {
    lost.add(rows);
    problem("lost", "lost " + rows + ": " + message);
  }

  void corrupted(String message) {
    corrupted.increment();
    problem("corrupted", "corrupted: " + message);
  }

  /** Keeps the first few messages of each kind (an error code, lost, corrupted). */
  private void problem(String kind, String message) {
    synchronized (problems) {
      int seen = problemsPerKind.merge(kind, 1, Integer::sum);
      if (seen <= MAX_PROBLEMS_PER_KIND && problems.size() < MAX_PROBLEMS) {
        problems.add(message);
      }
    }
  }

  long lost() {
    return lost.sum();
  }

  long corrupted() {
    return corrupted.sum();
  }

  long rowsWritten() {
    return rowsWritten.sum();
  }

  long rowsVerified() {
    return rowsVerified.sum();
  }

  Map<String, Long> errors() {
    Map<String, Long> out = new TreeMap<>();
    errors.forEach((code, count) -> out.put(code, count.sum()));
    return out;
  }

  List<String> problems() {
    synchronized (problems) {
      return List.copyOf(problems);
    }
  }

  Map<StressOp, StressResult.OpFigures> figures() {
    Map<StressOp, StressResult.OpFigures> out = new EnumMap<>(StressOp.class);
    for (StressOp op : StressOp.values()) {
      LogBucketHistogram h = latencies.get(op);
      out.put(
          op,
          new StressResult.OpFigures(
              operations.get(op).sum(),
              bytes.get(op).sum(),
              h.percentileNanos(0.5),
              h.percentileNanos(0.99),
              h.maxNanos()));
    }
    return out;
  }
}
