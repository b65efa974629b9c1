package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.codec.MsgpackException;
import org.transferqueue.codec.MsgpackReader;
import org.transferqueue.codec.MsgpackWriter;

/**
 * Encodes and decodes the metadata section of a message: the body table followed by the application
 * metadata ({@link MessageDescriptor}). Stateless.
 *
 * @param bodyLengths the lengths of the body segments, in order
 * @param applicationMetadata the application's metadata bytes
 */
record BodyTable(long[] bodyLengths, byte[] applicationMetadata) {

  /**
   * Encodes a metadata section; the caller has checked the limits. Written with the {@code codec}
   * cursor straight into one array of the exact size, in msgpack's shortest forms, so a frame costs
   * one small array.
   */
  static byte[] encode(List<? extends MemorySegment> bodies, byte[] appMeta) {
    int count = bodies.size();
    int size = arrayHeaderSize(count) + appMeta.length;
    for (int i = 0; i < count; i++) {
      size += uintSize(bodies.get(i).byteSize());
    }
    MsgpackWriter out = new MsgpackWriter(size);
    out.writeArrayHeader(count);
    for (int i = 0; i < count; i++) {
      out.writeLong(bodies.get(i).byteSize());
    }
    out.writeRaw(appMeta, 0, appMeta.length);
    return out.toByteArray();
  }

  private static int arrayHeaderSize(int count) {
    return count < 16 ? 1 : count < 0x1_0000 ? 3 : 5;
  }

  /** The bytes of a non-negative integer in its shortest msgpack form. */
  static int uintSize(long value) {
    if (value < 0x80) {
      return 1;
    }
    if (value < 0x100) {
      return 2;
    }
    if (value < 0x1_0000) {
      return 3;
    }
    return value < 0x1_0000_0000L ? 5 : 9;
  }

  /**
   * Decodes a received metadata section and checks the table against the limits and the header.
   *
   * @throws ProtocolException with {@code PROTOCOL_ERROR} for a malformed table or lengths that do
   *     not add up to {@code headerBodyLength}, {@code FRAME_TOO_LONG} for too many or too long
   *     segments
   */
  static BodyTable decode(byte[] section, long headerBodyLength, TransportConfig config) {
    return decode(section, headerBodyLength, config, false);
  }

  /**
   * Decodes the metadata section of a frame flagged {@code FLAG_SHARED_BODY}: the lengths are
   * checked against the limits but not against the header (whose body length is 0); the application
   * metadata then starts with the shared-body item.
   *
   * @throws ProtocolException as {@link #decode(byte[], long, TransportConfig)}, and {@code
   *     PROTOCOL_ERROR} for a header body length other than 0
   */
  static BodyTable decodeShared(byte[] section, long headerBodyLength, TransportConfig config) {
    if (headerBodyLength != 0) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "a frame with shared bodies has header body length=" + headerBodyLength + ", not 0");
    }
    return decode(section, 0, config, true);
  }

  private static BodyTable decode(
      byte[] section, long headerBodyLength, TransportConfig config, boolean shared) {
    MsgpackReader in = new MsgpackReader(section, "body table");
    try {
      int count = in.readArrayHeader();
      if (count > config.maxBodySegments()) {
        throw new ProtocolException(
            ErrorCode.FRAME_TOO_LONG,
            "body segment count="
                + Integer.toUnsignedString(count)
                + " > maxBodySegments="
                + config.maxBodySegments());
      }
      long[] lengths = new long[count];
      long sum = 0;
      for (int i = 0; i < count; i++) {
        long length = in.readLong();
        if (length < 0 || length > config.maxBodySegmentBytes()) {
          throw new ProtocolException(
              ErrorCode.FRAME_TOO_LONG,
              "body segment "
                  + i
                  + " length="
                  + length
                  + " outside [0, maxBodySegmentBytes="
                  + config.maxBodySegmentBytes()
                  + "]");
        }
        lengths[i] = length;
        sum += length;
        if (!shared && sum > headerBodyLength) {
          break;
        }
      }
      if (!shared && sum != headerBodyLength) {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_ERROR,
            "body segment lengths add up to "
                + sum
                + (sum > headerBodyLength ? " or more" : "")
                + " but the header says body length="
                + headerBodyLength);
      }
      byte[] appMeta = Arrays.copyOfRange(section, (int) in.offset(), section.length);
      return new BodyTable(lengths, appMeta);
    } catch (MsgpackException e) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "malformed body table in frame metadata: " + e.detail() + " at offset " + e.offset());
    }
  }
}
