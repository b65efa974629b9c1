package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.random.RandomGenerator;
import org.transferqueue.Clock;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;

/**
 * Runs one batch transfer of a slice of keys and retries the keys that failed with a transient
 * code.
 *
 * <p>Policy: a key that succeeds is done, and so is a written key whose write was preempted by a
 * later upsert of the same key ({@code -601}: the later value stands, last writer wins); a key
 * whose node did not answer by the call deadline ({@code -901}) fails the slice with {@code
 * DEADLINE_EXCEEDED} at once; a key that fails with a transient code ({@link #TRANSIENT_CODES}) is
 * retried, alone with the other failed keys, the same segments reused; any other code fails the
 * slice at once naming the key and the code, and so does a read whose byte count differs from the
 * expected size. The first retry follows at once; retry {@code k >= 2} waits {@code baseDelay *
 * 2^(k-2)} scaled by a jitter in {@code [0.5, 1]}. The waits are scheduled with the {@link
 * MooncakeKvClient.RetryScheduler} and the retry continues on the worker executor, so no thread is
 * parked while waiting. A retry that could not start before the operation's deadline (read from the
 * injected clock) fails with {@code DEADLINE_EXCEEDED}.
 *
 * <p>Thread-safe; the jitter generator is only used under this object's monitor.
 */
final class TransferRetrier {
  /**
   * The codes worth retrying: transfer and RPC failures, no space, not ready. Not {@code
   * RPC_TIMEOUT}: a node that did not answer within a whole call deadline has used the operation's
   * time, so the operation fails with a deadline error at once instead of waiting once more per
   * retry.
   */
  static final Set<Integer> TRANSIENT_CODES =
      Set.of(
          StoreStatus.TRANSFER_FAIL.code(),
          StoreStatus.RPC_FAIL.code(),
          StoreStatus.NO_AVAILABLE_HANDLE.code(),
          StoreStatus.REPLICA_IS_NOT_READY.code());

  /** One batch call of the store: per key a code, or for reads a byte count. */
  @FunctionalInterface
  interface BatchCall {
    long[] call(List<String> keys, List<MemorySegment> segments);
  }

  private final Executor workers;
  private final MooncakeKvClient.RetryScheduler scheduler;
  private final Clock nanoClock;
  private final int maxRetries;
  private final long baseDelayNs;
  private final RandomGenerator jitter;

  TransferRetrier(
      Executor workers,
      MooncakeKvClient.RetryScheduler scheduler,
      Clock nanoClock,
      int maxRetries,
      long baseDelayNs,
      RandomGenerator jitter) {
    this.workers = workers;
    this.scheduler = scheduler;
    this.nanoClock = nanoClock;
    this.maxRetries = maxRetries;
    this.baseDelayNs = baseDelayNs;
    this.jitter = jitter;
  }

  /**
   * Transfers the slice, retrying as the class comment says.
   *
   * @param operation the store call's name for messages ({@code batch_upsert_from})
   * @param keys the keys
   * @param segments one segment per key
   * @param expectedBytes for reads, the size each key must have; null for writes (success = 0)
   * @param call the store call
   * @param deadlineNs the operation's deadline on the injected clock
   * @return a future that completes when every key succeeded, or exceptionally with a {@link
   *     StorageException} ({@code STORAGE_ERROR}, {@code CORRUPT_DATA}) or {@link
   *     DeadlineExceededException}
   */
  CompletableFuture<Void> run(
      String operation,
      List<String> keys,
      List<MemorySegment> segments,
      long[] expectedBytes,
      BatchCall call,
      long deadlineNs) {
    int[] all = new int[keys.size()];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    if (all.length == 0) {
      return CompletableFuture.completedFuture(null);
    }
    Attempt attempt = new Attempt(operation, keys, segments, expectedBytes, call, deadlineNs);
    return attempt.run(0, all);
  }

  private final class Attempt {
    private final String operation;
    private final List<String> keys;
    private final List<MemorySegment> segments;
    private final long[] expected;
    private final BatchCall call;
    private final long deadlineNs;

    Attempt(
        String operation,
        List<String> keys,
        List<MemorySegment> segments,
        long[] expected,
        BatchCall call,
        long deadlineNs) {
      this.operation = operation;
      this.keys = keys;
      this.segments = segments;
      this.expected = expected;
      this.call = call;
      this.deadlineNs = deadlineNs;
    }

