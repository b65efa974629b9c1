package org.transferqueue;

/**
 * Stable error codes carried by every {@link TqException} and sent on the wire in error replies.
 *
 * <p>The numeric {@link #value()} of a constant never changes once released; new constants take new
 * numbers. Codes are grouped by hundreds: 1xx bad input, 2xx state and lookups, 3xx resources, 4xx
 * remote calls and protocol, 5xx storage, 9xx internal.
 */
public enum ErrorCode {
  /** An argument is malformed or out of range. */
  INVALID_ARGUMENT(100, Category.ERROR),
  /** A field name is not known where it must be. */
  UNKNOWN_FIELD(101, Category.ERROR),
  /** A key is not known to the key-value index. */
  UNKNOWN_KEY(102, Category.ERROR),
  /** A partition does not exist. */
  UNKNOWN_PARTITION(103, Category.ERROR),
  /** A dtype or shape conflicts with the field schema already registered. */
  SCHEMA_CONFLICT(104, Category.ERROR),
  /** Sizes, row counts or shapes do not agree. */
  SHAPE_MISMATCH(105, Category.ERROR),
  /** A dtype name or code is not one this system knows. */
  UNKNOWN_DTYPE(106, Category.ERROR),
  /** The same key or index appears twice where it must be unique. */
  DUPLICATE_KEY(107, Category.ERROR),
  /** A configuration key is unknown or its value is invalid. */
  INVALID_CONFIGURATION(108, Category.FATAL),
  /** Encoded data (packed buffer, value encoding, checkpoint) is malformed or truncated. */
  CORRUPT_DATA(109, Category.ERROR),

  /** The object or sample asked for does not exist. */
  NOT_FOUND(200, Category.ERROR),
  /** The object already exists and may not be overwritten by this operation. */
  ALREADY_EXISTS(201, Category.ERROR),
  /** The component has been closed. */
  CLOSED(202, Category.ERROR),
  /** The operation is not valid in the current state. */
  ILLEGAL_STATE(203, Category.ERROR),
  /** The component or backend does not support the operation asked for. */
  UNSUPPORTED_OPERATION(204, Category.ERROR),
  /**
   * The metadata names a sample that no longer exists: its global index was cleared since (and may
   * now belong to another sample), so the generation the metadata carries is not the current one.
   * Fetch fresh metadata.
   */
  STALE_METADATA(205, Category.ERROR),

  /** A byte limit of an allocator would be exceeded. */
  OUT_OF_MEMORY(300, Category.ERROR),
  /** A capacity (samples, keys, connections) would be exceeded. */
  CAPACITY_EXCEEDED(301, Category.ERROR),
  /** Memory or buffers were still outstanding when their owner was closed. */
  RESOURCE_LEAK(302, Category.ERROR),

  /** The operation did not finish before its deadline. */
  DEADLINE_EXCEEDED(400, Category.WARN),
  /** A frame or message violates the wire protocol. */
  PROTOCOL_ERROR(401, Category.ERROR),
  /** A frame is longer than the configured maximum. */
  FRAME_TOO_LONG(402, Category.ERROR),
  /** The peer speaks a protocol version this side does not. */
  UNSUPPORTED_VERSION(403, Category.ERROR),
  /** The connection could not be made or was lost. */
  CONNECTION_FAILED(404, Category.ERROR),
  /** The peer refused the request because it was not authenticated. */
  UNAUTHENTICATED(405, Category.ERROR),

  /** A storage backend failed to store, load or remove data. */
  STORAGE_ERROR(500, Category.ERROR),
  /** The storage-to-controller notification of a put failed or was rejected. */
  NOTIFICATION_FAILED(501, Category.ERROR),
  /** A data parser is unknown, failed, or broke its contract (changed keys or row counts). */
  DATA_PARSER_FAILED(502, Category.ERROR),

  /** A broken invariant: a bug. */
  INTERNAL(900, Category.FATAL);

  /** How severe an error is. */
  public enum Category {
    /** The component cannot continue. */
    FATAL,
    /** The request failed; the component keeps serving. */
    ERROR,
    /** An expected, transient condition; retrying may succeed. */
    WARN
  }

  private final int value;
  private final Category category;

  ErrorCode(int value, Category category) {
    this.value = value;
    this.category = category;
  }

  /**
   * The stable numeric value of this code.
   *
   * @return the number sent on the wire
   */
  public int value() {
    return value;
  }

  /**
   * The default severity of errors with this code.
   *
   * @return the category
   */
  public Category category() {
    return category;
  }

  /**
   * Looks a code up by its numeric value.
   *
   * @param value a number previously returned by {@link #value()}
   * @return the code, or {@link #INTERNAL} when the number is unknown (a newer peer)
   */
  public static ErrorCode fromValue(int value) {
    for (ErrorCode code : values()) {
      if (code.value == value) {
        return code;
      }
    }
    return INTERNAL;
  }
}
