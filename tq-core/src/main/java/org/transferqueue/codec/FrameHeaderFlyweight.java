package org.transferqueue.codec;

import static org.transferqueue.codec.FrameDescriptor.BODY_LENGTH_OFFSET;
import static org.transferqueue.codec.FrameDescriptor.CORRELATION_ID_OFFSET;
import static org.transferqueue.codec.FrameDescriptor.FLAGS_OFFSET;
import static org.transferqueue.codec.FrameDescriptor.HEADER_LENGTH;
import static org.transferqueue.codec.FrameDescriptor.INT_HANDLE;
import static org.transferqueue.codec.FrameDescriptor.LONG_HANDLE;
import static org.transferqueue.codec.FrameDescriptor.MAGIC_OFFSET;
import static org.transferqueue.codec.FrameDescriptor.METADATA_LENGTH_OFFSET;
import static org.transferqueue.codec.FrameDescriptor.SHORT_HANDLE;
import static org.transferqueue.codec.FrameDescriptor.TYPE_OFFSET;
import static org.transferqueue.codec.FrameDescriptor.VERSION_OFFSET;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;

/**
 * A re-pointable view over the header of a frame laid out as in {@link FrameDescriptor}, for
 * reading and writing its fields in place without allocating.
 *
 * <p>The flyweight holds no bytes of its own: {@link #wrap} points it at a segment whose first
 * {@link FrameDescriptor#HEADER_LENGTH} bytes are the header; if the segment also holds the
 * metadata and body, {@link #metadata()} and {@link #body()} slice them. Not thread-safe: one
 * flyweight per connection reader or writer.
 *
 * <pre>{@code
 * FrameHeaderFlyweight header = new FrameHeaderFlyweight();
 * // send side
 * header.wrap(out).writeHeader(type, FrameDescriptor.FLAG_RESPONSE, id, meta.length, bodyBytes);
 * header.putMetadata(MemorySegment.ofArray(meta));  // also zeroes the padding
 * // receive side: read 32 bytes into `in`, then
 * long frameLength = header.wrap(in).validate(maxFrameLength);  // before allocating anything
 * }</pre>
 */
public final class FrameHeaderFlyweight {
  private MemorySegment segment = MemorySegment.NULL;

  /** Creates a flyweight pointing at nothing; call {@link #wrap} before use. */
  public FrameHeaderFlyweight() {}

