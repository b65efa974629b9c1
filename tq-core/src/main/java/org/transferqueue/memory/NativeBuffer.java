package org.transferqueue.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A reference-counted lease of off-heap memory from a {@link BufferAllocator}, seen through one
 * holder's handle.
 *
 * <p>A new buffer has one reference, owned by the caller of {@link BufferAllocator#allocate}. Share
 * it by calling {@link #retain()} for every extra holder (for example a cell held by storage and by
 * an in-flight send): each call adds a reference and returns that holder's own handle. A holder
 * gives its reference back by closing its handle ({@link #close()}, idempotent per handle), or by
 * {@link #release()}, which drops one reference of the lease whichever handle it is called on. When
 * the count reaches zero the block goes back to the pool and {@link #segment()} must no longer be
 * used.
 *
 * <pre>{@code
 * try (NativeBuffer buffer = allocator.allocate(n)) {  // one reference
 *   NativeBuffer shared = buffer.retain();            // two: the send holds its own handle
 *   send(shared);                                     // the send closes `shared` when done
 * }                                                   // one; the send's close frees the block
 * }</pre>
 *
 * <p>Use after release: pooling keeps a block's memory mapped, so a stale segment would read or
 * write the next lease's bytes without any error. A root allocator built with {@link
 * RootAllocator.Builder#checkUseAfterRelease(boolean)} (as every test's allocator is) hands each
 * lease out through its own {@link Arena} and closes it when the count reaches zero, so that any
 * later access throws {@link IllegalStateException}.
 *
 * <p>Thread-safe: the reference count and each handle's closed flag are atomic; the bytes
 * themselves are not synchronised.
 */
public final class NativeBuffer implements AutoCloseable {
  private static final VarHandle REF_COUNT;
  private static final VarHandle CLOSED;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      REF_COUNT = lookup.findVarHandle(Lease.class, "refCount", int.class);
      CLOSED = lookup.findVarHandle(NativeBuffer.class, "closed", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The state every handle of one lease shares. */
  private static final class Lease {
    final AccountingAllocator owner;
    final MemorySegment block;
    final MemorySegment segment;

    /** Closed at the last release when use after release is checked, else null. */
    final Arena checked;

    /**
     * Run at the last release instead of returning the block to the pool, for memory the allocator
     * did not create ({@link BufferAllocator#wrapForeign}); null for pooled blocks.
     */
    final Runnable onFree;

    /** The bytes this lease holds in its allocator's accounting. */
    final long accountedBytes;

    /** The first handle: the allocator's key for this lease. */
    NativeBuffer first;

    @SuppressWarnings("unused") // accessed through REF_COUNT
    volatile int refCount = 1;

    // reinterpret only moves the lease's own bytes into a narrower lifetime: the block outlives it.
    @SuppressWarnings("restricted")
    Lease(
        AccountingAllocator owner,
        MemorySegment block,
        long lengthBytes,
        boolean check,
        Runnable onFree,
        long accountedBytes) {
      this.owner = owner;
      this.block = block;
      this.onFree = onFree;
      this.accountedBytes = accountedBytes;
      MemorySegment slice = block.asSlice(0, lengthBytes);
      if (check) {
        this.checked = Arena.ofShared();
        this.segment = slice.reinterpret(checked, null);
      } else {
        this.checked = null;
        this.segment = slice;
      }
    }
  }

  private final Lease lease;

  @SuppressWarnings("unused") // accessed through CLOSED
  private volatile boolean closed;

  NativeBuffer(AccountingAllocator owner, MemorySegment block, long lengthBytes, boolean check) {
    this.lease = new Lease(owner, block, lengthBytes, check, null, block.byteSize());
    lease.first = this;
  }

  /** A lease of foreign memory: {@code onFree} runs at the last release. */
  NativeBuffer(
      AccountingAllocator owner,
      MemorySegment memory,
      boolean check,
      Runnable onFree,
      long accountedBytes) {
    this.lease = new Lease(owner, memory, memory.byteSize(), check, onFree, accountedBytes);
    lease.first = this;
  }

  private NativeBuffer(Lease lease) {
    this.lease = lease;
  }

  /**
   * The usable memory: exactly the length asked for, aligned to {@link
   * BufferAllocator#ALIGNMENT_BYTES}. Valid until the last reference is released.
   *
   * @return the segment
   */
  public MemorySegment segment() {
    return lease.segment;
  }

  /**
   * The usable length.
   *
   * @return {@code segment().byteSize()}
   */
  public long lengthBytes() {
    return lease.segment.byteSize();
  }

  /**
   * The size of the pooled block behind this buffer, which is what the allocator accounts.
   *
   * @return the block size in bytes
   */
  public long capacityBytes() {
    return lease.block.byteSize();
  }

  /**
   * The allocator this buffer was taken from.
   *
   * @return the owning allocator
   */
  public BufferAllocator allocator() {
    return lease.owner;
  }

  /**
   * The current reference count of the lease; zero once released.
   *
   * @return the count
   */
  public int refCount() {
    return (int) REF_COUNT.getVolatile(lease);
  }

  /**
   * Adds a reference for a new holder.
   *
   * @return the new holder's handle on the same memory, to {@link #close()} once
   * @throws TqException with {@code ILLEGAL_STATE} if the buffer was already released
   */
  public NativeBuffer retain() {
    int current;
    do {
      current = (int) REF_COUNT.getVolatile(lease);
      if (current <= 0) {
        throw new TqException(ErrorCode.ILLEGAL_STATE, "retain of a released buffer " + this);
      }
    } while (!REF_COUNT.compareAndSet(lease, current, current + 1));
    return new NativeBuffer(lease);
  }

  /**
   * Drops a reference of the lease, whichever handle it is called on; the last one returns the
   * memory to the pool.
   *
   * @return true if this call released the memory
   * @throws TqException with {@code ILLEGAL_STATE} if the buffer was already released
   */
  public boolean release() {
    int left = drop();
    if (left < 0) {
      throw new TqException(ErrorCode.ILLEGAL_STATE, "release of a released buffer " + this);
    }
    return left == 0;
  }

  /**
   * Gives back this handle's reference: the first close of a handle drops one reference, later
   * closes of the same handle do nothing, so that a holder that closes twice never takes another
   * holder's reference. Racing closes of one handle drop exactly one reference. Does nothing either
   * if the lease was already released through {@link #release()}.
   */
  @Override
  public void close() {
    if (CLOSED.compareAndSet(this, false, true)) {
      drop();
    }
  }

  /**
   * Drops one reference unless none is left; the drop that takes the count to zero frees the block.
   *
   * @return the references left, or -1 if none was left to drop
   */
  private int drop() {
    int current;
    do {
      current = (int) REF_COUNT.getVolatile(lease);
      if (current <= 0) {
        return -1;
      }
    } while (!REF_COUNT.compareAndSet(lease, current, current - 1));
    if (current == 1) {
      if (lease.checked != null) {
        lease.checked.close();
      }
      if (lease.onFree == null) {
        lease.owner.free(lease.first, lease.block);
      } else {
        lease.owner.freeForeign(lease.first, lease.accountedBytes, lease.onFree);
      }
    }
    return current - 1;
  }

  @Override
  public String toString() {
    return "NativeBuffer[allocator="
        + lease.owner.name()
        + ", length="
        + lease.segment.byteSize()
        + ", address=0x"
        + Long.toHexString(lease.segment.address())
        + ", refCount="
        + refCount()
        + "]";
  }
}
