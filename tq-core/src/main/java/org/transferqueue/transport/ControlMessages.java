package org.transferqueue.transport;

import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.Strings;
import org.transferqueue.TqException;
import org.transferqueue.codec.MsgpackException;
import org.transferqueue.codec.MsgpackReader;
import org.transferqueue.codec.MsgpackWriter;

/**
 * Application metadata of the transport's own messages ({@link MessageDescriptor}): error replies
 * {@code [code, message]}, HELLO {@code [token or nil]} and PROCESS_STATS replies {@code
 * [heap_allocated_bytes]} (plus the shared-memory pool's figures when it is on), written and read
 * with the {@code codec} cursor. Stateless.
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
    MsgpackWriter out = new MsgpackWriter(16 + 3 * text.length());
    out.writeArrayHeader(0);
    out.writeArrayHeader(2);
    out.writeLong(code.value());
    out.writeString(text, "error message");
    return out.toByteArray();
  }

  /** Decodes an error reply's application metadata into the exception the caller sees. */
  static TqException decodeError(byte[] appMeta, String where) {
    MsgpackReader in = new MsgpackReader(appMeta, "error reply");
    try {
      int size = in.readArrayHeader();
      if (size != 2) {
        return malformedError(where, "error reply is not [code, message]");
      }
      long code = in.readLong();
      if (code < Integer.MIN_VALUE || code > Integer.MAX_VALUE) {
        return malformedError(where, "error code " + code + " is out of int range");
      }
      String message = in.readString();
      return Errors.remote(ErrorCode.fromValue((int) code), message, where);
    } catch (MsgpackException e) {
      return malformedError(where, e.detail() + " at offset " + e.offset());
    }
  }

  private static ProtocolException malformedError(String where, String detail) {
    return new ProtocolException(
        ErrorCode.PROTOCOL_ERROR, "malformed error reply from " + where + ": " + detail);
  }

  /** The whole metadata section of a HELLO. */
  static byte[] helloSection(String token) {
    MsgpackWriter out = new MsgpackWriter(16 + (token == null ? 0 : 3 * token.length()));
    out.writeArrayHeader(0);
    out.writeArrayHeader(1);
    if (token == null) {
      out.writeNil();
    } else {
      out.writeString(token, "token");
    }
    return out.toByteArray();
  }

  /**
   * The token of a HELLO's application metadata.
   *
   * @return the token, or null if none was sent or the metadata is malformed
   */
  static String decodeHelloToken(byte[] appMeta) {
    MsgpackReader in = new MsgpackReader(appMeta, "hello");
    try {
      if (in.readArrayHeader() < 1 || in.tryReadNil()) {
        return null;
      }
      return in.readString();
    } catch (MsgpackException e) {
      return null;
    }
  }

  /** The application metadata of a PROCESS_STATS reply: {@code [heap_allocated_bytes]}. */
  static byte[] processStatsMetadata(ProcessStats stats) {
    return processStatsMetadata(stats, SharedMemoryStats.OFF);
  }

  /**
   * The application metadata of a PROCESS_STATS reply: {@code [heap_allocated_bytes]} with shared
   * memory off, else {@code [heap_allocated_bytes, [segment_bytes, used_bytes, grants, leases,
   * storage_bytes, request_bytes_granted, request_bytes_placed, reply_bytes_copied,
   * reply_bytes_lent]]}.
   */
  static byte[] processStatsMetadata(ProcessStats stats, SharedMemoryStats shared) {
    MsgpackWriter out = new MsgpackWriter(96);
    out.writeArrayHeader(shared.enabled() ? 2 : 1);
    out.writeLong(stats.heapAllocatedBytes());
    if (shared.enabled()) {
      out.writeArrayHeader(9);
      out.writeLong(shared.segmentBytes());
      out.writeLong(shared.usedBytes());
      out.writeLong(shared.grants());
      out.writeLong(shared.leases());
      out.writeLong(shared.storageBytes());
      out.writeLong(shared.requestBytesGranted());
      out.writeLong(shared.requestBytesPlaced());
      out.writeLong(shared.replyBytesCopied());
      out.writeLong(shared.replyBytesLent());
    }
    return out.toByteArray();
  }

  /**
   * Decodes a PROCESS_STATS reply's application metadata; later elements, if any, are ignored so
   * that newer servers may report more.
   *
   * @throws ProtocolException {@code PROTOCOL_ERROR} when the metadata is not such an array
   */
  static ProcessStats decodeProcessStats(byte[] appMeta, String where) {
    MsgpackReader in = new MsgpackReader(appMeta, "process stats reply");
    String detail;
    try {
      if (in.readArrayHeader() >= 1) {
        return new ProcessStats(in.readLong());
      }
      detail = "process stats reply is not [heap_allocated_bytes, ...]";
    } catch (MsgpackException e) {
      detail = e.detail() + " at offset " + e.offset();
    }
    throw new ProtocolException(
        ErrorCode.PROTOCOL_ERROR, "malformed process stats reply from " + where + ": " + detail);
  }

  /** The metadata section of a reply without bodies or metadata. */
  static byte[] emptySection() {
    return EMPTY_TABLE.clone();
  }
}
