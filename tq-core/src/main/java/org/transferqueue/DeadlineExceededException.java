package org.transferqueue;

/** An operation did not complete before its deadline; the caller may retry with a new one. */
public class DeadlineExceededException extends TqException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what was waited for and for how long
   */
  public DeadlineExceededException(String message) {
    super(ErrorCode.DEADLINE_EXCEEDED, message);
  }
}
