package org.transferqueue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The {@link ErrorHandler} of background work: counts every error and logs each distinct kind once,
 * at WARNING; later occurrences of a kind are counted (and logged at DEBUG). Per kind it keeps a
 * count and the wall-clock time of the first and the last occurrence.
 *
 * <p>The number of kinds kept is bounded ({@link #DEFAULT_MAX_DISTINCT} unless told otherwise), so
 * that errors carrying ever-new values cannot grow the log without end: once full, an error of a
 * new kind is still counted in {@link #errorCount()} and logged at DEBUG, but gets no entry.
 *
 * <p>Thread-safe; an update takes no lock once its kind has an entry.
 */
public final class DistinctErrorLog implements ErrorHandler {
  /** The number of distinct kinds kept unless told otherwise. */
  public static final int DEFAULT_MAX_DISTINCT = 1024;

  /**
   * One distinct kind of error.
   *
   * @param kind what distinguishes it, such as {@code "rollback STORAGE_ERROR"}
   * @param count how often it occurred
   * @param firstEpochMillis wall-clock time of the first occurrence
   * @param lastEpochMillis wall-clock time of the latest occurrence
   */
  public record Entry(String kind, long count, long firstEpochMillis, long lastEpochMillis) {}

  private final System.Logger log;
  private final int maxDistinct;
  private final Clock clock;
  private final ConcurrentHashMap<String, Counter> kinds = new ConcurrentHashMap<>();
  private final AtomicInteger distinct = new AtomicInteger();
  private final LongAdder total = new LongAdder();

  /**
   * Creates an empty log that keeps up to {@link #DEFAULT_MAX_DISTINCT} kinds and reads the system
   * clock.
   *
   * @param log where the first occurrence of each kind is logged, at WARNING
   */
  public DistinctErrorLog(System.Logger log) {
    this(log, DEFAULT_MAX_DISTINCT, Clock.SYSTEM);
  }

  /**
   * Creates an empty log.
   *
   * @param log where the first occurrence of each kind is logged, at WARNING
   * @param maxDistinct how many kinds get an entry, at least 1
   * @param clock the source of the timestamps
   * @throws IllegalArgumentException if {@code maxDistinct < 1}
   */
  public DistinctErrorLog(System.Logger log, int maxDistinct, Clock clock) {
    if (maxDistinct < 1) {
      throw new IllegalArgumentException("maxDistinct=" + maxDistinct + " < 1");
    }
    this.log = Objects.requireNonNull(log, "log");
    this.maxDistinct = maxDistinct;
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * Records one error.
   *
   * @param kind what distinguishes errors worth their own log line, such as the error code
   * @param message the description of this occurrence
   * @param cause the exception, or null
   */
  public void record(String kind, String message, Throwable cause) {
    total.increment();
    long now = clock.epochMillis();
    Counter counter =
        kinds.computeIfAbsent(
            kind,
            k -> {
              if (distinct.incrementAndGet() > maxDistinct) {
                distinct.decrementAndGet();
                return null;
              }
              return new Counter(now);
            });
    if (counter == null) {
      log.log(System.Logger.Level.DEBUG, message + " (" + kind + "; error log full)", cause);
      return;
    }
    long n = counter.occurred(now);
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
   * Records one failure of some work, as kind {@code where} and the failure's error code (or
   * class).
   *
   * @param where the work that failed, such as {@code "rollback"}
   * @param error the failure
   */
  @Override
  public void onError(String where, Throwable error) {
    String code = error instanceof TqException tq ? tq.code().name() : error.getClass().getName();
    record(where + " " + code, where + " failed: " + error, error);
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
              onError(
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
   * The number of errors recorded so far, including those of kinds the full log kept no entry for.
   *
   * @return the count over all kinds
   */
  public long errorCount() {
    return total.sum();
  }

  /**
   * The number of errors recorded so far per kind that has an entry.
   *
   * @return a snapshot, by kind in ascending order
   */
  public Map<String, Long> counts() {
    Map<String, Long> snapshot = new TreeMap<>();
    kinds.forEach((k, v) -> snapshot.put(k, v.count.get()));
    return snapshot;
  }

  /**
   * The kinds with an entry, with their counts and first and last timestamps.
   *
   * @return a snapshot, by first occurrence and then kind
   */
  public List<Entry> entries() {
    List<Entry> snapshot = new ArrayList<>(kinds.size());
    kinds.forEach((k, v) -> snapshot.add(new Entry(k, v.count.get(), v.first, v.last)));
    snapshot.sort(Comparator.comparingLong(Entry::firstEpochMillis).thenComparing(Entry::kind));
    return snapshot;
  }

  /** The state of one kind. The last timestamp is written racily: any recent writer may win. */
  private static final class Counter {
    final AtomicLong count = new AtomicLong();
    final long first;
    volatile long last;

    Counter(long now) {
      this.first = now;
      this.last = now;
    }

    long occurred(long now) {
      last = Math.max(last, now);
      return count.incrementAndGet();
    }
  }
}