  /**
   * Points this flyweight at a frame starting at byte 0 of a segment.
   *
   * @param frame a segment of at least {@link FrameDescriptor#HEADER_LENGTH} bytes; not copied
   * @return this flyweight
   * @throws TqException with {@code INVALID_ARGUMENT} if the segment is shorter than a header
   */
  public FrameHeaderFlyweight wrap(MemorySegment frame) {
    Objects.requireNonNull(frame, "frame");
    if (frame.byteSize() < HEADER_LENGTH) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "frame segment has " + frame.byteSize() + " bytes < header length=" + HEADER_LENGTH);
    }
    this.segment = frame;
    return this;
  }

  /**
   * Points this flyweight at a frame in a buffer, from its position to its limit.
   *
   * @param frame a heap or direct buffer; its position and limit are not changed
   * @return this flyweight
   * @throws TqException with {@code INVALID_ARGUMENT} if fewer than a header's bytes remain
   */
  public FrameHeaderFlyweight wrap(ByteBuffer frame) {
    return wrap(MemorySegment.ofBuffer(frame));
  }

  /**
   * The segment this flyweight points at.
   *
   * @return the wrapped segment
   */
  public MemorySegment segment() {
    return segment;
  }

  /**
   * Writes magic, current version and all fields; leaves metadata and padding alone.
   *
   * @param type the frame type, 0 to 65535
   * @param flags flag bits such as {@link FrameDescriptor#FLAG_RESPONSE}
   * @param correlationId the request's correlation id
   * @param metadataLength the metadata bytes that follow the header
   * @param bodyLength the body bytes that follow the padding
   * @return this flyweight
   * @throws TqException with {@code INVALID_ARGUMENT} for a type or length out of range
   */
  public FrameHeaderFlyweight writeHeader(
      int type, int flags, long correlationId, long metadataLength, long bodyLength) {
    FrameDescriptor.frameLength(metadataLength, bodyLength);
    INT_HANDLE.set(segment, (long) MAGIC_OFFSET, FrameDescriptor.MAGIC);
    SHORT_HANDLE.set(segment, (long) VERSION_OFFSET, (short) FrameDescriptor.CURRENT_VERSION);
    return type(type)
        .flags(flags)
        .correlationId(correlationId)
        .metadataLength(metadataLength)
        .bodyLength(bodyLength);
  }

  /**
   * Checks magic, version and lengths; call it before allocating room for the frame.
   *
   * @param maxFrameLength the configured maximum frame length
   * @return the frame length
   * @throws ProtocolException as {@link FrameDescriptor#checkHeader} does
   */
  public long validate(long maxFrameLength) {
    return FrameDescriptor.checkHeader(
        magic(), version(), metadataLength(), bodyLength(), maxFrameLength);
  }

  /**
   * The magic number.
   *
   * @return the value at {@link FrameDescriptor#MAGIC_OFFSET}
   */
  public int magic() {
    return (int) INT_HANDLE.get(segment, (long) MAGIC_OFFSET);
  }

  /**
   * The protocol version.
   *
   * @return the unsigned 16-bit version
   */
  public int version() {
    return Short.toUnsignedInt((short) SHORT_HANDLE.get(segment, (long) VERSION_OFFSET));
  }

  /**
   * The frame type.
   *
   * @return the unsigned 16-bit type
   */
  public int type() {
    return Short.toUnsignedInt((short) SHORT_HANDLE.get(segment, (long) TYPE_OFFSET));
  }

  /**
   * Sets the frame type.
   *
   * @param type 0 to 65535
   * @return this flyweight
   * @throws TqException with {@code INVALID_ARGUMENT} if out of range
   */
  public FrameHeaderFlyweight type(int type) {
    if (type < 0 || type > 0xFFFF) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "frame type=" + type + " not in [0, 65535]");
    }
    SHORT_HANDLE.set(segment, (long) TYPE_OFFSET, (short) type);
    return this;
  }

  /**
   * The flag bits.
   *
   * @return the flags
   */
  public int flags() {
    return (int) INT_HANDLE.get(segment, (long) FLAGS_OFFSET);
  }

  /**
   * Sets the flag bits.
   *
   * @param flags the flags
   * @return this flyweight
   */
  public FrameHeaderFlyweight flags(int flags) {
    INT_HANDLE.set(segment, (long) FLAGS_OFFSET, flags);
    return this;
  }

  /**
   * The correlation id that pairs a response with its request.
   *
   * @return the id
   */
  public long correlationId() {
    return (long) LONG_HANDLE.get(segment, (long) CORRELATION_ID_OFFSET);
  }

  /**
   * Sets the correlation id.
   *
   * @param correlationId the id
   * @return this flyweight
   */
  public FrameHeaderFlyweight correlationId(long correlationId) {
    LONG_HANDLE.set(segment, (long) CORRELATION_ID_OFFSET, correlationId);
    return this;
  }

  /**
   * The metadata length.
   *
   * @return the unsigned 32-bit length
   */
  public long metadataLength() {
    return Integer.toUnsignedLong((int) INT_HANDLE.get(segment, (long) METADATA_LENGTH_OFFSET));
  }

  /**
   * Sets the metadata length.
   *
   * @param metadataLength 0 to {@link FrameDescriptor#MAX_METADATA_LENGTH}
   * @return this flyweight
   * @throws TqException with {@code INVALID_ARGUMENT} if out of range
   */
  public FrameHeaderFlyweight metadataLength(long metadataLength) {
    FrameDescriptor.bodyOffset(metadataLength);
    INT_HANDLE.set(segment, (long) METADATA_LENGTH_OFFSET, (int) metadataLength);
    return this;
  }

  /**
   * The body length; a negative value means a length of 2^63 or more, which {@link #validate}
   * rejects.
   *
   * @return the body length
   */
  public long bodyLength() {
    return (long) LONG_HANDLE.get(segment, (long) BODY_LENGTH_OFFSET);
  }

  /**
   * Sets the body length.
   *
   * @param bodyLength zero or more
   * @return this flyweight
   * @throws TqException with {@code INVALID_ARGUMENT} if negative
   */
  public FrameHeaderFlyweight bodyLength(long bodyLength) {
    if (bodyLength < 0) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "body length=" + bodyLength + " < 0");
    }
    LONG_HANDLE.set(segment, (long) BODY_LENGTH_OFFSET, bodyLength);
    return this;
  }

  /**
   * Where the body starts, from the metadata length in the header.
   *
   * @return the 64-byte aligned body offset
   */
  public long bodyOffset() {
    return FrameDescriptor.bodyOffset(metadataLength());
  }

  /**
   * The frame length from the header fields; only meaningful after {@link #validate}.
   *
   * @return body offset plus body length
   */
  public long frameLength() {
    return FrameDescriptor.frameLength(metadataLength(), bodyLength());
  }

  /**
   * Copies the metadata after the header and zeroes the padding up to the body offset. The header's
   * metadata length must already equal {@code metadata.byteSize()}.
   *
   * @param metadata the encoded metadata
   * @return this flyweight
   * @throws TqException with {@code INVALID_ARGUMENT} if the length differs from the header or the
   *     wrapped segment is shorter than the body offset
   */
  public FrameHeaderFlyweight putMetadata(MemorySegment metadata) {
    long length = metadataLength();
    if (metadata.byteSize() != length) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "metadata has " + metadata.byteSize() + " bytes, header says " + length);
    }
    long bodyOffset = bodyOffset();
    if (bodyOffset > segment.byteSize()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "frame segment has " + segment.byteSize() + " bytes < body offset=" + bodyOffset);
    }
    MemorySegment.copy(metadata, 0, segment, HEADER_LENGTH, length);
    segment.asSlice(HEADER_LENGTH + length, bodyOffset - HEADER_LENGTH - length).fill((byte) 0);
    return this;
  }

  /**
   * A view of the metadata bytes inside the wrapped segment.
   *
   * @return a slice of {@link #metadataLength()} bytes after the header
   * @throws ProtocolException with {@code PROTOCOL_ERROR} if the wrapped segment is shorter
   */
  public MemorySegment metadata() {
    long length = metadataLength();
    requireWrapped(HEADER_LENGTH + length, "metadata");
    return segment.asSlice(HEADER_LENGTH, length);
  }

  /**
   * A view of the body bytes inside the wrapped segment.
   *
   * @return a slice of {@link #bodyLength()} bytes at {@link #bodyOffset()}
   * @throws ProtocolException with {@code PROTOCOL_ERROR} if the wrapped segment is shorter
   */
  public MemorySegment body() {
    long offset = bodyOffset();
    long length = bodyLength();
    if (length < 0 || length > segment.byteSize() - offset) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "frame body at offset="
              + offset
              + " length="
              + Long.toUnsignedString(length)
              + " exceeds the "
              + segment.byteSize()
              + " bytes held");
    }
    return segment.asSlice(offset, length);
  }

  private void requireWrapped(long end, String what) {
    if (end > segment.byteSize()) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "frame "
              + what
              + " ends at offset="
              + end
              + " beyond the "
              + segment.byteSize()
              + " bytes held");
    }
  }

  @Override
  public String toString() {
    return "FrameHeader[version="
        + version()
        + ", type="
        + type()
        + ", flags=0x"
        + Integer.toHexString(flags())
        + ", correlationId="
        + correlationId()
        + ", metadataLength="
        + metadataLength()
        + ", bodyLength="
        + Long.toUnsignedString(bodyLength())
        + "]";
  }
}
