package org.transferqueue;

/** A storage backend could not store, load or remove data. */
public class StorageException extends TqException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param code usually {@link ErrorCode#STORAGE_ERROR} or {@link ErrorCode#NOTIFICATION_FAILED}
   * @param message what failed, naming keys or indexes
   */
  public StorageException(ErrorCode code, String message) {
    super(code, message);
  }

  /**
   * Creates the exception with a cause.
   *
   * @param code usually {@link ErrorCode#STORAGE_ERROR} or {@link ErrorCode#NOTIFICATION_FAILED}
   * @param message what failed, naming keys or indexes
   * @param cause the underlying failure
   */
  public StorageException(ErrorCode code, String message, Throwable cause) {
    super(code, message, cause);
  }
}
