package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;

/**
 * Chooses where the bodies of a request land once its metadata is known, so that a handler can have
 * them read straight into the memory that keeps them (for example a storage unit's cell blocks)
 * instead of copying them there afterwards; registered with {@link
 * TransportServer.Builder#handler(int, RequestHandler, RequestBodyAllocator)}.
 *
 * <p>Called on the connection's reader thread after the request's metadata has been read and before
 * any body byte, or, for a same-host client that announces the request in a placed SHM_GRANT
 * (docs/PROTOCOL.md section 4.2), before the request is even sent: when every destination then lies
 * in the server's shared-memory pool, the client writes the bodies there itself and the request is
 * dispatched with the very metadata array given here. It must not block for long. Ownership of the
 * returned buffers passes to the transport at once: they end up in the {@link ReceivedRequest} and
 * are released like its other bodies, or are released by the transport if the destinations do not
 * fit the bodies. An exception fails the request with an error reply (its {@link
 * org.transferqueue.ErrorCode} for a {@link org.transferqueue.TqException}) and the connection goes
 * on.
 */
@FunctionalInterface
public interface RequestBodyAllocator {
  /**
   * Returns the destinations of the request's bodies.
   *
   * @param metadata the request's application metadata (not to be modified)
   * @param bodyLengths the length of each body in bytes (a copy)
   * @param connectionAllocator the connection's allocator, for bodies the handler does not place
   * @return one destination per body, or null to have every body allocated from the connection's
   *     allocator as without this callback (for example when the metadata is malformed: the handler
   *     then reports it)
   */
  Placed allocate(byte[] metadata, long[] bodyLengths, BufferAllocator connectionAllocator);

  /**
   * Destinations of a request's bodies.
   *
   * <p>Once the transport has them, exactly one of two things happens: the request is dispatched to
   * its handler with these bodies (the handler then finishes whatever the allocator started), or
   * the destinations are given up with {@link #abandon()} (the bodies never arrived: the connection
   * failed mid-body, a placed grant was released unused or named by a request that did not match
   * it), which runs {@code onAbandon} so that the allocator can undo what it started.
   *
   * @param segments one writable segment per body, in order, each at least as long as its body;
   *     several may be slices of one buffer
   * @param owned the buffers behind the segments, owned by the request from now on
   * @param onAbandon what undoes the placing when the request is never dispatched (for example a
   *     store's reservations); run at most once, on the thread that gives the destinations up
   */
  record Placed(List<MemorySegment> segments, List<NativeBuffer> owned, Runnable onAbandon) {
    /** Copies the lists. */
    public Placed {
      segments = List.copyOf(segments);
      owned = List.copyOf(owned);
      Objects.requireNonNull(segments, "segments");
      Objects.requireNonNull(onAbandon, "onAbandon");
    }

    /**
     * Destinations with nothing to undo but releasing {@code owned}.
     *
     * @param segments one writable segment per body
     * @param owned the buffers behind the segments
     */
    public Placed(List<MemorySegment> segments, List<NativeBuffer> owned) {
      this(segments, owned, () -> {});
    }

    /**
     * Gives the destinations up: runs {@code onAbandon}, then releases {@code owned}. Called by the
     * transport only, for a request that will never reach its handler.
     */
    public void abandon() {
      try {
        onAbandon.run();
      } finally {
        owned.forEach(NativeBuffer::close);
      }
    }
  }
}
