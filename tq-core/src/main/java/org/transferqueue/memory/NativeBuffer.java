package org.transferqueue.memory;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A reference-counted lease of off-heap memory from a {@link BufferAllocator}.
 *
 * <p>A new buffer has one reference, owned by the caller of {@link BufferAllocator#allocate}. Share
 * it by calling {@link #retain()} for every extra holder (for example a cell held by storage and by
 * an in-flight send); each holder calls {@link #release()} (or {@link #close()}) once. When the
 * count reaches zero the block goes back to the pool and {@link #segment()} must no longer be used.
 *
 * <p>Thread-safe: the reference count is atomic; the bytes themselves are not synchronised.
 */
public final class NativeBuffer implements AutoCloseable {
  private static final VarHandle REF_COUNT;

  static {
    try {
      REF_COUNT = MethodHandles.lookup().findVarHandle(NativeBuffer.class, "refCount", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final AccountingAllocator owner;
  private final MemorySegment block;
  private final MemorySegment segment;

  @SuppressWarnings("unused") // accessed through REF_COUNT
  private volatile int refCount = 1;

  NativeBuffer(AccountingAllocator owner, MemorySegment block, long lengthBytes) {
    this.owner = owner;
    this.block = block;
    this.segment = block.asSlice(0, lengthBytes);
  }

  /**
   * The usable memory: exactly the length asked for, aligned to {@link
   * BufferAllocator#ALIGNMENT_BYTES}. Valid until the last reference is released.
   *
   * @return the segment
   */
  public MemorySegment segment() {
    return segment;
  }

  /**
   * The usable length.
   *
   * @return {@code segment().byteSize()}
   */
  public long lengthBytes() {
    return segment.byteSize();
  }

  /**
   * The size of the pooled block behind this buffer, which is what the allocator accounts.
   *
   * @return the block size in bytes
   */
  public long capacityBytes() {
    return block.byteSize();
  }

  /**
   * The allocator this buffer was taken from.
   *
   * @return the owning allocator
   */
  public BufferAllocator allocator() {
    return owner;
  }

  /**
   * The current reference count; zero once released.
   *
   * @return the count
   */
  public int refCount() {
    return (int) REF_COUNT.getVolatile(this);
  }

  /**
   * Adds a reference.
   *
   * @return this buffer
   * @throws TqException with {@code ILLEGAL_STATE} if the buffer was already released
   */
  public NativeBuffer retain() {
    int current;
    do {
      current = (int) REF_COUNT.getVolatile(this);
      if (current <= 0) {
        throw new TqException(ErrorCode.ILLEGAL_STATE, "retain of a released buffer " + this);
      }
    } while (!REF_COUNT.compareAndSet(this, current, current + 1));
    return this;
  }

  /**
   * Drops a reference; the last one returns the memory to the pool.
   *
   * @return true if this call released the memory
   * @throws TqException with {@code ILLEGAL_STATE} if the buffer was already released
   */
  public boolean release() {
    int current;
    do {
      current = (int) REF_COUNT.getVolatile(this);
      if (current <= 0) {
        throw new TqException(ErrorCode.ILLEGAL_STATE, "release of a released buffer " + this);
      }
    } while (!REF_COUNT.compareAndSet(this, current, current - 1));
    if (current == 1) {
      owner.free(this, block);
      return true;
    }
    return false;
  }

  /** Releases one reference, like {@link #release()}, but does nothing if already released. */
  @Override
  public void close() {
    if (refCount() > 0) {
      release();
    }
  }

  @Override
  public String toString() {
    return "NativeBuffer[allocator="
        + owner.name()
        + ", length="
        + segment.byteSize()
        + ", address=0x"
        + Long.toHexString(segment.address())
        + ", refCount="
        + refCount()
        + "]";
  }
}
