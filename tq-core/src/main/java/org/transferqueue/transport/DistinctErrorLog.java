package org.transferqueue.transport;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts the errors of a server's background threads and logs each distinct kind once; later
 * occurrences are only counted (and logged at debug level). Thread-safe, lock-free per update.
 */
final class DistinctErrorLog {
  private final System.Logger log;
  private final ConcurrentHashMap<String, AtomicLong> counts = new ConcurrentHashMap<>();
  private final AtomicLong total = new AtomicLong();

  DistinctErrorLog(System.Logger log) {
    this.log = log;
  }

  /**
   * Records one error.
   *
   * @param kind what distinguishes errors worth their own log line, such as the error code
   * @param message the description of this occurrence
   * @param cause the exception, or null
   */
  void record(String kind, String message, Throwable cause) {
    total.incrementAndGet();
    long n = counts.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
    if (n == 1) {
      log.log(
          System.Logger.Level.WARNING,
          message + " (first " + kind + "; repeats are counted)",
          cause);
    } else {
      log.log(System.Logger.Level.DEBUG, message + " (" + kind + " #" + n + ")", cause);
    }
  }

  long total() {
    return total.get();
  }

  Map<String, Long> counts() {
    Map<String, Long> snapshot = new TreeMap<>();
    counts.forEach((k, v) -> snapshot.put(k, v.get()));
    return snapshot;
  }
}
