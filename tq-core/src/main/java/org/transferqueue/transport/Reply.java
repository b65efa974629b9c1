package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A successful answer a {@link RequestHandler} gives through its {@link Responder}: application
 * metadata and raw body segments, sent with the request's type and correlation id.
 *
 * <p>Borrowed, not copied: the transport reads the metadata and bodies until the reply has been
 * written (or dropped because the connection closed), then closes every {@link #resources()
 * resource} once. Hand over buffers the reply's bodies live in with {@link #releasing} so they are
 * freed after the write; bodies may also be slices of the request's bodies, which stay valid until
 * the reply is written.
 *
 * @param metadata the application metadata, possibly empty
 * @param bodies the body segments, possibly empty
 * @param resources closed once after the reply is written or dropped
 */
public record Reply(byte[] metadata, List<MemorySegment> bodies, List<AutoCloseable> resources) {

  private static final byte[] NO_METADATA = new byte[0];

  /**
   * Copies the lists.
   *
   * @throws NullPointerException for null components or entries
   */
  public Reply {
    Objects.requireNonNull(metadata, "metadata");
    bodies = List.copyOf(bodies);
    resources = List.copyOf(resources);
  }

  /**
   * A reply with metadata and bodies and nothing to release.
   *
   * @param metadata the application metadata
   * @param bodies the body segments, borrowed until written
   * @return the reply
   */
  public static Reply of(byte[] metadata, MemorySegment... bodies) {
    return new Reply(metadata, List.of(bodies), List.of());
  }

  /**
   * A reply with neither metadata nor bodies.
   *
   * @return the empty reply
   */
  public static Reply empty() {
    return new Reply(NO_METADATA, List.of(), List.of());
  }

  /**
   * This reply plus resources the transport closes after writing it, such as the buffers the bodies
   * live in.
   *
   * @param more resources whose ownership passes to the transport
   * @return a new reply
   */
  public Reply releasing(AutoCloseable... more) {
    List<AutoCloseable> all = new ArrayList<>(resources);
    all.addAll(Arrays.asList(more));
    return new Reply(metadata, bodies, all);
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