    CompletableFuture<Void> run(int retry, int[] indices) {
      int[] failed;
      long[] codes;
      try {
        List<String> subKeys = new ArrayList<>(indices.length);
        List<MemorySegment> subSegments = new ArrayList<>(indices.length);
        for (int i : indices) {
          subKeys.add(keys.get(i));
          subSegments.add(segments.get(i));
        }
        codes = call.call(subKeys, subSegments);
        failed = check(indices, codes);
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
      if (failed.length == 0) {
        return CompletableFuture.completedFuture(null);
      }
      if (retry == maxRetries) {
        String message =
            operation
                + " failed for keys "
                + describeKeys(failed)
                + " with error codes "
                + describeCodes(indices, codes, failed)
                + " after retrying "
                + maxRetries
                + " times.";
        return CompletableFuture.failedFuture(exhausted(indices, codes, failed, message));
      }
      long delayNs = delayBefore(retry + 1);
      long now = nanoClock.nanoTime();
      if (now - deadlineNs + delayNs > 0) {
        return CompletableFuture.failedFuture(
            new DeadlineExceededException(
                operation
                    + " deadline passed before retry "
                    + (retry + 1)
                    + " of keys "
                    + describeKeys(failed)
                    + " (last codes "
                    + describeCodes(indices, codes, failed)
                    + ")"));
      }
      if (delayNs == 0) {
        return run(retry + 1, failed);
      }
      return scheduler.after(delayNs).thenComposeAsync(v -> run(retry + 1, failed), workers);
    }

    /**
     * The error after the last retry: a node that could not be reached ({@code RPC_FAIL}) for every
     * failed key is {@code CONNECTION_FAILED}, one that never answered in time ({@code
     * RPC_TIMEOUT}) a {@link DeadlineExceededException}, as the transport reports them for
     * SimpleStorage; anything else {@code STORAGE_ERROR}.
     */
    private TqException exhausted(int[] indices, long[] codes, int[] failed, String message) {
      boolean allRpcFail = true;
      boolean allRpcTimeout = true;
      for (int i : failed) {
        for (int j = 0; j < indices.length; j++) {
          if (indices[j] == i) {
            allRpcFail &= codes[j] == StoreStatus.RPC_FAIL.code();
            allRpcTimeout &= codes[j] == StoreStatus.RPC_TIMEOUT.code();
          }
        }
      }
      if (allRpcTimeout) {
        return new DeadlineExceededException(message);
      }
      return new StorageException(
          allRpcFail ? ErrorCode.CONNECTION_FAILED : ErrorCode.STORAGE_ERROR, message);
    }

    /** Returns the indices to retry; throws for a result that must not be retried. */
    private int[] check(int[] indices, long[] codes) {
      if (codes == null || codes.length != indices.length) {
        throw new StorageException(
            ErrorCode.STORAGE_ERROR,
            operation
                + " returned "
                + (codes == null ? 0 : codes.length)
                + " results, expected "
                + indices.length);
      }
      int[] retry = new int[indices.length];
      int count = 0;
      for (int j = 0; j < indices.length; j++) {
        int i = indices[j];
        long code = codes[j];
        if (code >= 0) {
          long want = expected == null ? 0 : expected[i];
          if (code != want) {
            throw new StorageException(
                ErrorCode.CORRUPT_DATA,
                operation
                    + (expected == null ? " returned " : " read ")
                    + code
                    + (expected == null ? " for key '" : " bytes for key '")
                    + keys.get(i)
                    + "', expected "
                    + want
                    + " (stale or corrupt object)");
          }
        } else if (expected == null && code == StoreStatus.ILLEGAL_CLIENT.code()) {
          // A later upsert of the key preempted this one before it ended: that write stands, as
          // if this one had finished first (last writer wins). Not a failure of this write.
          continue;
        } else if (TRANSIENT_CODES.contains((int) code)) {
          retry[count++] = i;
        } else if (code == StoreStatus.RPC_TIMEOUT.code()) {
          throw new DeadlineExceededException(
              operation
                  + " failed for key '"
                  + keys.get(i)
                  + "' with error codes ["
                  + code
                  + "]: its store node did not answer by the call deadline");
        } else {
          // A missing object is a missing cell, which the storage contract reports as NOT_FOUND.
          throw new StorageException(
              code == StoreStatus.OBJECT_NOT_FOUND.code()
                  ? ErrorCode.NOT_FOUND
                  : ErrorCode.STORAGE_ERROR,
              operation
                  + " failed for key '"
                  + keys.get(i)
                  + "' with non-retryable error code "
                  + code
                  + " ("
                  + StoreStatus.fromCode(code)
                  + ")");
        }
      }
      return java.util.Arrays.copyOf(retry, count);
    }

    private String describeKeys(int[] failed) {
      List<String> out = new ArrayList<>(failed.length);
      for (int i : failed) {
        out.add(keys.get(i));
      }
      return out.toString();
    }

    private String describeCodes(int[] indices, long[] codes, int[] failed) {
      List<Long> out = new ArrayList<>(failed.length);
      for (int i : failed) {
        for (int j = 0; j < indices.length; j++) {
          if (indices[j] == i) {
            out.add(codes[j]);
          }
        }
      }
      return out.toString();
    }
  }

  /**
   * The pause before retry {@code k} (1-based): none before the first, then exponential with
   * jitter.
   */
  long delayBefore(int retry) {
    if (retry <= 1 || baseDelayNs == 0) {
      return 0;
    }
    long exponential = baseDelayNs << Math.min(retry - 2, 20);
    double scale;
    synchronized (this) {
      scale = 0.5 + 0.5 * jitter.nextDouble();
    }
    return Math.max(1, (long) (exponential * scale));
  }
}
