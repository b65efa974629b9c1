package org.transferqueue.transport;

import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Answers one {@link ReceivedRequest}, from any thread, at most once.
 *
 * <p>The first call of {@link #reply} or {@link #fail} wins; later calls return false and only
 * close the given reply's resources. If the connection has closed meanwhile the answer is dropped
 * (its resources are closed) and the method returns false. Thread-safe.
 */
public interface Responder {
  /**
   * Sends a successful reply.
   *
   * @param reply the reply; its bodies are borrowed and its resources owned until it is written
   * @return true if the reply was queued for writing
   */
  boolean reply(Reply reply);

  /**
   * Sends an error reply carrying the exception's code and message; the caller rethrows it as a
   * {@link TqException} with that code.
   *
   * @param error the error
   * @return true if the error reply was queued for writing
   */
  boolean fail(TqException error);

  /**
   * Sends an error reply.
   *
   * @param code the error code
   * @param message a description naming the offending values
   * @return true if the error reply was queued for writing
   */
  default boolean fail(ErrorCode code, String message) {
    return fail(new TqException(code, message));
  }
}
