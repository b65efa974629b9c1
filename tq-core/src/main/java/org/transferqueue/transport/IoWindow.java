package org.transferqueue.transport;

import java.nio.ByteBuffer;

/**
 * Bounds the buffers handed to one scattering read or gathering write.
 *
 * <p>The JDK prepares every buffer of a vectored call (up to {@code IOV_MAX}, 1024 on Linux) on
 * each system call: it acquires and releases the memory session of each segment-backed buffer and
 * rebuilds the I/O vector, even when the kernel then moves only the first few tens of kilobytes. A
 * frame of thousands of small bodies would pay that for up to 1024 buffers per call; passing only
 * the buffers that cover the next {@link #WINDOW_BYTES} keeps the per-call work proportional to the
 * bytes the call can move.
 *
 * <p>Stateless and thread-safe.
 */
final class IoWindow {
  /** Bytes covered by one vectored call: far more than a loopback socket moves at once. */
  static final long WINDOW_BYTES = 4L << 20;

  private IoWindow() {}

  /**
   * The number of buffers from {@code first} that one vectored call should get: at least one, and
   * no more than needed to cover {@link #WINDOW_BYTES} of remaining bytes.
   *
   * @param buffers the frame's buffers
   * @param first the first buffer with bytes remaining
   * @return a count between 1 and {@code buffers.length - first}
   */
  static int length(ByteBuffer[] buffers, int first) {
    long bytes = 0;
    int end = first;
    while (end < buffers.length && bytes < WINDOW_BYTES) {
      bytes += buffers[end].remaining();
      end++;
    }
    return Math.max(1, end - first);
  }
}
