package org.transferqueue.codec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigInteger;
import java.nio.ByteOrder;
import org.transferqueue.ErrorCode;
import org.transferqueue.Strings;
import org.transferqueue.TqException;

/**
 * A bounds-checked msgpack cursor over a memory segment or a heap array, read in place: the one
 * msgpack reader of the code base (stored values, checkpoints, every wire message).
 *
 * <p>Every read first checks that its bytes remain, so truncated input is reported as a {@link
 * MsgpackException} ({@link ErrorCode#CORRUPT_DATA}, "is not valid msgpack at offset=...") naming
 * the value, never as an out-of-bounds read, and a declared length is checked against the bytes
 * that remain before anything is allocated. Strings must be valid UTF-8 ({@link
 * Strings#decodeUtf8}). Payloads (strings, binaries) are copied once, from the input into their
 * result; strings of a heap array are decoded straight from it. Offsets in messages count from the
 * start of the main frame. Not thread-safe; one per decode.
 *
 * <pre>{@code
 * MsgpackReader in = new MsgpackReader(bytes, "reply");
 * int n = in.readArrayHeader();
 * long id = in.readLong();
 * String name = in.tryReadNil() ? null : in.readString();
 * }</pre>
 */
public final class MsgpackReader {
  static final int NIL = 0xC0;
  static final int NEVER_USED = 0xC1;
  static final int FALSE = 0xC2;
  static final int TRUE = 0xC3;
  static final int BIN8 = 0xC4;
  static final int BIN16 = 0xC5;
  static final int BIN32 = 0xC6;
  static final int EXT8 = 0xC7;
  static final int EXT16 = 0xC8;
  static final int EXT32 = 0xC9;
  static final int FLOAT32 = 0xCA;
  static final int FLOAT64 = 0xCB;
  static final int UINT8 = 0xCC;
  static final int UINT16 = 0xCD;
  static final int UINT32 = 0xCE;
  static final int UINT64 = 0xCF;
  static final int INT8 = 0xD0;
  static final int INT16 = 0xD1;
  static final int INT32 = 0xD2;
  static final int INT64 = 0xD3;
  static final int FIXEXT1 = 0xD4;
  static final int FIXEXT2 = 0xD5;
  static final int FIXEXT4 = 0xD6;
  static final int FIXEXT8 = 0xD7;
  static final int FIXEXT16 = 0xD8;
  static final int STR8 = 0xD9;
  static final int STR16 = 0xDA;
  static final int STR32 = 0xDB;
  static final int ARRAY16 = 0xDC;
  static final int ARRAY32 = 0xDD;
  static final int MAP16 = 0xDE;
  static final int MAP32 = 0xDF;

