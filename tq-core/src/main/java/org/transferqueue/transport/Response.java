package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.util.List;
import org.transferqueue.memory.NativeBuffer;

/**
 * A successful reply as a {@link TransportClient} caller receives it: the application metadata and
 * the body segments, which were read straight into the destination the call named ({@link
 * BodyDestination}).
 *
 * <p>Ownership: the caller owns the response and must {@link #close()} it. Closing releases the
 * buffers the transport allocated for the bodies ({@link BodyDestination#allocateFrom} and {@link
 * BodyDestination#allocateWith}); with {@link BodyDestination#into} the bodies are slices of the
 * caller's own segments and closing releases nothing. Not thread-safe.
 */
public final class Response implements AutoCloseable {
  private final byte[] metadata;
  private final List<MemorySegment> bodies;
  private final List<NativeBuffer> ownedBuffers;
  private boolean closed;

  Response(byte[] metadata, List<MemorySegment> bodies, List<NativeBuffer> ownedBuffers) {
    this.metadata = metadata;
    this.bodies = List.copyOf(bodies);
    this.ownedBuffers = List.copyOf(ownedBuffers);
  }

  /**
   * The application metadata of the reply.
   *
   * @return the bytes, owned by the caller
   */
  public byte[] metadata() {
    return metadata;
  }

  /**
   * The number of body segments.
   *
   * @return the count
   */
  public int bodyCount() {
    return bodies.size();
  }

  /**
   * One body: exactly the bytes the server sent for it.
   *
   * @param index 0 to {@link #bodyCount()} - 1
   * @return a segment of the reply's length for this body; valid until {@link #close()} (or, for
   *     caller segments, as long as those are)
   */
  public MemorySegment body(int index) {
    return bodies.get(index);
  }

  /**
   * All bodies in order.
   *
   * @return the body segments
   */
  public List<MemorySegment> bodies() {
    return bodies;
  }

  /**
   * The buffers the transport allocated for the bodies, released by {@link #close()}. A caller that
   * wants to keep one past the response retains it.
   *
   * @return the owned buffers in body order; empty when the bodies went into caller segments
   */
  public List<NativeBuffer> buffers() {
    return ownedBuffers;
  }

  /** Releases the owned body buffers. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (NativeBuffer buffer : ownedBuffers) {
      buffer.close();
    }
  }

  @Override
  public String toString() {
    return "Response[metadataLength=" + metadata.length + ", bodies=" + bodies.size() + "]";
  }
}
