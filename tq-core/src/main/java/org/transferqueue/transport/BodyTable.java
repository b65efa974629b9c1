package org.transferqueue.transport;

import java.io.IOException;
import java.util.List;
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

  /**
   * Encodes a metadata section; the caller has checked the limits. Written straight into one array
   * of the exact size, in msgpack's shortest forms (the bytes a msgpack packer would write for the
   * same non-negative lengths), so a frame costs one small array, not a packer's buffer.
   */
  static byte[] encode(List<? extends java.lang.foreign.MemorySegment> bodies, byte[] appMeta) {
    int count = bodies.size();
    int size = arrayHeaderSize(count) + appMeta.length;
    for (int i = 0; i < count; i++) {
      size += uintSize(bodies.get(i).byteSize());
    }
    byte[] out = new byte[size];
    int at = writeArrayHeader(out, 0, count);
    for (int i = 0; i < count; i++) {
      at = writeUint(out, at, bodies.get(i).byteSize());
    }
    System.arraycopy(appMeta, 0, out, at, appMeta.length);
    return out;
  }

  private static int arrayHeaderSize(int count) {
    return count < 16 ? 1 : count < 0x1_0000 ? 3 : 5;
  }

  private static int writeArrayHeader(byte[] out, int at, int count) {
    if (count < 16) {
      out[at] = (byte) (0x90 | count);
      return at + 1;
    }
    if (count < 0x1_0000) {
      out[at] = (byte) 0xdc;
      return writeBigEndian(out, at + 1, count, 2);
    }
    out[at] = (byte) 0xdd;
    return writeBigEndian(out, at + 1, count, 4);
  }

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

  static int writeUint(byte[] out, int at, long value) {
    if (value < 0x80) {
      out[at] = (byte) value;
      return at + 1;
    }
    if (value < 0x100) {
      out[at] = (byte) 0xcc;
      return writeBigEndian(out, at + 1, value, 1);
    }
    if (value < 0x1_0000) {
      out[at] = (byte) 0xcd;
      return writeBigEndian(out, at + 1, value, 2);
    }
    if (value < 0x1_0000_0000L) {
      out[at] = (byte) 0xce;
      return writeBigEndian(out, at + 1, value, 4);
    }
    out[at] = (byte) 0xcf;
    return writeBigEndian(out, at + 1, value, 8);
  }

  private static int writeBigEndian(byte[] out, int at, long value, int bytes) {
    for (int i = bytes - 1; i >= 0; i--) {
      out[at + i] = (byte) value;
      value >>>= 8;
    }
    return at + bytes;
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
