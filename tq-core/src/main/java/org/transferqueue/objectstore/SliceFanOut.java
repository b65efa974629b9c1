package org.transferqueue.objectstore;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.Threads;

/**
 * Runs the slice tasks of one {@link MooncakeKvClient} call side by side and joins them.
 *
 * <p><b>Threads.</b> Every task runs on a virtual worker thread owned by this object: store calls
 * block, and a fixed pool shared by every caller of the client would queue independent puts and
 * gets behind each other. Each call bounds its own parallelism instead ({@link #run}'s {@code
 * parallelism}): a task takes one of its call's slots before it starts and holds it until its
 * future completes, retries included. Unless a {@link MooncakeKvClient.RetryScheduler} is given,
 * one daemon timer thread serves the pauses before retries ({@link #retryScheduler}); a retry then
 * continues on the workers, so no thread sleeps.
 *
 * <p><b>Failures.</b> {@link #run} waits for every task, then throws the first failure with the
 * later ones suppressed, so every task has finished and released its memory when the caller sees
 * the error.
 *
 * <p>Thread-safe; {@link #close} stops the workers and the timer.
 */
final class SliceFanOut implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(SliceFanOut.class.getName());

  /** One slice's work: started on a worker, done when its future completes. */
  @FunctionalInterface
  interface SliceTask {
    /**
     * Starts the slice.
     *
     * @return a future completed when the slice is done, retries included
     */
    CompletableFuture<Void> start();
  }

  private final ExecutorService workers;
  private final ScheduledExecutorService timer;
  private final MooncakeKvClient.RetryScheduler retryScheduler;

  /**
   * Starts the workers, and the timer when {@code retryScheduler} is null.
   *
   * @param retryScheduler pauses before retries, or null for a timer thread of this object
   */
  SliceFanOut(MooncakeKvClient.RetryScheduler retryScheduler) {
    this.workers = Executors.newThreadPerTaskExecutor(Threads.virtual("mooncake-kv-worker"));
    if (retryScheduler == null) {
      ScheduledExecutorService owned =
          Executors.newSingleThreadScheduledExecutor(Threads.daemon("mooncake-kv-retry"));
      this.timer = owned;
      this.retryScheduler =
          delayNs -> {
            CompletableFuture<Void> done = new CompletableFuture<>();
            owned.schedule(() -> done.complete(null), delayNs, TimeUnit.NANOSECONDS);
            return done;
          };
    } else {
      this.timer = null;
      this.retryScheduler = retryScheduler;
    }
  }

  /**
   * The executor of the slice tasks, where retries continue too.
   *
   * @return the workers
   */
  Executor workers() {
    return workers;
  }

  /**
   * The scheduler of the pauses before retries.
   *
   * @return the given scheduler, or the one over this object's timer
   */
  MooncakeKvClient.RetryScheduler retryScheduler() {
    return retryScheduler;
  }

  /**
   * Splits {@code indexes} into consecutive slices of at most {@code limit}.
   *
   * @param indexes the positions to split
   * @param limit the largest slice, positive
   * @return views of {@code indexes}
   */
  static List<List<Integer>> slices(List<Integer> indexes, int limit) {
    List<List<Integer>> slices = new ArrayList<>();
    for (int from = 0; from < indexes.size(); from += limit) {
      slices.add(indexes.subList(from, Math.min(indexes.size(), from + limit)));
    }
    return slices;
  }

  /**
   * Runs the tasks of one call, at most {@code parallelism} at a time, in the order given, and
   * waits for all of them.
   *
   * @param tasks the call's slice tasks
   * @param parallelism how many may run at once, positive
   * @throws RuntimeException the first failure, with the later ones suppressed, once every task has
   *     finished; a checked failure becomes {@code STORAGE_ERROR}
   */
  void run(List<SliceTask> tasks, int parallelism) {
    Semaphore slots = new Semaphore(parallelism);
    List<CompletableFuture<Void>> started = new ArrayList<>(tasks.size());
    for (SliceTask task : tasks) {
      started.add(submit(task, slots));
    }
    awaitAll(started);
  }

  /**
   * Runs {@code task} on a worker once one of its call's {@code slots} is free; the slot is held
   * until the task's future completes, retries included.
   */
  private CompletableFuture<Void> submit(SliceTask task, Semaphore slots) {
    return CompletableFuture.supplyAsync(
            () -> {
              slots.acquireUninterruptibly();
              try {
                return task.start();
              } catch (RuntimeException | Error e) {
                slots.release();
                throw e;
              }
            },
            workers)
        .thenCompose(started -> started.whenComplete((r, e) -> slots.release()));
  }

  /** Waits for every task, then throws the first failure with the later ones suppressed. */
  private static void awaitAll(List<CompletableFuture<Void>> tasks) {
    RuntimeException failure = null;
    for (CompletableFuture<Void> task : tasks) {
      try {
        task.join();
      } catch (CompletionException e) {
        RuntimeException cause =
            e.getCause() instanceof RuntimeException r
                ? r
                : new StorageException(ErrorCode.STORAGE_ERROR, String.valueOf(e.getCause()), e);
        if (failure == null) {
          failure = cause;
        } else if (failure != cause) {
          failure.addSuppressed(cause);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Stops the timer and the workers, waiting up to 5 s for tasks in flight. Idempotent. */
  @Override
  public void close() {
    workers.shutdown();
    if (timer != null) {
      timer.shutdownNow();
    }
    try {
      if (!workers.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.log(System.Logger.Level.WARNING, "MooncakeKvClient workers still busy after 5 s");
        workers.shutdownNow();
      }
    } catch (InterruptedException e) {
      workers.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
