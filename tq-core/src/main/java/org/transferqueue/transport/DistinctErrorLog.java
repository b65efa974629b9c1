package org.transferqueue.transport;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.transferqueue.TqException;

/**
 * Counts the errors of background work (a server's connection threads, a client's cleanup that goes
 * on after its call returned) and logs each distinct kind once; later occurrences are only counted
 * (and logged at debug level). Thread-safe, lock-free per update.
 */
public final class DistinctErrorLog {
  private final System.Logger log;
  private final ConcurrentHashMap<String, AtomicLong> counts = new ConcurrentHashMap<>();
  private final AtomicLong total = new AtomicLong();

  /**
   * Creates an empty log.
   *
   * @param log where the first occurrence of each kind is logged, at WARNING
   */
  public DistinctErrorLog(System.Logger log) {
    this.log = log;
  }

  /**
   * Records one error.
   *
   * @param kind what distinguishes errors worth their own log line, such as the error code
   * @param message the description of this occurrence
   * @param cause the exception, or null
   */
  public void record(String kind, String message, Throwable cause) {
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

  /**
   * Records one failure of some work, as kind {@code what} and the failure's error code (or class).
   *
   * @param what the work that failed, such as {@code "rollback"}
   * @param failure the failure
   */
  public void recordFailure(String what, Throwable failure) {
    String code =
        failure instanceof TqException tq ? tq.code().name() : failure.getClass().getName();
    record(what + " " + code, what + " failed: " + failure, failure);
  }

  /**
   * Waits for work a call started (a rollback, a cleanup) until the call's deadline; work still
   * running then goes on in the background, and its failure, if any, is recorded here when it ends.
   * An interrupt ends the wait as the deadline does (the thread stays interrupted).
   *
   * @param work the work
   * @param timeoutNs how long the caller may still wait, in nanoseconds (at most 0: not at all)
   * @param what names the work in the record
   * @return true if the work ended in time, whatever its outcome (the caller's to report); false if
   *     it goes on in the background
   */
  public boolean awaitWithin(CompletableFuture<?> work, long timeoutNs, String what) {
    try {
      work.get(Math.max(0, timeoutNs), TimeUnit.NANOSECONDS);
      return true;
    } catch (ExecutionException e) {
      return true;
    } catch (TimeoutException | InterruptedException e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      work.whenComplete(
          (done, error) -> {
            if (error != null) {
              recordFailure(
                  what,
                  error instanceof CompletionException && error.getCause() != null
                      ? error.getCause()
                      : error);
            }
          });
      return false;
    }
  }

  /**
   * The number of errors recorded so far.
   *
   * @return the count over all kinds
   */
  public long total() {
    return total.get();
  }

  /**
   * The number of errors recorded so far per kind.
   *
   * @return a snapshot, by kind in ascending order
   */
  public Map<String, Long> counts() {
    Map<String, Long> snapshot = new TreeMap<>();
    counts.forEach((k, v) -> snapshot.put(k, v.get()));
    return snapshot;
  }
}
