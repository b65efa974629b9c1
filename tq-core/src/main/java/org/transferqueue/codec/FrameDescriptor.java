package org.transferqueue.codec;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;

/**
 * Layout constants and length checks of a transport frame.
 *
 * <p>A frame is a fixed 32-byte little-endian header, the msgpack metadata, zero padding up to the
 * next multiple of 64 bytes, and the raw body, so that the body (tensor bytes) starts 64-byte
 * aligned relative to the frame start:
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                    magic 'T' 'Q' 'F' 'R'                      |  0
 *  +-------------------------------+-------------------------------+
 *  |          version u16          |            type u16           |  4
 *  +-------------------------------+-------------------------------+
 *  |                           flags u32                           |  8
 *  +---------------------------------------------------------------+
 *  |                      metadata length u32                      | 12
 *  +---------------------------------------------------------------+
 *  |                                                               | 16
 *  +                      correlation id u64                       +
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                                                               | 24
 *  +                        body length u64                        +
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |            metadata (msgpack, metadata length bytes)        ... | 32
 *  +---------------------------------------------------------------+
 *  |        zero padding to the next multiple of 64 bytes        ... |
 *  +---------------------------------------------------------------+ bodyOffset
 *  |                 body (body length bytes, raw)               ... |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>A receiver reads the header, calls {@link #checkHeader} (or {@link
 * FrameHeaderFlyweight#validate}) and only then allocates room for metadata and body, so a lying
 * length never causes an allocation. Frame types are defined by the transport layer; this layer
 * only carries the number.
 */
public final class FrameDescriptor {
  /** The magic number: the bytes {@code 'T' 'Q' 'F' 'R'} read as a little-endian int. */
  public static final int MAGIC = 0x52465154;

  /** The only protocol version this implementation speaks. */
  public static final int CURRENT_VERSION = 1;

  /** Byte offset of the magic number. */
  public static final int MAGIC_OFFSET = 0;

  /** Byte offset of the version. */
  public static final int VERSION_OFFSET = 4;

  /** Byte offset of the frame type. */
  public static final int TYPE_OFFSET = 6;

  /** Byte offset of the flags. */
  public static final int FLAGS_OFFSET = 8;

  /** Byte offset of the metadata length. */
  public static final int METADATA_LENGTH_OFFSET = 12;

  /** Byte offset of the correlation id. */
  public static final int CORRELATION_ID_OFFSET = 16;

  /** Byte offset of the body length. */
  public static final int BODY_LENGTH_OFFSET = 24;

  /** Length of the fixed header; the metadata starts here. */
  public static final int HEADER_LENGTH = 32;

  /** Alignment of the body relative to the frame start. */
  public static final int BODY_ALIGNMENT = 64;

  /** Flag bit: the frame answers a request with the same correlation id. */
  public static final int FLAG_RESPONSE = 1;

  /** Flag bit: the frame is an error reply whose metadata carries an error code and message. */
  public static final int FLAG_ERROR = 1 << 1;

  /**
   * Flag bit: the frame's bodies lie in a shared-memory region instead of following on the socket
   * (body length 0; the metadata section carries a shared-body item after the body table).
   */
  public static final int FLAG_SHARED_BODY = 1 << 2;

  /** Largest metadata length the header can express: 2^32 - 1. */
  public static final long MAX_METADATA_LENGTH = 0xFFFF_FFFFL;

  /** Default maximum frame length (1 GiB) for callers without configuration. */
  public static final long DEFAULT_MAX_FRAME_LENGTH = 1L << 30;

  static final ValueLayout.OfInt U32 =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfShort U16 =
      ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfLong U64 =
      ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** (MemorySegment, long offset) -> int, little-endian. */
  static final VarHandle INT_HANDLE = U32.varHandle();

  /** (MemorySegment, long offset) -> short, little-endian. */
  static final VarHandle SHORT_HANDLE = U16.varHandle();

  /** (MemorySegment, long offset) -> long, little-endian. */
  static final VarHandle LONG_HANDLE = U64.varHandle();

