package org.transferqueue.transport;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * Reads and writes a sequence of buffers completely, in a way that keeps the JDK's per-call garbage
 * bounded.
 *
 * <p>Why: a scattering or gathering call on buffers that view memory segments allocates two small
 * objects per buffer it is handed (the JDK pins each segment's session for the call), whether or
 * not the call moves that buffer's bytes; a single-buffer call allocates nothing. Handing all
 * remaining buffers of a large frame to every call, while the socket moves a few hundred KiB per
 * call, made that garbage grow with the square of the buffer count. So:
 *
 * <pre>
 *   buffer >= SINGLE_MIN_BYTES remaining   one single-buffer call per buffer (no garbage)
 *   smaller buffers                        one vectored call over the next few of them, at most
 *                                          WINDOW_BYTES and WINDOW_BUFFERS per call
 * </pre>
 *
 * Stateless; the caller owns the channel and the buffers.
 */
final class VectoredIo {
  /** Buffers at least this long are moved with single-buffer calls. */
  static final int SINGLE_MIN_BYTES = 128 << 10;

  /** The most bytes one vectored call is handed. */
  static final long WINDOW_BYTES = 512 << 10;

  /** The most buffers one vectored call is handed. */
  static final int WINDOW_BUFFERS = 64;

  private VectoredIo() {}

  /**
   * Fills every buffer from its position to its limit, in order.
   *
   * @throws EOFException if the peer closes the connection first
   */
  static void readFully(SocketChannel channel, ByteBuffer[] buffers, String inside)
      throws IOException {
    int first = skipDone(buffers, 0);
    while (first < buffers.length) {
      ByteBuffer head = buffers[first];
      long n =
          head.remaining() >= SINGLE_MIN_BYTES
              ? channel.read(head)
              : channel.read(buffers, first, window(buffers, first));
      if (n < 0) {
        throw new EOFException("connection closed inside " + inside);
      }
      first = skipDone(buffers, first);
    }
  }

  /** Writes every buffer from its position to its limit, in order. */
  static void writeFully(SocketChannel channel, ByteBuffer[] buffers) throws IOException {
    int first = skipDone(buffers, 0);
    while (first < buffers.length) {
      ByteBuffer head = buffers[first];
      if (head.remaining() >= SINGLE_MIN_BYTES) {
        channel.write(head);
      } else {
        channel.write(buffers, first, window(buffers, first));
      }
      first = skipDone(buffers, first);
    }
  }

  /** How many buffers from {@code first} one vectored call takes: small ones, within the caps. */
  static int window(ByteBuffer[] buffers, int first) {
    int count = 0;
    long bytes = 0;
    for (int i = first; i < buffers.length && count < WINDOW_BUFFERS && bytes < WINDOW_BYTES; i++) {
      int remaining = buffers[i].remaining();
      if (count > 0 && remaining >= SINGLE_MIN_BYTES) {
        break;
      }
      bytes += remaining;
      count++;
    }
    return count;
  }

  private static int skipDone(ByteBuffer[] buffers, int first) {
    while (first < buffers.length && !buffers[first].hasRemaining()) {
      first++;
    }
    return first;
  }
}
