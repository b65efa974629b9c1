package org.transferqueue.transport;

import java.util.List;
import org.transferqueue.memory.NativeBuffer;

/**
 * Chooses where the bodies of a reply land once their lengths are known; used with {@link
 * BodyDestination#allocateWith}.
 *
 * <p>Called on the connection's reader thread, after the reply's metadata has been read and before
 * any body byte: it must not block for long. Ownership of the returned buffers passes to the
 * transport at once: they end up in the {@link Response} (the caller closes it), or are released by
 * the transport if the call fails or the returned list does not fit.
 */
@FunctionalInterface
public interface BodyAllocator {
  /**
   * Returns one destination buffer per body.
   *
   * @param metadata the reply's application metadata, for example the shapes of the tensors
   * @param bodyLengths the length of each body in bytes
   * @return one buffer per body, in order, each at least as long as its body
   */
  List<NativeBuffer> allocate(byte[] metadata, long[] bodyLengths);
}
