package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import org.transferqueue.TqException;

/**
 * A request a {@link TransportClient} sends: a message type, application metadata and raw body
 * segments.
 *
 * <p>Borrowed, not copied: the transport reads {@code metadata} and the body segments until the
 * call's future completes and never touches them afterwards, so the caller must keep them valid and
 * unchanged until then. Bodies should be native segments (tensor memory): they are written to the
 * socket straight from their memory with a gathering write.
 *
 * @param type the message type, {@link MessageDescriptor#FIRST_APPLICATION_TYPE} to {@link
 *     MessageDescriptor#MAX_TYPE}
 * @param metadata the application metadata (msgpack by convention), possibly empty
 * @param bodies the body segments in order, possibly empty; zero-length segments are allowed
 * @param placedBodies whether, when the bodies travel through shared memory, the client asks the
 *     server to place them first (a placed SHM_GRANT, docs/PROTOCOL.md section 4.2) so that it
 *     writes each body straight where the server keeps it: one copy on the hop instead of two, at
 *     the price of a grant round trip per request. For message types whose server registered a
 *     {@link RequestBodyAllocator} placing into its shared memory (a store node's WRITE); a server
 *     that cannot place them grants a region as usual.
 */
public record Request(int type, byte[] metadata, List<MemorySegment> bodies, boolean placedBodies) {

  /**
   * Validates the components.
   *
   * @throws TqException with {@code INVALID_ARGUMENT} for a reserved or out-of-range type
   * @throws NullPointerException for null metadata, bodies or body entries
   */
  public Request {
    MessageDescriptor.requireApplicationType(type);
    Objects.requireNonNull(metadata, "metadata");
    bodies = List.copyOf(bodies);
  }

  /**
   * A request whose bodies are not placed ({@code placedBodies} false).
   *
   * @param type the message type
   * @param metadata the application metadata
   * @param bodies the body segments in order, borrowed until the call completes
   */
  public Request(int type, byte[] metadata, List<MemorySegment> bodies) {
    this(type, metadata, bodies, false);
  }

  /**
   * A request with the given bodies.
   *
   * @param type the message type
   * @param metadata the application metadata
   * @param bodies the body segments, borrowed until the call completes
   * @return the request
   */
  public static Request of(int type, byte[] metadata, MemorySegment... bodies) {
    return new Request(type, metadata, List.of(bodies));
  }

  /**
   * The sum of the body lengths.
   *
   * @return bytes carried in bodies
   */
  public long bodyLength() {
    long sum = 0;
    for (MemorySegment body : bodies) {
      sum += body.byteSize();
    }
    return sum;
  }
}
