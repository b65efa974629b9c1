package org.transferqueue.transport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;

/**
 * Encodes and decodes the metadata section of a message: the body table followed by the application
 * metadata ({@link MessageDescriptor}). Stateless.
 *
 * @param bodyLengths the lengths of the body segments, in order
 * @param applicationMetadata the application's metadata bytes
 */
record BodyTable(long[] bodyLengths, byte[] applicationMetadata) {

  /** Encodes a metadata section; the caller has checked the limits. */
  static byte[] encode(List<? extends java.lang.foreign.MemorySegment> bodies, byte[] appMeta) {
    try (MessageBufferPacker packer = MessagePack.newDefaultBufferPacker()) {
      packer.packArrayHeader(bodies.size());
      for (java.lang.foreign.MemorySegment body : bodies) {
        packer.packLong(body.byteSize());
      }
      packer.writePayload(appMeta);
      return packer.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException("in-memory msgpack packer failed", e);
    }
  }

  /**
   * Decodes a received metadata section and checks the table against the limits and the header.
   *
   * @throws ProtocolException with {@code PROTOCOL_ERROR} for a malformed table or lengths that do
   *     not add up to {@code headerBodyLength}, {@code FRAME_TOO_LONG} for too many or too long
   *     segments
   */
  static BodyTable decode(byte[] section, long headerBodyLength, TransportConfig config) {
    try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(section)) {
      int count = unpacker.unpackArrayHeader();
      if (count < 0 || count > config.maxBodySegments()) {
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
        long length = unpacker.unpackLong();
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
        if (sum > headerBodyLength) {
          break;
        }
      }
      if (sum != headerBodyLength) {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_ERROR,
            "body segment lengths add up to "
                + sum
                + (sum > headerBodyLength ? " or more" : "")
                + " but the header says body length="
                + headerBodyLength);
      }
      int offset = (int) unpacker.getTotalReadBytes();
      byte[] appMeta = java.util.Arrays.copyOfRange(section, offset, section.length);
      return new BodyTable(lengths, appMeta);
    } catch (MessagePackException | IOException e) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR, "malformed body table in frame metadata: " + e.getMessage());
    }
  }
}
