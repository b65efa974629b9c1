package org.transferqueue.codec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.transferqueue.ErrorCode;
import org.transferqueue.Strings;
import org.transferqueue.TqException;

/**
 * Builds a msgpack frame as a gather list: headers and short payloads are packed into one growing
 * heap array, long payloads are kept by reference and copied only when the frame is written out.
 *
 * <pre>
 *   inline:  [hdr hdr short-str hdr | hdr | hdr int ...]
 *                                   ^     ^
 *   borrowed:                 payload 0  payload 1   (each spliced in at its inline position)
 * </pre>
 *
 * <p>So a long string costs {@code String.getBytes} plus one copy into the destination ({@link
 * #writeTo}), however the frame is laid out. Formats are chosen exactly as msgpack-core's {@code
 * MessagePacker} chooses them (smallest integer width, str 8 for 32 to 255 bytes, fixext for
 * power-of-two extension lengths up to 16), so the bytes are identical to that library's.
 *
 * <p>This is the one msgpack writer of the code base: stored values, checkpoints and every wire
 * message. Strings are written as UTF-8; ASCII strings are copied straight into the inline array,
 * without an intermediate byte array, and a string with a lone surrogate, which has no UTF-8 form,
 * is refused with {@link ErrorCode#INVALID_ARGUMENT} ({@link Strings#checkWellFormed}) instead of
 * being sent changed.
 *
 * <pre>{@code
 * MsgpackWriter out = new MsgpackWriter(256);
 * out.writeArrayHeader(2);
 * out.writeLong(7);
 * out.writeString("name", "string");
 * byte[] message = out.toByteArray();
 * }</pre>
 *
 * <p>Not thread-safe: one writer per encode, not modified once the frame is complete. Borrowed
 * payloads must not change until the frame has been written out.
 */
public final class MsgpackWriter {
  /** Payloads at least this long are borrowed instead of copied into the inline array. */
  static final int BORROW_MIN_BYTES = 256;

  /** The largest frame {@link #toByteArray} can return. */
  static final long MAX_ARRAY_BYTES = Integer.MAX_VALUE - 8;

  private static final VarHandle SHORT =
      MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle INT =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final byte[][] NO_PAYLOADS = {};
  private static final int[] NO_POSITIONS = {};

  private byte[] inline;
  private int inlineLength;
  private byte[][] borrowed = NO_PAYLOADS;
  private int[] borrowedAt = NO_POSITIONS;
  private int borrowedCount;
  private long borrowedBytes;
  private boolean callerArray;

  /**
   * An empty frame whose inline array starts at {@code initialBytes} and grows as needed.
   *
   * @param initialBytes the first capacity; a frame of exactly this size is returned by {@link
   *     #toByteArray} without a copy
   */
  public MsgpackWriter(int initialBytes) {
    this.inline = new byte[initialBytes];
  }

  /** A complete frame of exactly these bytes (not copied). */
  static MsgpackWriter of(byte[] frame) {
    MsgpackWriter writer = new MsgpackWriter(0);
    writer.inline = frame;
    writer.inlineLength = frame.length;
    writer.callerArray = true;
    return writer;
  }

  /**
   * The frame length in bytes.
   *
   * @return the bytes written so far
   */
  public long size() {
    return inlineLength + borrowedBytes;
  }

  /** Writes nil. */
  public void writeNil() {
    writeFormat(MsgpackReader.NIL);
  }

  /**
   * Writes a boolean.
   *
   * @param value the value
   */
  public void writeBoolean(boolean value) {
    writeFormat(value ? MsgpackReader.TRUE : MsgpackReader.FALSE);
  }

  /**
   * Writes an integer in the smallest msgpack format that holds it (positive fixint, uint 8 to 64
   * for non-negative values; negative fixint, int 8 to 64 for negative ones).
   *
   * @param v the value
   */
  public void writeLong(long v) {
    if (v < -(1L << 5)) {
      if (v < -(1L << 15)) {
        if (v < -(1L << 31)) {
          writeFormatAndLong(MsgpackReader.INT64, v);
        } else {
          writeFormatAndInt(MsgpackReader.INT32, (int) v);
        }
      } else if (v < -(1L << 7)) {
        writeFormatAndShort(MsgpackReader.INT16, (int) v);
      } else {
        writeFormatAndByte(MsgpackReader.INT8, (int) v);
      }
    } else if (v < (1L << 7)) {
      writeFormat((int) v); // positive or negative fixint
    } else if (v < (1L << 8)) {
      writeFormatAndByte(MsgpackReader.UINT8, (int) v);
    } else if (v < (1L << 16)) {
      writeFormatAndShort(MsgpackReader.UINT16, (int) v);
    } else if (v < (1L << 32)) {
      writeFormatAndInt(MsgpackReader.UINT32, (int) v);
    } else {
      writeFormatAndLong(MsgpackReader.UINT64, v);
    }
  }

