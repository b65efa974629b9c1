package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import org.transferqueue.memory.BufferAllocator;

/**
 * Where a call wants the bodies of its reply: read straight from the socket into these bytes with a
 * scattering read, never through a heap array.
 *
 * <ul>
 *   <li>{@link #into}: the caller's own segments, one per expected body (the Java form of {@code
 *       batch_get_into}); each reply body must fit its segment;
 *   <li>{@link #allocateFrom}: one buffer per body from an allocator, owned by the {@link
 *       Response};
 *   <li>{@link #allocateWith}: a callback that sees the reply's metadata and body lengths and
 *       returns the buffers.
 * </ul>
 *
 * <p>If a reply arrives after the call failed (deadline, close) its bodies are drained into scratch
 * memory: caller segments are never written after the call's future has completed.
 */
public sealed interface BodyDestination {

  /**
   * Bodies go into the caller's segments, body {@code i} into {@code segments.get(i)} from offset
   * 0. The reply must carry exactly {@code segments.size()} bodies, each no longer than its
   * segment; otherwise the call fails with {@code SHAPE_MISMATCH} and the segments are not written.
   *
   * @param segments writable segments the caller keeps valid until the call completes
   * @return the destination
   */
  static BodyDestination into(List<MemorySegment> segments) {
    return new Segments(segments);
  }

  /**
   * Bodies go into buffers allocated from {@code allocator}, owned by the {@link Response}. A reply
   * that came through shared memory (docs/PROTOCOL.md section 4.2) is not copied at all: its
   * buffers are <em>read-only</em> views of the server's memory (accounted as 0 bytes in {@code
   * allocator}), which may be a stored cell or object itself, so a write through one throws {@link
   * IllegalArgumentException} ("read-only segment") instead of changing what every later reader
   * gets; copy a buffer to modify it.
   *
   * @param allocator the allocator; an {@code OUT_OF_MEMORY} fails the call, not the connection
   * @return the destination
   */
  static BodyDestination allocateFrom(BufferAllocator allocator) {
    return new FromAllocator(allocator);
  }

  /**
   * Bodies go into buffers the callback returns once the lengths are known.
   *
   * @param allocator the callback
   * @return the destination
   */
  static BodyDestination allocateWith(BodyAllocator allocator) {
    return new Callback(allocator);
  }

  /**
   * Caller segments.
   *
   * @param segments one writable segment per expected body
   */
  record Segments(List<MemorySegment> segments) implements BodyDestination {
    /** Copies the list. */
    public Segments {
      segments = List.copyOf(segments);
    }
  }

  /**
   * Buffers from an allocator.
   *
   * @param allocator where the buffers come from
   */
  record FromAllocator(BufferAllocator allocator) implements BodyDestination {
    /** Checks for null. */
    public FromAllocator {
      Objects.requireNonNull(allocator, "allocator");
    }
  }

  /**
   * Buffers from a callback.
   *
   * @param allocator the callback
   */
  record Callback(BodyAllocator allocator) implements BodyDestination {
    /** Checks for null. */
    public Callback {
      Objects.requireNonNull(allocator, "allocator");
    }
  }
}
