package org.transferqueue.journal;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Little-endian building and reading of record headers, the small descriptions a role puts in front
 * of a record's payload (global indexes, field names, shapes). Heap only: headers are small;
 * payload bytes never pass through here.
 *
 * <p>Not thread-safe; one writer builds one header.
 */
public final class RecordHeader {
  private ByteBuffer buffer = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);

  /** Creates an empty header. */
  public RecordHeader() {}

  private ByteBuffer room(int n) {
    if (buffer.remaining() < n) {
      ByteBuffer bigger =
          ByteBuffer.allocate(Math.max(buffer.capacity() * 2, buffer.position() + n))
              .order(ByteOrder.LITTLE_ENDIAN);
      bigger.put(buffer.flip());
      buffer = bigger;
    }
    return buffer;
  }

  /**
   * Appends one byte.
   *
   * @param value the low 8 bits are written
   * @return this header
   */
  public RecordHeader u8(int value) {
    room(1).put((byte) value);
    return this;
  }

  /**
   * Appends a 32-bit integer.
   *
   * @param value the value
   * @return this header
   */
  public RecordHeader i32(int value) {
    room(4).putInt(value);
    return this;
  }

  /**
   * Appends a 64-bit integer.
   *
   * @param value the value
   * @return this header
   */
  public RecordHeader i64(long value) {
    room(8).putLong(value);
    return this;
  }

  /**
   * Appends a string as {@code u32 length | UTF-8 bytes}.
   *
   * @param value the string
   * @return this header
   */
  public RecordHeader string(String value) {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    room(4 + bytes.length).putInt(bytes.length).put(bytes);
    return this;
  }

  /**
   * The bytes written so far.
   *
   * @return a copy of the header bytes
   */
  public byte[] toBytes() {
    return Arrays.copyOf(buffer.array(), buffer.position());
  }

  /**
   * Reads a header written by {@link RecordHeader}; every read past the end or of an impossible
   * count is {@link ErrorCode#CORRUPT_DATA} naming the record.
   */
  public static final class Reader {
    private final ByteBuffer in;
    private final String what;

    /**
     * Reads {@code header} from its position.
     *
     * @param header the header bytes (little-endian order is set here)
     * @param what the record, for error messages (such as {@code "journal record 17"})
     */
    public Reader(ByteBuffer header, String what) {
      this.in = header.order(ByteOrder.LITTLE_ENDIAN);
      this.what = what;
    }

    /**
     * Reads one unsigned byte.
     *
     * @return the byte, 0-255
     */
    public int u8() {
      try {
        return in.get() & 0xFF;
      } catch (BufferUnderflowException e) {
        throw malformed("ends early");
      }
    }

    /**
     * Reads a 32-bit integer.
     *
     * @return the value
     */
    public int i32() {
      try {
        return in.getInt();
      } catch (BufferUnderflowException e) {
        throw malformed("ends early");
      }
    }

    /**
     * Reads a 64-bit integer.
     *
     * @return the value
     */
    public long i64() {
      try {
        return in.getLong();
      } catch (BufferUnderflowException e) {
        throw malformed("ends early");
      }
    }

    /**
     * Reads a count that each element of needs at least {@code minBytes} of the header.
     *
     * @param minBytes bytes each counted element takes at least
     * @return the count
     */
    public int count(int minBytes) {
      int n = i32();
      if (n < 0 || (long) n * minBytes > in.remaining()) {
        throw malformed("has an impossible count " + n);
      }
      return n;
    }

    /**
     * Reads a string written by {@link RecordHeader#string}.
     *
     * @return the string
     */
    public String string() {
      int n = count(1);
      byte[] bytes = new byte[n];
      in.get(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * Whether the whole header was read.
     *
     * @return true at the end
     */
    public boolean atEnd() {
      return !in.hasRemaining();
    }

    /**
     * A typed error for this record.
     *
     * @param detail what is wrong
     * @return {@link ErrorCode#CORRUPT_DATA} naming the record
     */
    public TqException malformed(String detail) {
      return new TqException(ErrorCode.CORRUPT_DATA, what + " " + detail);
    }
  }
}
