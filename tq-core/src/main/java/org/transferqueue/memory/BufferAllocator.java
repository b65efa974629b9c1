package org.transferqueue.memory;

import java.lang.foreign.MemorySegment;

/**
 * Hands out {@link NativeBuffer}s within a byte limit and accounts for them.
 *
 * <p>Allocators form a tree: one {@link RootAllocator} per process owns the memory pool, and named
 * child allocators (one per storage unit, connection or store segment) each have their own limit
 * and statistics. A child's allocations count against every ancestor's limit too.
 *
 * <p>Thread-safe. The caller owns every buffer it allocates and must {@link NativeBuffer#close()
 * close} it; closing an allocator while buffers are outstanding is a leak, reported according to
 * the root's {@link LeakPolicy}.
 *
 * <pre>{@code
 * try (RootAllocator root = RootAllocator.builder().limitBytes(1L << 30).build();
 *     BufferAllocator unit = root.newChildAllocator("storage-unit-0", 256L << 20);
 *     NativeBuffer cell = unit.allocate(4096)) {
 *   cell.segment().fill((byte) 1);
 * }
 * }</pre>
 */
public interface BufferAllocator extends AutoCloseable {

  /** Alignment in bytes of every buffer's first byte. */
  long ALIGNMENT_BYTES = 64;

  /**
   * Allocates a buffer of exactly {@code lengthBytes} usable bytes, aligned to {@link
   * #ALIGNMENT_BYTES}. The contents are unspecified (a reused block keeps old bytes).
   *
   * @param lengthBytes the size, zero or more
   * @return a buffer the caller owns and must close
   * @throws org.transferqueue.TqException with {@code INVALID_ARGUMENT} for a negative length,
   *     {@code OUT_OF_MEMORY} when this allocator's or an ancestor's limit would be exceeded
   *     (nothing is allocated then), {@code CLOSED} after close
   */
  NativeBuffer allocate(long lengthBytes);

  /**
   * Wraps memory this allocator did not create (a mapped shared-memory segment, a region of one) in
   * a {@link NativeBuffer} of its own, accounted here and in every ancestor like an allocation of
   * {@code accountedBytes}. The buffer's segment is {@code memory} itself; when its last reference
   * is released the accounting is returned and {@code onFree} runs (on the releasing thread), which
   * is where the memory's real owner takes it back.
   *
   * @param memory native memory that stays valid until {@code onFree} runs
   * @param accountedBytes the bytes to count against the limits: the memory's size for memory this
   *     buffer owns, 0 for a view whose bytes are accounted elsewhere
   * @param onFree run once at the last release; must not throw
   * @return a buffer the caller owns and must close
   * @throws org.transferqueue.TqException with {@code INVALID_ARGUMENT} for heap memory or a
   *     negative count, {@code OUT_OF_MEMORY} when a limit would be exceeded (then {@code onFree}
   *     does not run and the caller still owns the memory), {@code CLOSED} after close
   */
  NativeBuffer wrapForeign(MemorySegment memory, long accountedBytes, Runnable onFree);

  /**
   * Creates a named child allocator whose allocations also count against this one.
   *
   * @param name a name for statistics and leak reports
   * @param limitBytes the child's own limit
   * @return a child the caller owns and must close before this allocator
   */
  BufferAllocator newChildAllocator(String name, long limitBytes);

  /**
   * The allocator's name.
   *
   * @return the name given at creation
   */
  String name();

  /**
   * The byte limit of this allocator alone.
   *
   * @return the limit in bytes
   */
  long limitBytes();

  /**
   * Bytes held by outstanding buffers of this allocator and its children, counted by block size.
   *
   * @return the current allocation in bytes
   */
  long allocatedBytes();

  /**
   * The highest value {@link #allocatedBytes()} has reached.
   *
   * @return the peak in bytes
   */
  long peakBytes();

  /**
   * Buffers allocated by this allocator (not its children) and not yet released.
   *
   * @return the count of outstanding buffers
   */
  long outstandingBuffers();

  /**
   * Closes this allocator. Idempotent. Outstanding buffers or open children are a leak: {@link
   * LeakPolicy#THROW} throws a {@code RESOURCE_LEAK} {@link org.transferqueue.TqException} naming
   * them, {@link LeakPolicy#LOG} logs and counts them.
   */
  @Override
  void close();
}
