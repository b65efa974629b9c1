package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;
import org.transferqueue.TqException;
import org.transferqueue.memory.RegisteredRegions;

/**
 * The memory an {@link AbstractObjectStore}'s caller registered for zero-copy transfers, with
 * Mooncake's rules: one registration per start address, regions never overlap, only native memory;
 * unregistering takes the start address of a region. Closing drops every registration and refuses
 * later ones, so a store that closes never keeps a region registered.
 *
 * <p>Thread-safe: changes take a small lock of their own; {@link #contains} uses {@link
 * RegisteredRegions}' read lock only.
 */
final class RegisteredBufferSet {
  private static final int OK = StoreStatus.OK.code();
  private static final int INVALID = StoreStatus.INVALID_PARAMS.code();

  private final RegisteredRegions regions = new RegisteredRegions();
  private final ReentrantLock lock = new ReentrantLock();
  private boolean closed; // guarded by lock

  /**
   * Registers a region.
   *
   * @param buffer a native segment that the caller keeps valid until it unregisters it
   * @return 0, or -600 for heap memory, a start address already registered, an overlap with a
   *     registered region, or a closed set
   */
  int register(MemorySegment buffer) {
    lock.lock();
    try {
      if (closed || !buffer.isNative() || regions.regionAt(buffer.address()) != null) {
        return INVALID;
      }
      regions.register(buffer);
      return OK;
    } catch (TqException e) {
      return INVALID; // overlaps a registered region
    } finally {
      lock.unlock();
    }
  }

  /**
   * Unregisters the region that starts where {@code buffer} starts.
   *
   * @param buffer a segment starting at a registered region's address
   * @return 0, or -600 when no registered region starts there
   */
  int unregister(MemorySegment buffer) {
    lock.lock();
    try {
      MemorySegment region =
          !closed && buffer.isNative() ? regions.regionAt(buffer.address()) : null;
      if (region == null) {
        return INVALID;
      }
      regions.unregister(region);
      return OK;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Tells whether {@code segment} lies wholly inside one registered region.
   *
   * @param segment any segment
   * @return true if every byte of it is registered
   */
  boolean contains(MemorySegment segment) {
    return regions.contains(segment);
  }

  /** Drops every registration and refuses later ones. Idempotent. */
  void close() {
    lock.lock();
    try {
      closed = true;
      regions.clear();
    } finally {
      lock.unlock();
    }
  }
}
