package org.transferqueue.codec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.transferqueue.ErrorCode;
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
 * <p>Not thread-safe: one writer per encode, not modified once the frame is complete. Borrowed
 * payloads must not change until the frame has been written out.
 */
final class MsgpackWriter {
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

  /** An empty frame whose inline array starts at {@code initialBytes}. */
  MsgpackWriter(int initialBytes) {
    this.inline = new byte[initialBytes];
  }

  /** A complete frame of exactly these bytes (not copied). */
  static MsgpackWriter of(byte[] frame) {
    MsgpackWriter writer = new MsgpackWriter(0);
    writer.inline = frame;
    writer.inlineLength = frame.length;
    return writer;
  }

  /** The frame length in bytes. */
  long size() {
    return inlineLength + borrowedBytes;
  }

  void writeNil() {
    writeFormat(MsgpackReader.NIL);
  }

  void writeBoolean(boolean value) {
    writeFormat(value ? MsgpackReader.TRUE : MsgpackReader.FALSE);
  }

  /** Writes an integer in the smallest msgpack format that holds it. */
  void writeLong(long v) {
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

  /** Writes a float 64 with the raw bits of {@code value} (NaN payloads kept). */
  void writeDouble(double value) {
    writeFormatAndLong(MsgpackReader.FLOAT64, Double.doubleToRawLongBits(value));
  }

  void writeStringHeader(int length) {
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

  void writeBinaryHeader(int length) {
    if (length < (1 << 8)) {
      writeFormatAndByte(MsgpackReader.BIN8, length);
    } else if (length < (1 << 16)) {
      writeFormatAndShort(MsgpackReader.BIN16, length);
    } else {
      writeFormatAndInt(MsgpackReader.BIN32, length);
    }
  }

  void writeArrayHeader(int size) {
    if (size < (1 << 4)) {
      writeFormat(0x90 | size);
    } else if (size < (1 << 16)) {
      writeFormatAndShort(MsgpackReader.ARRAY16, size);
    } else {
      writeFormatAndInt(MsgpackReader.ARRAY32, size);
    }
  }

  void writeMapHeader(int size) {
    if (size < (1 << 4)) {
      writeFormat(0x80 | size);
    } else if (size < (1 << 16)) {
      writeFormatAndShort(MsgpackReader.MAP16, size);
    } else {
      writeFormatAndInt(MsgpackReader.MAP32, size);
    }
  }

  void writeExtensionHeader(byte type, int length) {
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
   * The frame as one new array.
   *
   * @throws TqException with {@code INVALID_ARGUMENT} if the frame is longer than {@link
   *     #MAX_ARRAY_BYTES}
   */
  byte[] toByteArray() {
    long size = size();
    if (size > MAX_ARRAY_BYTES) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "encoded main frame of " + size + " bytes exceeds max=" + MAX_ARRAY_BYTES);
    }
    if (borrowedCount == 0) {
      return Arrays.copyOf(inline, inlineLength);
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
    }
  }
}
