package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;

/**
 * Native buffers that stay registered with the store while they wait in the pool, so that transfers
 * into and out of them cost no registration (upstream registered and unregistered per call and
 * spent most of its read time doing so).
 *
 * <p>Buffers come in power-of-two size classes from {@link #MIN_CLASS_BYTES}. A released buffer
 * goes back to its class's free list, registered, unless the pool already retains {@code
 * maxRetainedBytes}; then it is unregistered and freed. With {@code keepRegistered = false} (the
 * upstream behaviour, kept for comparison) a buffer is registered when leased and unregistered when
 * released, while its memory is still pooled.
 *
 * <p>Thread-safe: one lock guards the free lists; registration goes through the {@link
 * RegionRegistry}'s lock.
 */
final class RegisteredBufferPool implements AutoCloseable {
  /** The smallest size class. */
  static final long MIN_CLASS_BYTES = 64L << 10;

  private final BufferAllocator allocator;
  private final RegionRegistry registry;
  private final boolean keepRegistered;
  private final long maxRetainedBytes;
  private final ReentrantLock lock = new ReentrantLock();
  private final List<ArrayDeque<Pooled>> freeLists = new ArrayList<>();
  private long retainedBytes; // guarded by lock
  private boolean closed; // guarded by lock

  /** A buffer of the pool with its registration. */
  private record Pooled(NativeBuffer buffer, RegionRegistry.Region region) {}

  /** A leased buffer; closing it returns the buffer to the pool. */
  final class Lease implements AutoCloseable {
    private final Pooled pooled;
    private final MemorySegment segment;
    private final AtomicBoolean released = new AtomicBoolean();

    private Lease(Pooled pooled, long lengthBytes) {
      this.pooled = pooled;
      this.segment = pooled.buffer.segment().asSlice(0, lengthBytes);
    }

    /**
     * The leased bytes, registered while the lease lasts.
     *
     * @return a segment of the requested length
     */
    MemorySegment segment() {
      return segment;
    }

    @Override
    public void close() {
      if (released.compareAndSet(false, true)) {
        giveBack(pooled);
      }
    }
  }

  RegisteredBufferPool(
      BufferAllocator allocator,
      RegionRegistry registry,
      boolean keepRegistered,
      long maxRetainedBytes) {
    this.allocator = allocator;
    this.registry = registry;
    this.keepRegistered = keepRegistered;
    this.maxRetainedBytes = maxRetainedBytes;
    for (int i = 0; i < 64; i++) {
      freeLists.add(new ArrayDeque<>());
    }
  }

  /**
   * Leases a registered buffer of at least {@code lengthBytes}.
   *
   * @param lengthBytes at least 1
   * @return the lease; the caller must close it
   * @throws org.transferqueue.TqException with {@code OUT_OF_MEMORY} from the allocator, {@code
   *     STORAGE_ERROR} if the store refuses to register the buffer, {@code CLOSED} after close
   */
  Lease acquire(long lengthBytes) {
    int sizeClass = sizeClass(lengthBytes);
    Pooled pooled;
    lock.lock();
    try {
      if (closed) {
        throw new StorageException(ErrorCode.CLOSED, "registered buffer pool is closed");
      }
      pooled = freeLists.get(sizeClass).pollFirst();
      if (pooled != null) {
        retainedBytes -= pooled.buffer.lengthBytes();
      }
    } finally {
      lock.unlock();
    }
    if (pooled == null) {
      NativeBuffer buffer = allocator.allocate(1L << sizeClass);
      pooled = new Pooled(buffer, register(buffer));
    } else if (!keepRegistered) {
      pooled = new Pooled(pooled.buffer, register(pooled.buffer));
    }
    return new Lease(pooled, lengthBytes);
  }

  private RegionRegistry.Region register(NativeBuffer buffer) {
    RegionRegistry.Region region = registry.acquire(buffer.segment());
    if (region == null) {
      buffer.close();
      throw new StorageException(
          ErrorCode.STORAGE_ERROR,
          "the object store refused to register a buffer of " + buffer.lengthBytes() + " bytes");
    }
    return region;
  }

  private void giveBack(Pooled pooled) {
    Pooled kept = pooled;
    if (!keepRegistered) {
      registry.release(pooled.region);
      kept = new Pooled(pooled.buffer, null);
    }
    lock.lock();
    try {
      if (!closed && retainedBytes + kept.buffer.lengthBytes() <= maxRetainedBytes) {
        freeLists.get(sizeClass(kept.buffer.lengthBytes())).addFirst(kept);
        retainedBytes += kept.buffer.lengthBytes();
        return;
      }
    } finally {
      lock.unlock();
    }
    free(kept);
  }

  private void free(Pooled pooled) {
    try {
      if (pooled.region != null) {
        registry.release(pooled.region);
      }
    } finally {
      pooled.buffer.close();
    }
  }

  /**
   * The bytes of the buffers waiting in the pool.
   *
   * @return retained bytes
   */
  long retainedBytes() {
    lock.lock();
    try {
      return retainedBytes;
    } finally {
      lock.unlock();
    }
  }

  private static int sizeClass(long lengthBytes) {
    long size = Math.max(MIN_CLASS_BYTES, lengthBytes);
    return 64 - Long.numberOfLeadingZeros(size - 1);
  }

  /** Unregisters and frees the pooled buffers; leases still out are freed when they close. */
  @Override
  public void close() {
    List<Pooled> left = new ArrayList<>();
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      freeLists.forEach(left::addAll);
      freeLists.forEach(ArrayDeque::clear);
      retainedBytes = 0;
    } finally {
      lock.unlock();
    }
    left.forEach(this::free);
  }
}
