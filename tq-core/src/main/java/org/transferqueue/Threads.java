package org.transferqueue;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The thread factories of the code base, so that every background thread is named after its work
 * and none keeps the JVM alive after {@code main} returns. Stateless; each factory is thread-safe.
 *
 * <pre>{@code
 * ExecutorService pool = Executors.newFixedThreadPool(4, Threads.daemon("tq-simple-storage"));
 * // threads tq-simple-storage-1 ... tq-simple-storage-4
 * }</pre>
 */
public final class Threads {
  private Threads() {}

  /**
   * Daemon platform threads named {@code prefix-1}, {@code prefix-2}, ..., for pools whose work
   * blocks the carrier (executors sized by a thread count, schedulers).
   *
   * @param prefix what the threads work on, such as {@code "tq-objectstore-host1"}
   * @return a factory numbering its threads from 1
   */
  public static ThreadFactory daemon(String prefix) {
    return Thread.ofPlatform().name(prefix + "-", 1).daemon().factory();
  }

  /**
   * Daemon platform threads that all carry exactly {@code name}, for single-thread executors.
   *
   * @param name the thread name, such as {@code "tq-metrics-collector"}
   * @return the factory
   */
  public static ThreadFactory namedDaemon(String name) {
    return Thread.ofPlatform().name(name).daemon().factory();
  }

  /**
   * Virtual threads named {@code prefix-0}, {@code prefix-1}, ..., for one thread per task (virtual
   * threads never keep the JVM alive).
   *
   * @param prefix what the threads work on, such as {@code "tq-loader"}
   * @return a factory numbering its threads from 0
   */
  public static ThreadFactory virtual(String prefix) {
    return Thread.ofVirtual().name(prefix + "-", 0).factory();
  }

  /**
   * Waits until a shut-down executor's running task has ended, so that nothing it does (a journal
   * compaction deleting old segments, say) overlaps what the caller does next. Keeps the caller's
   * interrupt status.
   *
   * @param executor an executor already shut down
   * @param limit how long one wait lasts at most (an interrupt during it starts one more)
   * @return whether it terminated within the limit
   */
  public static boolean awaitTermination(ExecutorService executor, Duration limit) {
    boolean interrupted = false;
    try {
      // An interrupt ends one wait early; the second wait keeps the promise that the task is done.
      for (int attempt = 0; attempt < 2; attempt++) {
        try {
          return executor.awaitTermination(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      return executor.isTerminated();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