  private FrameDescriptor() {}

  /**
   * Where the body starts: the header plus metadata rounded up to {@link #BODY_ALIGNMENT}.
   *
   * @param metadataLength metadata bytes, 0 to {@link #MAX_METADATA_LENGTH}
   * @return the body offset from the frame start
   * @throws TqException with {@code INVALID_ARGUMENT} if the length is out of range
   */
  public static long bodyOffset(long metadataLength) {
    if (metadataLength < 0 || metadataLength > MAX_METADATA_LENGTH) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "metadata length=" + metadataLength + " outside [0, " + MAX_METADATA_LENGTH + "]");
    }
    return align(HEADER_LENGTH + metadataLength);
  }

  /**
   * The whole frame's length: {@link #bodyOffset} plus the body.
   *
   * @param metadataLength metadata bytes
   * @param bodyLength body bytes, zero or more
   * @return the frame length
   * @throws TqException with {@code INVALID_ARGUMENT} for negative or overflowing lengths
   */
  public static long frameLength(long metadataLength, long bodyLength) {
    long offset = bodyOffset(metadataLength);
    if (bodyLength < 0 || bodyLength > Long.MAX_VALUE - offset) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "body length=" + bodyLength + " is negative or overflows the frame length");
    }
    return offset + bodyLength;
  }

  /**
   * Checks the fields of a received header before anything is allocated for the frame.
   *
   * @param magic the magic number read
   * @param version the version read
   * @param metadataLength the metadata length read, as an unsigned value
   * @param bodyLength the body length read; negative values are lengths of 2^63 or more
   * @param maxFrameLength the configured maximum frame length
   * @return the frame length, at most {@code maxFrameLength}
   * @throws ProtocolException with {@code PROTOCOL_ERROR} for a wrong magic number, {@code
   *     UNSUPPORTED_VERSION} for another version, {@code FRAME_TOO_LONG} naming the lengths when
   *     the frame would exceed the maximum
   */
  public static long checkHeader(
      int magic, int version, long metadataLength, long bodyLength, long maxFrameLength) {
    if (magic != MAGIC) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "bad frame magic=0x"
              + Integer.toHexString(magic)
              + ", expected 0x"
              + Integer.toHexString(MAGIC));
    }
    if (version != CURRENT_VERSION) {
      throw new ProtocolException(
          ErrorCode.UNSUPPORTED_VERSION,
          "frame version=" + version + " is not supported, this side speaks " + CURRENT_VERSION);
    }
    checkLengths(metadataLength, bodyLength, maxFrameLength);
    return align(HEADER_LENGTH + metadataLength) + bodyLength;
  }

  /**
   * Checks that a frame with these lengths fits the configured maximum; used by senders before they
   * write and by receivers before they allocate.
   *
   * @param metadataLength metadata bytes
   * @param bodyLength body bytes; negative values are lengths of 2^63 or more
   * @param maxFrameLength the configured maximum frame length
   * @throws ProtocolException with {@code FRAME_TOO_LONG} naming the lengths and the maximum
   */
  public static void checkLengths(long metadataLength, long bodyLength, long maxFrameLength) {
    boolean tooLong =
        metadataLength < 0
            || metadataLength > MAX_METADATA_LENGTH
            || bodyLength < 0
            || align(HEADER_LENGTH + metadataLength) > maxFrameLength
            || bodyLength > maxFrameLength - align(HEADER_LENGTH + metadataLength);
    if (tooLong) {
      throw new ProtocolException(
          ErrorCode.FRAME_TOO_LONG,
          "frame too long: metadata length="
              + Long.toUnsignedString(metadataLength)
              + ", body length="
              + Long.toUnsignedString(bodyLength)
              + " > max frame length="
              + maxFrameLength);
    }
  }

  /**
   * Rounds a length up to a multiple of {@link #BODY_ALIGNMENT}.
   *
   * @param length a non-negative length
   * @return the aligned length
   */
  public static long align(long length) {
    return (length + BODY_ALIGNMENT - 1) & -BODY_ALIGNMENT;
  }
}
