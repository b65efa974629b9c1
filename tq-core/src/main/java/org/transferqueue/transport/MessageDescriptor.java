package org.transferqueue.transport;

import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Layout of a transport message inside a frame of {@link org.transferqueue.codec.FrameDescriptor},
 * and the message types the transport reserves for itself.
 *
 * <p>A message is one frame. The frame's metadata section starts with the body table, a msgpack
 * array of the lengths of the raw body segments that follow the padding, back to back; the rest of
 * the section is the application's metadata, opaque to the transport (msgpack by convention):
 *
 * <pre>
 *  +-----------------------------+  0
 *  | frame header (32 bytes)     |     type, flags, correlation id, metadata length, body length
 *  +-----------------------------+ 32
 *  | body table (msgpack array   |     [len0, len1, ...], each a non-negative integer;
 *  |   of body segment lengths)  |     their sum equals the header's body length
 *  +-----------------------------+
 *  | application metadata        |     the rest of the metadata section
 *  +-----------------------------+
 *  | zero padding to 64          |
 *  +-----------------------------+ bodyOffset (64-byte aligned)
 *  | body 0 | body 1 | ...       |     raw bytes, no padding between segments
 *  +-----------------------------+
 * </pre>
 *
 * <p>Requests have no flags; replies carry {@link
 * org.transferqueue.codec.FrameDescriptor#FLAG_RESPONSE}, the request's type and correlation id. An
 * error reply also carries {@link org.transferqueue.codec.FrameDescriptor#FLAG_ERROR}, no bodies,
 * and as application metadata the msgpack array {@code [code: int, message: str]} where {@code
 * code} is an {@link org.transferqueue.ErrorCode#value()}.
 *
 * <p>Message types below {@link #FIRST_APPLICATION_TYPE} belong to the transport. {@link
 * #TYPE_HELLO} opens a connection: its application metadata is {@code [token: str or nil]}; a
 * server configured with a token answers any other first frame, or a wrong token, with an {@link
 * org.transferqueue.ErrorCode#UNAUTHENTICATED} error and closes the connection. Every server also
 * answers {@link #TYPE_PING} and {@link #TYPE_PROCESS_STATS} itself, after authentication like any
 * request.
 */
public final class MessageDescriptor {
  /** The connection-opening handshake carrying the optional shared token. */
  public static final int TYPE_HELLO = 1;

  /**
   * The no-op request every server answers with an empty reply (no metadata, no bodies): the
   * smallest round trip of the transport ({@link TransportClient#ping}).
   */
  public static final int TYPE_PING = 2;

  /**
   * The request for the server process's statistics, answered by every server with the application
   * metadata {@code [heap_allocated_bytes: int]} ({@link ProcessStats}, {@link
   * TransportClient#processStats}).
   */
  public static final int TYPE_PROCESS_STATS = 3;

  /**
   * The proof that a client maps the segment its HELLO offer named (docs/PROTOCOL.md section 4.2):
   * request {@code [nonce: bin(16) | nil]}, reply {@code [attached: bool]}.
   */
  public static final int TYPE_SHM_ATTACH = 4;

  /**
   * The request for a shared-memory region to write request bodies into: request {@code [length]},
   * reply {@code [grant_id, [fd, key, size], offset, length]}.
   */
  public static final int TYPE_SHM_GRANT = 5;

  /**
   * The end of reply-body leases and unused grants: request {@code [[ids...]]}, reply without
   * application metadata.
   */
  public static final int TYPE_SHM_RELEASE = 6;

  /** The smallest type an application may register a handler for or send. */
  public static final int FIRST_APPLICATION_TYPE = 16;

  /** The largest message type: the header holds an unsigned 16-bit number. */
  public static final int MAX_TYPE = 0xFFFF;

  private MessageDescriptor() {}

  /**
   * Checks that a type may be used by an application.
   *
   * @param type the message type
   * @return true if {@code FIRST_APPLICATION_TYPE <= type <= MAX_TYPE}
   */
  public static boolean isApplicationType(int type) {
    return type >= FIRST_APPLICATION_TYPE && type <= MAX_TYPE;
  }

  /**
   * Rejects a type an application may not use.
   *
   * @param type the message type
   * @throws TqException with {@code INVALID_ARGUMENT} naming the type and the allowed range unless
   *     {@link #isApplicationType}
   */
  public static void requireApplicationType(int type) {
    if (!isApplicationType(type)) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "message type=" + type + " not in [" + FIRST_APPLICATION_TYPE + ", " + MAX_TYPE + "]");
    }
  }
}
