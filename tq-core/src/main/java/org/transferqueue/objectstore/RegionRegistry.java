package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The memory regions one client has registered with its {@link ObjectStore}, with reference counts,
 * so that concurrent transfers share registrations instead of registering the same memory twice
 * (which the store rejects).
 *
 * <p>A transfer {@link #acquire acquires} every segment it moves: a segment inside a region that is
 * already registered adds a reference to that region; otherwise the segment itself is registered.
 * {@link #release} drops the reference and unregisters a region when its last reference goes.
 * Pooled buffers hold one reference for as long as they are pooled, which keeps them registered
 * across calls, and so does caller memory registered with {@link #registerCaller} until {@link
 * #unregisterCaller}.
 *
 * <p>Thread-safe: one lock guards the tables and the store's register and unregister calls.
 */
final class RegionRegistry implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(RegionRegistry.class.getName());

  /** One registered region. */
  static final class Region {
    final MemorySegment segment;
    final long start;
    final long end;
    int references;

    Region(MemorySegment segment) {
      this.segment = segment;
      this.start = segment.address();
      this.end = start + segment.byteSize();
    }
  }

  private final ObjectStore store;
  private final ReentrantLock lock = new ReentrantLock();
  private final TreeMap<Long, Region> byStart = new TreeMap<>();
  private final Map<Long, Region> callerRegions = new HashMap<>();
  private final AtomicLong registerCalls = new AtomicLong();
  private final AtomicLong unregisterCalls = new AtomicLong();

  RegionRegistry(ObjectStore store) {
    this.store = store;
  }

  /**
   * Adds a reference to the registered region holding {@code segment}, registering the segment
   * first if no region holds it.
   *
   * @param segment a native, non-empty segment
   * @return the region, or null when the segment overlaps a registered region without lying inside
   *     it, or the store refused the registration (the caller then stages the bytes)
   */
  Region acquire(MemorySegment segment) {
    long start = segment.address();
    long end = start + segment.byteSize();
    lock.lock();
    try {
      Map.Entry<Long, Region> below = byStart.floorEntry(start);
      if (below != null && below.getValue().end >= end && below.getValue().end > start) {
        below.getValue().references++;
        return below.getValue();
      }
      Map.Entry<Long, Region> overlap = byStart.floorEntry(end - 1);
      if (overlap != null && overlap.getValue().end > start) {
        return null;
      }
      registerCalls.incrementAndGet();
      int rc = store.registerBuffer(segment);
      if (rc != 0) {
        LOG.log(
            System.Logger.Level.DEBUG,
            "registerBuffer of " + segment.byteSize() + " bytes returned " + rc + "; staging");
        return null;
      }
      Region region = new Region(segment);
      region.references = 1;
      byStart.put(start, region);
      return region;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Adds a reference to a registered region holding all of {@code [start, end)}, without
   * registering anything.
   *
   * @param start the first address
   * @param end the address after the last byte, greater than {@code start}
   * @return the region, or null when no registered region holds the whole range
   */
  Region acquireContaining(long start, long end) {
    lock.lock();
    try {
      Map.Entry<Long, Region> below = byStart.floorEntry(start);
      if (below == null || below.getValue().end < end) {
        return null;
      }
      below.getValue().references++;
      return below.getValue();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Drops one reference; unregisters the region when none is left.
   *
   * @param region a region returned by {@link #acquire}
   */
  void release(Region region) {
    lock.lock();
    try {
      if (--region.references > 0) {
        return;
      }
      if (!byStart.remove(region.start, region)) {
        return; // already unregistered by close()
      }
      unregisterCalls.incrementAndGet();
      int rc = store.unregisterBuffer(region.segment);
      if (rc != 0) {
        LOG.log(
            System.Logger.Level.WARNING,
            "unregisterBuffer of a region of "
                + region.segment.byteSize()
                + " bytes returned "
                + rc);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Registers caller memory for as long as the caller keeps it: one reference that {@link
   * #unregisterCaller} drops.
   *
   * @param region a native segment that stays valid until {@link #unregisterCaller}
   * @throws TqException with {@code INVALID_ARGUMENT} for a heap or empty segment, one already
   *     registered through this method, or one the store refuses (for example because it partly
   *     overlaps a registered region)
   */
  void registerCaller(MemorySegment region) {
    if (!region.isNative() || region.byteSize() == 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "only a non-empty native segment can be registered: " + region);
    }
    lock.lock();
    try {
      if (callerRegions.containsKey(region.address())) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "memory at 0x" + Long.toHexString(region.address()) + " is already registered");
      }
      Region registered = acquire(region);
      if (registered == null) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "the store refused to register "
                + region.byteSize()
                + " bytes at 0x"
                + Long.toHexString(region.address()));
      }
      callerRegions.put(region.address(), registered);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Drops a registration made by {@link #registerCaller}; the region is unregistered once no
   * transfer in flight uses it.
   *
   * @param region the segment given to {@link #registerCaller}
   * @return false if it was not registered through that method
   */
  boolean unregisterCaller(MemorySegment region) {
    Region registered;
    lock.lock();
    try {
      registered = callerRegions.remove(region.address());
    } finally {
      lock.unlock();
    }
    if (registered == null) {
      return false;
    }
    release(registered);
    return true;
  }

  /**
   * How many times this registry called {@link ObjectStore#registerBuffer}.
   *
   * @return the count
   */
  long registerCalls() {
    return registerCalls.get();
  }

  /**
   * How many times this registry called {@link ObjectStore#unregisterBuffer}.
   *
   * @return the count
   */
  long unregisterCalls() {
    return unregisterCalls.get();
  }

  /**
   * The number of regions registered now.
   *
   * @return the count
   */
  int size() {
    lock.lock();
    try {
      return byStart.size();
    } finally {
      lock.unlock();
    }
  }

  /** Unregisters every region still registered. */
  @Override
  public void close() {
    lock.lock();
    try {
      List<Region> left = new ArrayList<>(byStart.values());
      byStart.clear();
      callerRegions.clear();
      for (Region region : left) {
        unregisterCalls.incrementAndGet();
        store.unregisterBuffer(region.segment);
      }
    } finally {
      lock.unlock();
    }
  }
}
