package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.List;
import org.transferqueue.memory.NativeBuffer;

/**
 * A request as a server's {@link RequestHandler} sees it.
 *
 * <p>Ownership: the body buffers were allocated from the connection's child allocator (or placed by
 * the handler's {@link RequestBodyAllocator}) and belong to the transport, which releases them once
 * the handler has returned <em>and</em> its reply has been written (or dropped). A handler that
 * keeps a body longer, for example to store it, calls {@link NativeBuffer#retain()} on the buffer
 * behind it and releases that reference itself. The metadata array is the handler's to keep.
 *
 * <p>Not thread-safe beyond safe publication to the handler's thread.
 */
public final class ReceivedRequest {
  private final int type;
  private final long correlationId;
  private final byte[] metadata;
  private final List<MemorySegment> bodies;
  private final List<NativeBuffer> owned;
  private final SocketAddress remoteAddress;
  private final boolean sharedBodies;

  ReceivedRequest(
      int type,
      long correlationId,
      byte[] metadata,
      List<NativeBuffer> bodies,
      SocketAddress remoteAddress) {
    this(
        type,
        correlationId,
        metadata,
        bodies.stream().map(NativeBuffer::segment).toList(),
        bodies,
        remoteAddress,
        false);
  }

  ReceivedRequest(
      int type,
      long correlationId,
      byte[] metadata,
      List<MemorySegment> bodies,
      List<NativeBuffer> owned,
      SocketAddress remoteAddress,
      boolean sharedBodies) {
    this.type = type;
    this.correlationId = correlationId;
    this.metadata = metadata;
    this.bodies = List.copyOf(bodies);
    this.owned = List.copyOf(owned);
    this.remoteAddress = remoteAddress;
    this.sharedBodies = sharedBodies;
  }

  /**
   * Whether the bodies lie in a shared-memory region the client wrote them into (docs/PROTOCOL.md
   * section 4.2): then {@link #bodyBuffers()} is that one region, which the client never writes
   * again, so a handler may keep slices of it as its own storage ({@link NativeBuffer#retain()}),
   * and a later reply body that lies in it is lent to a same-host client without a copy.
   *
   * @return true for shared bodies
   */
  public boolean sharedBodies() {
    return sharedBodies;
  }

  /**
   * The message type the handler was registered for.
   *
   * @return the type
   */
  public int type() {
    return type;
  }

  /**
   * The correlation id the client chose; the reply carries it back.
   *
   * @return the id
   */
  public long correlationId() {
    return correlationId;
  }

  /**
   * The application metadata.
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
   * One body segment's bytes; valid until the transport releases the request's bodies.
   *
   * @param index 0 to {@link #bodyCount()} - 1
   * @return the segment
   */
  public MemorySegment body(int index) {
    return bodies.get(index);
  }

  /**
   * The buffers behind the bodies, owned by the transport; retain one to keep it past the reply.
   * One per body unless a {@link RequestBodyAllocator} placed several bodies in one buffer.
   *
   * @return the buffers in order
   */
  public List<NativeBuffer> bodyBuffers() {
    return owned;
  }

  /**
   * Where the request came from.
   *
   * @return the peer's socket address
   */
  public SocketAddress remoteAddress() {
    return remoteAddress;
  }

  @Override
  public String toString() {
    return "ReceivedRequest[type="
        + type
        + ", correlationId="
        + correlationId
        + ", metadataLength="
        + metadata.length
        + ", bodies="
        + bodies.size()
        + ", from="
        + remoteAddress
        + "]";
  }
}
