package org.transferqueue.transport;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;

/** Builds and maps the transport's typed errors. */
final class Errors {
  private Errors() {}

  /** A lost or failed connection, keeping the cause. */
  static TqException connectionFailed(String what, Throwable cause) {
    if (cause instanceof TqException tq && tq.code() == ErrorCode.CONNECTION_FAILED) {
      return tq;
    }
    return new TqException(
        ErrorCode.CONNECTION_FAILED, what + ": connection failed: " + describe(cause), cause);
  }

  /** The exception a caller sees for an error reply with this code and message. */
  static TqException remote(ErrorCode code, String message, String where) {
    String text = "remote error from " + where + ": " + message;
    return switch (code) {
      case DEADLINE_EXCEEDED -> new DeadlineExceededException(text);
      case PROTOCOL_ERROR, FRAME_TOO_LONG, UNSUPPORTED_VERSION -> new ProtocolException(code, text);
      default -> new TqException(code, text);
    };
  }

  /** The TqException inside a future's failure, or a wrapping INTERNAL one. */
  static TqException unwrap(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof TqException tq) {
      return tq;
    }
    return new TqException(ErrorCode.INTERNAL, "unexpected failure: " + describe(t), t);
  }

  static String describe(Throwable t) {
    String message = t.getMessage();
    return message == null
        ? t.getClass().getSimpleName()
        : t.getClass().getSimpleName() + ": " + message;
  }
}
