package org.transferqueue.storage.simple;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.Threads;

/**
 * Runs one task per storage unit of a request in parallel on a bounded pool of platform threads,
 * the first task on the caller's thread.
 *
 * <p>{@link #runAll} always waits for every task, so that a failure never leaves work running in
 * the background; the results of the tasks that succeeded are then handed to a cleanup action and
 * the first failure is thrown with the others suppressed. Tasks never wait for each other, so the
 * bounded pool cannot deadlock. Thread-safe.
 */
final class UnitExecutor implements AutoCloseable {
  private static final long SHUTDOWN_WAIT_SECONDS = 5;

  private final ExecutorService executor;

  UnitExecutor(String name, int threads) {
    this.executor =
        new ThreadPoolExecutor(
            threads,
            threads,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            Threads.daemon(name));
  }

  /**
   * Applies {@code task} to every item, in parallel, and returns the results in item order.
   *
   * @param items the work items (one per unit)
   * @param task what to do with one item
   * @param cleanup frees the result of a task that succeeded when another failed; may be null
   * @return the results
   * @throws RuntimeException the first task failure, with the others suppressed
   */
  <T, R> List<R> runAll(List<T> items, Function<T, R> task, Consumer<R> cleanup) {
    int n = items.size();
    List<CompletableFuture<R>> futures = new ArrayList<>(n);
    for (int i = 1; i < n; i++) {
      T item = items.get(i);
      futures.add(CompletableFuture.supplyAsync(() -> task.apply(item), executor));
    }
    List<R> results = new ArrayList<>(n);
    RuntimeException failure = null;
    if (n > 0) {
      try {
        results.add(task.apply(items.get(0)));
      } catch (RuntimeException e) {
        failure = e;
        results.add(null);
      }
    }
    for (CompletableFuture<R> future : futures) {
      try {
        results.add(future.join());
      } catch (CompletionException e) {
        results.add(null);
        RuntimeException cause = unwrap(e);
        if (failure == null) {
          failure = cause;
        } else {
          failure.addSuppressed(cause);
        }
      }
    }
    if (failure != null) {
      if (cleanup != null) {
        for (R result : results) {
          if (result != null) {
            cleanup.accept(result);
          }
        }
      }
      throw failure;
    }
    return results;
  }

  private static RuntimeException unwrap(CompletionException e) {
    Throwable cause = e.getCause();
    if (cause instanceof RuntimeException runtime) {
      return runtime;
    }
    if (cause instanceof Error error) {
      throw error;
    }
    return new StorageException(ErrorCode.INTERNAL, "storage unit task failed: " + cause, cause);
  }

  /** Stops the threads, waiting up to 5 seconds for running tasks. Idempotent. */
  @Override
  public void close() {
    executor.shutdown();
    try {
      if (!executor.awaitTermination(SHUTDOWN_WAIT_SECONDS, TimeUnit.SECONDS)) {
        executor.shutdownNow();
      }
    } catch (InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
