package org.transferqueue;

import java.util.Objects;

/**
 * The root of every exception the library throws on purpose.
 *
 * <p>Each carries an {@link ErrorCode} that is stable across versions and travels on the wire, so a
 * remote caller can act on the same code as a local one. Messages name the offending values.
 */
public class TqException extends RuntimeException {
  /** Serialization version; exceptions are never Java-serialized by this library. */
  private static final long serialVersionUID = 1L;

  /** What went wrong. */
  private final ErrorCode code;

  /**
   * Creates an exception.
   *
   * @param code what went wrong
   * @param message a description that names the offending values
   */
  public TqException(ErrorCode code, String message) {
    super(message);
    this.code = Objects.requireNonNull(code, "code");
  }

  /**
   * Creates an exception with a cause.
   *
   * @param code what went wrong
   * @param message a description that names the offending values
   * @param cause the underlying failure
   */
  public TqException(ErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = Objects.requireNonNull(code, "code");
  }

  /**
   * The stable code of this error.
   *
   * @return the code
   */
  public ErrorCode code() {
    return code;
  }

  /**
   * The severity of this error.
   *
   * @return the category of {@link #code()}
   */
  public ErrorCode.Category category() {
    return code.category();
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + code + "]: " + getMessage();
  }
}