  private static final ValueLayout.OfShort I16 =
      ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
  private static final ValueLayout.OfInt I32 =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
  private static final ValueLayout.OfLong I64 =
      ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
  private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);

  private final MemorySegment segment;
  private final byte[] array;
  private final long limit;
  private final long base;
  private final String valueName;
  private final ByteScratch scratch;
  private long position;
  private byte extensionType;

  /**
   * A reader over a whole heap message; offsets count from its first byte.
   *
   * @param message the msgpack bytes; not copied, not modified
   * @param valueName what is being decoded, for messages
   */
  public MsgpackReader(byte[] message, String valueName) {
    this(MemorySegment.ofArray(message), message, 0, valueName, new ByteScratch());
  }

  /**
   * A reader over all of {@code segment}.
   *
   * @param segment the msgpack bytes; not copied
   * @param base the offset of {@code segment} in the main frame, for messages
   * @param valueName what is being decoded, for messages
   */
  MsgpackReader(MemorySegment segment, long base, String valueName) {
    this(segment, base, valueName, new ByteScratch());
  }

  /**
   * A reader over all of {@code segment} that stages strings in {@code scratch}.
   *
   * @param segment the msgpack bytes; not copied
   * @param base the offset of {@code segment} in the main frame, for messages
   * @param valueName what is being decoded, for messages
   * @param scratch where string bytes are staged; shared by the readers of one decoding thread
   */
  MsgpackReader(MemorySegment segment, long base, String valueName, ByteScratch scratch) {
    this(segment, null, base, valueName, scratch);
  }

  private MsgpackReader(
      MemorySegment segment, byte[] array, long base, String valueName, ByteScratch scratch) {
    this.segment = segment;
    this.array = array;
    this.limit = segment.byteSize();
    this.base = base;
    this.valueName = valueName;
    this.scratch = scratch;
  }

  /** The scratch this reader stages strings in, for readers of nested payloads. */
  ByteScratch scratch() {
    return scratch;
  }

  /**
   * The offset of the next byte, counted from the start of the main frame (of the message for a
   * heap reader).
   *
   * @return the offset
   */
  public long offset() {
    return base + position;
  }

  /**
   * The bytes not read yet.
   *
   * @return the count
   */
  public long remaining() {
    return limit - position;
  }

  /**
   * Whether bytes remain to be read.
   *
   * @return true if at least one byte remains
   */
  public boolean hasRemaining() {
    return position < limit;
  }

  /**
   * The format byte of the next value, without consuming it.
   *
   * @return the format byte, 0 to 255
   * @throws MsgpackException if no byte remains
   */
  public int peekFormat() {
    require(1);
    return array != null
        ? array[(int) position] & 0xFF
        : Byte.toUnsignedInt(segment.get(ValueLayout.JAVA_BYTE, position));
  }

  /**
   * The msgpack type of the next value, without consuming it.
   *
   * @return the type
   * @throws MsgpackException if no byte remains
   */
  public MsgpackType peekType() {
    return MsgpackType.of(peekFormat());
  }

  /**
   * Consumes a nil if one is next.
   *
   * @return true if a nil was consumed
   * @throws MsgpackException if no byte remains
   */
  public boolean tryReadNil() {
    if (peekFormat() == NIL) {
      position++;
      return true;
    }
    return false;
  }

  /**
   * Reads a boolean.
   *
   * @return the value
   * @throws MsgpackException if the next value is not a boolean
   */
  public boolean readBoolean() {
    long start = offset();
    int format = readFormat();
    return switch (format) {
      case TRUE -> true;
      case FALSE -> false;
      default -> throw unexpected(start, format, "a boolean");
    };
  }

  /**
   * Reads a float 64, or a float 32 widened to a double.
   *
   * @return the value
   * @throws MsgpackException if the next value is not a float
   */
  public double readDouble() {
    long start = offset();
    int format = readFormat();
    return switch (format) {
      case FLOAT64 -> Double.longBitsToDouble(readI64());
      case FLOAT32 -> Float.intBitsToFloat(readI32());
      default -> throw unexpected(start, format, "a float");
    };
  }

  /**
   * Reads a map header.
   *
   * @return the number of entries
   * @throws MsgpackException if the next value is not a map
   */
  public int readMapHeader() {
    long start = offset();
    int format = readFormat();
    if (format >= 0x80 && format <= 0x8F) {
      return format & 0x0F;
    }
    return switch (format) {
      case MAP16 -> readU16();
      case MAP32 -> readLength32();
      default -> throw unexpected(start, format, "a map");
    };
  }

  /**
   * Reads a string header; the string's UTF-8 bytes follow.
   *
   * @return the length in bytes, not yet checked against the bytes that remain
   * @throws MsgpackException if the next value is not a string
   */
  public int readStringHeader() {
    long start = offset();
    int format = readFormat();
    if (format >= 0xA0 && format <= 0xBF) {
      return format & 0x1F;
    }
    return switch (format) {
      case STR8 -> readU8();
      case STR16 -> readU16();
      case STR32 -> readLength32();
      default -> throw unexpected(start, format, "a string");
    };
  }

  /**
   * Reads a binary header; the bytes follow.
   *
   * @return the length in bytes, not yet checked against the bytes that remain
   * @throws MsgpackException if the next value is not a binary
   */
  public int readBinaryHeader() {
    long start = offset();
    int format = readFormat();
    return switch (format) {
      case BIN8 -> readU8();
      case BIN16 -> readU16();
      case BIN32 -> readLength32();
      default -> throw unexpected(start, format, "a binary");
    };
  }

  /**
   * Reads a binary value.
   *
   * @return a copy of its bytes
   * @throws MsgpackException if the next value is not a binary or is truncated
   */
  public byte[] readBinary() {
    return readBytes(readBinaryHeader());
  }

  /**
   * Reads an extension header; its type is then {@link #extensionType()}, its payload follows.
   *
   * @return the payload length in bytes, not yet checked against the bytes that remain
   * @throws MsgpackException if the next value is not an extension
   */
  public int readExtensionHeader() {
    long start = offset();
    int format = readFormat();
    int length =
        switch (format) {
          case FIXEXT1 -> 1;
          case FIXEXT2 -> 2;
          case FIXEXT4 -> 4;
          case FIXEXT8 -> 8;
          case FIXEXT16 -> 16;
          case EXT8 -> readU8();
          case EXT16 -> readU16();
          case EXT32 -> readLength32();
          default -> throw unexpected(start, format, "an extension");
        };
    extensionType = readI8();
    return length;
  }

  /**
   * The type of the extension whose header {@link #readExtensionHeader()} read last.
   *
   * @return the signed extension type
   */
  public byte extensionType() {
    return extensionType;
  }

  /** A view of the next {@code length} bytes, which the caller has checked remain; skips them. */
  MemorySegment slice(int length) {
    MemorySegment slice = segment.asSlice(position, length);
    position += length;
    return slice;
  }

  int readFormat() {
    return readU8();
  }

  int readU8() {
    require(1);
    if (array != null) {
      return array[(int) position++] & 0xFF;
    }
    return Byte.toUnsignedInt(segment.get(ValueLayout.JAVA_BYTE, position++));
  }

  byte readI8() {
    require(1);
    return segment.get(ValueLayout.JAVA_BYTE, position++);
  }

  int readU16() {
    return Short.toUnsignedInt(readI16());
  }

  short readI16() {
    require(2);
    short value = segment.get(I16, position);
    position += 2;
    return value;
  }

  int readI32() {
    require(4);
    int value = segment.get(I32, position);
    position += 4;
    return value;
  }

  long readU32() {
    return Integer.toUnsignedLong(readI32());
  }

  long readI64() {
    require(8);
    long value = segment.get(I64, position);
    position += 8;
    return value;
  }

  /** A 32-bit length, which must fit a Java array (below 2^31). */
  int readLength32() {
    long start = offset();
    int length = readI32();
    if (length < 0) {
      throw invalid(start, "length " + Integer.toUnsignedString(length) + " exceeds 2^31 - 1");
    }
    return length;
  }

  /** The value of a uint 64: a Long below 2^63, else a BigInteger. */
  Object readUint64() {
    long bits = readI64();
    return bits >= 0 ? (Object) bits : BigInteger.valueOf(bits).add(TWO_TO_64);
  }

  /**
   * Reads the next {@code length} bytes as strict UTF-8 ({@link Strings#decodeUtf8}: the JDK's fast
   * path, checked again strictly only when it produced U+FFFD).
   *
   * @param length the string's length in bytes, from its header
   * @return the string
   * @throws MsgpackException if fewer bytes remain or they are not valid UTF-8
   */
  public String readString(int length) {
    long start = offset();
    require(length);
    String value;
    if (array != null) {
      value = Strings.decodeUtf8(array, (int) position, length);
    } else {
      byte[] bytes = scratch.atLeast(length);
      MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, position, bytes, 0, length);
      value = Strings.decodeUtf8(bytes, 0, length);
    }
    position += length;
    if (value == null) {
      throw new MsgpackException(
          "value " + valueName + " has a string that is not valid UTF-8 at offset=" + start,
          start,
          "a string of " + length + " bytes is not valid UTF-8");
    }
    return value;
  }

  /**
   * Copies the next {@code length} bytes to a new array.
   *
   * @param length how many bytes
   * @return the copy
   * @throws MsgpackException if fewer bytes remain
   */
  public byte[] readBytes(int length) {
    require(length);
    byte[] bytes = new byte[length];
    MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, position, bytes, 0, length);
    position += length;
    return bytes;
  }

  /**
   * Reads an integer of any msgpack width that fits a long.
   *
   * @return the value
   * @throws MsgpackException if the next value is not an integer, or a uint 64 above 2^63 - 1
   */
  public long readLong() {
    long start = offset();
    int format = readFormat();
    if (format <= 0x7F || format >= 0xE0) {
      return (byte) format;
    }
    return switch (format) {
      case UINT8 -> readU8();
      case UINT16 -> readU16();
      case UINT32 -> readU32();
      case UINT64 -> {
        long bits = readI64();
        if (bits < 0) {
          throw invalid(start, "integer " + Long.toUnsignedString(bits) + " exceeds 2^63 - 1");
        }
        yield bits;
      }
      case INT8 -> readI8();
      case INT16 -> readI16();
      case INT32 -> readI32();
      case INT64 -> readI64();
      default -> throw unexpected(start, format, "an integer");
    };
  }

  /**
   * Reads an array header.
   *
   * @return the number of elements
   * @throws MsgpackException if the next value is not an array
   */
  public int readArrayHeader() {
    long start = offset();
    int format = readFormat();
    if (format >= 0x90 && format <= 0x9F) {
      return format & 0x0F;
    }
    return switch (format) {
      case ARRAY16 -> readU16();
      case ARRAY32 -> readLength32();
      default -> throw unexpected(start, format, "an array");
    };
  }

  /**
   * Reads a string header and its UTF-8 bytes.
   *
   * @return the string
   * @throws MsgpackException if the next value is not a string, is truncated or not valid UTF-8
   */
  public String readString() {
    return readString(readStringHeader());
  }

  TqException corrupt(String detail, Throwable cause) {
    return new TqException(ErrorCode.CORRUPT_DATA, "value " + valueName + " " + detail, cause);
  }

  /** Input that is not msgpack at all, reported with the offset where it starts. */
  MsgpackException invalid(long at, String detail) {
    return new MsgpackException(
        "value " + valueName + " is not valid msgpack at offset=" + at + ": " + detail, at, detail);
  }

  private MsgpackException unexpected(long at, int format, String expected) {
    return invalid(
        at, "expected " + expected + ", found format byte 0x" + Integer.toHexString(format));
  }

  private void require(long count) {
    if (count > limit - position) {
      throw invalid(
          offset(), "needs " + count + " more bytes but only " + (limit - position) + " remain");
    }
  }
}
