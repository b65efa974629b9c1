package org.transferqueue;

/**
 * Takes the errors of background work that has no caller to throw to: a server's connection
 * threads, a client's cleanup that goes on after its call returned, a metrics collection step.
 * Background threads never swallow an error; they hand it here (STYLE §6).
 *
 * <p>Implementations must be thread-safe and must not throw.
 */
@FunctionalInterface
public interface ErrorHandler {
  /**
   * Takes one error.
   *
   * @param where the work that failed, such as {@code "rollback"} or {@code "request GET_META"}
   * @param error the failure
   */
  void onError(String where, Throwable error);
}