  /** Writes a uint 64 whose unsigned value is {@code bits} (2^63 and above). */
  void writeUint64(long bits) {
    writeFormatAndLong(MsgpackReader.UINT64, bits);
  }

  /**
   * Writes a float 64 with the raw bits of {@code value} (NaN payloads kept).
   *
   * @param value the value
   */
  public void writeDouble(double value) {
    writeFormatAndLong(MsgpackReader.FLOAT64, Double.doubleToRawLongBits(value));
  }

  /**
   * Writes a string as UTF-8 in the smallest string format (fixstr, str 8, 16 or 32).
   *
   * @param value the string
   * @param what what the string is, for the refusal of a lone surrogate
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a string that is not valid Unicode
   */
  public void writeString(String value, String what) {
    int n = value.length();
    int start = inlineLength;
    writeStringHeader(n);
    ensure(n);
    byte[] out = inline;
    int at = inlineLength;
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      if (c >= 0x80) {
        inlineLength = start; // not ASCII: its UTF-8 length differs from n
        writeUtf8(value, what);
        return;
      }
      out[at + i] = (byte) c;
    }
    inlineLength = at + n;
  }

  private void writeUtf8(String value, String what) {
    byte[] bytes = Strings.checkWellFormed(value, what).getBytes(StandardCharsets.UTF_8);
    writeStringHeader(bytes.length);
    writePayload(bytes);
  }

  /**
   * Writes a binary (bin 8, 16 or 32) holding a copy of {@code value}.
   *
   * @param value the bytes; copied now
   */
  public void writeBinary(byte[] value) {
    writeBinaryHeader(value.length);
    writeRaw(value, 0, value.length);
  }

  /**
   * Writes an extension (fixext or ext 8, 16, 32) holding a copy of {@code payload}.
   *
   * @param type the extension type
   * @param payload the payload; copied now
   */
  public void writeExtension(byte type, byte[] payload) {
    writeExtensionHeader(type, payload.length);
    writeRaw(payload, 0, payload.length);
  }

  /**
   * Copies raw bytes into the frame, such as the payload after a header or a section that is
   * already msgpack.
   *
   * @param bytes the source
   * @param offset the first byte to copy
   * @param length how many bytes to copy
   */
  public void writeRaw(byte[] bytes, int offset, int length) {
    ensure(length);
    System.arraycopy(bytes, offset, inline, inlineLength, length);
    inlineLength += length;
  }

  /**
   * Writes a string header; exactly {@code length} UTF-8 bytes must follow.
   *
   * @param length the length in bytes
   */
  public void writeStringHeader(int length) {
    if (length < (1 << 5)) {
      writeFormat(0xA0 | length);
    } else if (length < (1 << 8)) {
      writeFormatAndByte(MsgpackReader.STR8, length);
    } else if (length < (1 << 16)) {
      writeFormatAndShort(MsgpackReader.STR16, length);
    } else {
      writeFormatAndInt(MsgpackReader.STR32, length);
    }
  }

  /**
   * Writes a binary header; exactly {@code length} bytes must follow.
   *
   * @param length the length in bytes
   */
  public void writeBinaryHeader(int length) {
    if (length < (1 << 8)) {
      writeFormatAndByte(MsgpackReader.BIN8, length);
    } else if (length < (1 << 16)) {
      writeFormatAndShort(MsgpackReader.BIN16, length);
    } else {
      writeFormatAndInt(MsgpackReader.BIN32, length);
    }
  }

  /**
   * Writes an array header; the next {@code size} values are its elements.
   *
   * @param size the number of elements
   */
  public void writeArrayHeader(int size) {
    if (size < (1 << 4)) {
      writeFormat(0x90 | size);
    } else if (size < (1 << 16)) {
      writeFormatAndShort(MsgpackReader.ARRAY16, size);
    } else {
      writeFormatAndInt(MsgpackReader.ARRAY32, size);
    }
  }

  /**
   * Writes a map header; the next {@code 2 * size} values are its keys and values.
   *
   * @param size the number of entries
   */
  public void writeMapHeader(int size) {
    if (size < (1 << 4)) {
      writeFormat(0x80 | size);
    } else if (size < (1 << 16)) {
      writeFormatAndShort(MsgpackReader.MAP16, size);
    } else {
      writeFormatAndInt(MsgpackReader.MAP32, size);
    }
  }

  /**
   * Writes an extension header, as fixext for power-of-two lengths up to 16; exactly {@code length}
   * payload bytes must follow.
   *
   * @param type the extension type
   * @param length the payload length in bytes
   */
  public void writeExtensionHeader(byte type, int length) {
    int fixext =
        switch (length) {
          case 1 -> MsgpackReader.FIXEXT1;
          case 2 -> MsgpackReader.FIXEXT2;
          case 4 -> MsgpackReader.FIXEXT4;
          case 8 -> MsgpackReader.FIXEXT8;
          case 16 -> MsgpackReader.FIXEXT16;
          default -> -1;
        };
    if (fixext >= 0) {
      writeFormatAndByte(fixext, type);
    } else if (length < (1 << 8)) {
      writeFormatAndByte(MsgpackReader.EXT8, length);
      writeFormat(type);
    } else if (length < (1 << 16)) {
      writeFormatAndShort(MsgpackReader.EXT16, length);
      writeFormat(type);
    } else {
      writeFormatAndInt(MsgpackReader.EXT32, length);
      writeFormat(type);
    }
  }

  /**
   * Appends payload bytes: copied now if short, else borrowed until the frame is written out.
   *
   * @param payload the bytes, which must not change while this frame is in use if borrowed
   */
  void writePayload(byte[] payload) {
    if (payload.length < BORROW_MIN_BYTES) {
      ensure(payload.length);
      System.arraycopy(payload, 0, inline, inlineLength, payload.length);
      inlineLength += payload.length;
      return;
    }
    if (borrowedCount == borrowed.length) {
      int grown = Math.max(4, borrowedCount * 2);
      borrowed = Arrays.copyOf(borrowed, grown);
      borrowedAt = Arrays.copyOf(borrowedAt, grown);
    }
    borrowed[borrowedCount] = payload;
    borrowedAt[borrowedCount] = inlineLength;
    borrowedCount++;
    borrowedBytes += payload.length;
  }

  /**
   * Copies the frame into {@code target} at {@code offset}; each byte is copied once.
   *
   * @param target the destination, heap or native, with at least {@link #size()} bytes from {@code
   *     offset}
   * @param offset where the frame starts in {@code target}
   */
  void writeTo(MemorySegment target, long offset) {
    int from = 0;
    long at = offset;
    for (int i = 0; i < borrowedCount; i++) {
      int to = borrowedAt[i];
      MemorySegment.copy(inline, from, target, ValueLayout.JAVA_BYTE, at, to - from);
      at += to - from;
      byte[] payload = borrowed[i];
      MemorySegment.copy(payload, 0, target, ValueLayout.JAVA_BYTE, at, payload.length);
      at += payload.length;
      from = to;
    }
    MemorySegment.copy(inline, from, target, ValueLayout.JAVA_BYTE, at, inlineLength - from);
  }

  /**
   * The frame as one array: a new one, or the inline array itself when the frame fills it exactly
   * (a later write would move to a new inline array, so the one returned never changes).
   *
   * @return the frame's bytes
   * @throws TqException with {@code INVALID_ARGUMENT} if the frame is longer than {@link
   *     #MAX_ARRAY_BYTES}
   */
  public byte[] toByteArray() {
    long size = size();
    if (size > MAX_ARRAY_BYTES) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "encoded main frame of " + size + " bytes exceeds max=" + MAX_ARRAY_BYTES);
    }
    if (borrowedCount == 0) {
      return inlineLength == inline.length && !callerArray
          ? inline
          : Arrays.copyOf(inline, inlineLength);
    }
    byte[] frame = new byte[(int) size];
    writeTo(MemorySegment.ofArray(frame), 0);
    return frame;
  }

  private void writeFormat(int format) {
    ensure(1);
    inline[inlineLength++] = (byte) format;
  }

  private void writeFormatAndByte(int format, int value) {
    ensure(2);
    inline[inlineLength] = (byte) format;
    inline[inlineLength + 1] = (byte) value;
    inlineLength += 2;
  }

  private void writeFormatAndShort(int format, int value) {
    ensure(3);
    inline[inlineLength] = (byte) format;
    SHORT.set(inline, inlineLength + 1, (short) value);
    inlineLength += 3;
  }

  private void writeFormatAndInt(int format, int value) {
    ensure(5);
    inline[inlineLength] = (byte) format;
    INT.set(inline, inlineLength + 1, value);
    inlineLength += 5;
  }

  private void writeFormatAndLong(int format, long value) {
    ensure(9);
    inline[inlineLength] = (byte) format;
    LONG.set(inline, inlineLength + 1, value);
    inlineLength += 9;
  }

  private void ensure(int bytes) {
    if (bytes > inline.length - inlineLength) {
      long needed = (long) inlineLength + bytes;
      if (needed > MAX_ARRAY_BYTES) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "encoded main frame needs " + needed + " inline bytes, max=" + MAX_ARRAY_BYTES);
      }
      long grown = Math.max(needed, Math.max(64L, 2L * inline.length));
      inline = Arrays.copyOf(inline, (int) Math.min(grown, MAX_ARRAY_BYTES));
      callerArray = false;
    }
  }
}
