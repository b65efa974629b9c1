package org.transferqueue;

/** A frame or message violated the wire protocol; the connection that carried it may be closed. */
public class ProtocolException extends TqException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param code {@link ErrorCode#PROTOCOL_ERROR}, {@link ErrorCode#FRAME_TOO_LONG} or {@link
   *     ErrorCode#UNSUPPORTED_VERSION}
   * @param message what was wrong, with the offending values
   */
  public ProtocolException(ErrorCode code, String message) {
    super(code, message);
  }

  /**
   * Creates the exception with the failure that revealed the violation.
   *
   * @param code {@link ErrorCode#PROTOCOL_ERROR}, {@link ErrorCode#FRAME_TOO_LONG} or {@link
   *     ErrorCode#UNSUPPORTED_VERSION}
   * @param message what was wrong, with the offending values
   * @param cause the failure, such as a decoder refusing a missing value
   */
  public ProtocolException(ErrorCode code, String message, Throwable cause) {
    super(code, message, cause);
  }
}
