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
import org.transferqueue.Strings;
import org.transferqueue.TqException;

/**
 * Application metadata of the transport's own messages ({@link MessageDescriptor}): error replies
 * {@code [code, message]}, HELLO {@code [token or nil]} and PROCESS_STATS replies {@code
 * [heap_allocated_bytes]}. Stateless.
 */
final class ControlMessages {
  /** Longest error message sent, so an error reply always fits the metadata limit. */
  static final int MAX_ERROR_MESSAGE_CHARS = 512;

  private static final byte[] EMPTY_TABLE = BodyTable.encode(List.of(), new byte[0]);

  private ControlMessages() {}

  /**
   * The whole metadata section (empty body table) of an error reply. A message that echoes a
   * refused string may hold a lone surrogate, which UTF-8 cannot encode: it is escaped ({@code
   * \u005CuD800}), and the cut never splits a surrogate pair, so the text always travels as it
   * reads.
   */
  static byte[] errorSection(ErrorCode code, String message) {
    String text = message == null ? "" : message;
    if (text.length() > MAX_ERROR_MESSAGE_CHARS) {
      int end = MAX_ERROR_MESSAGE_CHARS;
      if (Character.isHighSurrogate(text.charAt(end - 1))) {
        end--;
      }
      text = text.substring(0, end) + "...";
    }
    text = Strings.escapeLoneSurrogates(text);
    try (MessageBufferPacker packer = MessagePack.newDefaultBufferPacker()) {
      packer.packArrayHeader(0);
      packer.packArrayHeader(2);
      packer.packInt(code.value());
      packer.packString(text);
      return packer.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException("in-memory msgpack packer failed", e);
    }
  }

  /** Decodes an error reply's application metadata into the exception the caller sees. */
  static TqException decodeError(byte[] appMeta, String where) {
    try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(appMeta)) {
      if (unpacker.unpackArrayHeader() != 2) {
        throw new MessagePackException("error reply is not [code, message]");
      }
      int code = unpacker.unpackInt();
      String message = unpacker.unpackString();
      return Errors.remote(ErrorCode.fromValue(code), message, where);
    } catch (MessagePackException | IOException e) {
      return new ProtocolException(
          ErrorCode.PROTOCOL_ERROR, "malformed error reply from " + where + ": " + e.getMessage());
    }
  }

  /** The whole metadata section of a HELLO. */
  static byte[] helloSection(String token) {
    try (MessageBufferPacker packer = MessagePack.newDefaultBufferPacker()) {
      packer.packArrayHeader(0);
      packer.packArrayHeader(1);
      if (token == null) {
        packer.packNil();
      } else {
        packer.packString(token);
      }
      return packer.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException("in-memory msgpack packer failed", e);
    }
  }

  /**
   * The token of a HELLO's application metadata.
   *
   * @return the token, or null if none was sent or the metadata is malformed
   */
  static String decodeHelloToken(byte[] appMeta) {
    try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(appMeta)) {
      if (unpacker.unpackArrayHeader() < 1 || unpacker.tryUnpackNil()) {
        return null;
      }
      return unpacker.unpackString();
    } catch (MessagePackException | IOException e) {
      return null;
    }
  }

  /** The application metadata of a PROCESS_STATS reply: {@code [heap_allocated_bytes]}. */
  static byte[] processStatsMetadata(ProcessStats stats) {
    try (MessageBufferPacker packer = MessagePack.newDefaultBufferPacker()) {
      packer.packArrayHeader(1);
      packer.packLong(stats.heapAllocatedBytes());
      return packer.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException("in-memory msgpack packer failed", e);
    }
  }

  /**
   * Decodes a PROCESS_STATS reply's application metadata; later elements, if any, are ignored so
   * that newer servers may report more.
   *
   * @throws ProtocolException {@code PROTOCOL_ERROR} when the metadata is not such an array
   */
  static ProcessStats decodeProcessStats(byte[] appMeta, String where) {
    try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(appMeta)) {
      if (unpacker.unpackArrayHeader() < 1) {
        throw new MessagePackException("process stats reply is not [heap_allocated_bytes, ...]");
      }
      return new ProcessStats(unpacker.unpackLong());
    } catch (MessagePackException | IOException e) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "malformed process stats reply from " + where + ": " + e.getMessage());
    }
  }

  /** The metadata section of a reply without bodies or metadata. */
  static byte[] emptySection() {
    return EMPTY_TABLE.clone();
  }
}
