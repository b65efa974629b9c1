package org.transferqueue.codec;

import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Bytes that {@link MsgpackReader} cannot read as the msgpack it was asked for: truncated input, an
 * unexpected format byte, a length beyond 2^31 - 1, an integer out of range, a string that is not
 * valid UTF-8. Its code is {@link ErrorCode#CORRUPT_DATA}, its message names the decoded value;
 * protocol readers that report {@code PROTOCOL_ERROR} instead wrap {@link #offset()} and {@link
 * #detail()} in their own message.
 */
public final class MsgpackException extends TqException {
  private static final long serialVersionUID = 1L;

  /** Where the offending bytes start. */
  private final long offset;

  /** What was wrong, without the value's name or the offset. */
  private final String detail;

  /**
   * Creates the exception.
   *
   * @param message the whole message, naming the decoded value
   * @param offset where the offending bytes start
   * @param detail what was wrong, without the value's name or the offset
   */
  public MsgpackException(String message, long offset, String detail) {
    super(ErrorCode.CORRUPT_DATA, message);
    this.offset = offset;
    this.detail = detail;
  }

  /**
   * Where the offending bytes start, counted as the reader counts offsets.
   *
   * @return the offset
   */
  public long offset() {
    return offset;
  }

  /**
   * What was wrong, without the value's name or the offset.
   *
   * @return the detail
   */
  public String detail() {
    return detail;
  }
}
