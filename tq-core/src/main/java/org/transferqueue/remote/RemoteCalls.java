package org.transferqueue.remote;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.BiFunction;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;

/**
 * Waiting for the calls of the storage clients (storage units, store nodes, the two-phase
 * checkpoint load) and the typed errors their failures become.
 */
public final class RemoteCalls {
  private RemoteCalls() {}

  /**
   * Waits for every call, even after one failed, mapping each failure as {@link #join} does.
   *
   * @param calls the calls
   * @param first turns the first failure (with its call's index) into the exception to report
   * @return the first failure as {@code first} made it, with the later failures added to it as
   *     suppressed; {@code null} when every call succeeded
   */
  public static RuntimeException joinAll(
      List<? extends CompletableFuture<?>> calls,
      BiFunction<Integer, RuntimeException, RuntimeException> first) {
    RuntimeException failure = null;
    for (int i = 0; i < calls.size(); i++) {
      try {
        join(calls.get(i));
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = first.apply(i, e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    return failure;
  }

  /**
   * Waits for a call and maps its failure.
   *
   * @param future the call
   * @param <T> the result type
   * @return the result
   */
  public static <T> T join(CompletableFuture<T> future) {
    try {
      return future.get();
    } catch (ExecutionException e) {
      throw storageError(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TqException(ErrorCode.CLOSED, "interrupted while waiting for a storage unit", e);
    }
  }

  /**
   * The exception a caller of a remote unit sees: the unit's code as a {@link StorageException}
   * (subclasses such as deadline and protocol errors are kept as they are).
   *
   * @param failure a call's failure
   * @return the typed error
   */
  public static RuntimeException storageError(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof TqException tq) {
      return tq.getClass() == TqException.class
          ? new StorageException(tq.code(), tq.getMessage(), tq)
          : tq;
    }
    if (t instanceof RuntimeException r) {
      return r;
    }
    return new TqException(ErrorCode.INTERNAL, "unexpected failure: " + t, t);
  }
}
