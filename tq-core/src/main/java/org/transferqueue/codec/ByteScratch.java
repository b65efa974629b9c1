package org.transferqueue.codec;

/**
 * A reusable heap array for the bytes of one string at a time, shared by the decoders of a batch so
 * that decoding many strings does not allocate, and zero, a fresh array for each one: the string is
 * copied from its frame into the scratch and from there into the {@link String}, whose own array
 * the JDK allocates without zeroing it first.
 *
 * <p>Not thread-safe: one decoding thread at a time. Arrays over {@link #MAX_KEPT_BYTES} are not
 * kept, so a rare huge string does not pin its size in memory for the rest of the batch.
 */
final class ByteScratch {
  /** The largest array kept for reuse. */
  static final int MAX_KEPT_BYTES = 1 << 20;

  private static final byte[] NONE = new byte[0];

  // Grown on the first string, so that a decoder that meets none allocates nothing.
  private byte[] bytes = NONE;

  /**
   * An array of at least {@code length} bytes whose content is undefined.
   *
   * @param length at least 0
   * @return this scratch's array, grown when needed, or a fresh array for a length over {@link
   *     #MAX_KEPT_BYTES}
   */
  byte[] atLeast(int length) {
    if (length <= bytes.length) {
      return bytes;
    }
    if (length > MAX_KEPT_BYTES) {
      return new byte[length];
    }
    bytes = new byte[Math.max(length, Math.min(MAX_KEPT_BYTES, 2 * bytes.length))];
    return bytes;
  }
}
