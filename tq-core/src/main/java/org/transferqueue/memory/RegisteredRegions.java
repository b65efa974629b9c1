package org.transferqueue.memory;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.StampedLock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A registry of long-lived native regions that transfers may read from or write into, with an O(log
 * n) test of whether a segment lies wholly inside one of them.
 *
 * <p>Registered regions never overlap: registering a region that overlaps another is rejected,
 * except that registering exactly the same region again adds a reference, and each {@link
 * #unregister} drops one. Heap segments are never inside a registered region.
 *
 * <p>Thread-safe: lookups take the read lock of a {@link StampedLock}; changes take its write lock.
 */
public final class RegisteredRegions {
  private final StampedLock lock = new StampedLock();
  private final TreeMap<Long, Region> byStart = new TreeMap<>();
  private long registeredBytes;

  /** Creates an empty registry. */
  public RegisteredRegions() {}

  private static final class Region {
    final long start;
    final long end;
    int references = 1;

    Region(long start, long end) {
      this.start = start;
      this.end = end;
    }
  }

  /**
   * Registers a native region.
   *
   * @param region a native segment that stays valid until it is unregistered
   * @throws TqException with {@code INVALID_ARGUMENT} for a heap or empty segment, or one that
   *     overlaps a registered region other than itself
   */
  public void register(MemorySegment region) {
    checkNative(region);
    long start = region.address();
    long end = start + region.byteSize();
    long stamp = lock.writeLock();
    try {
      Region same = byStart.get(start);
      if (same != null && same.end == end) {
        same.references++;
        return;
      }
      Map.Entry<Long, Region> below = byStart.floorEntry(end - 1);
      if (below != null && below.getValue().end > start) {
        Region other = below.getValue();
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "region [0x"
                + Long.toHexString(start)
                + ", 0x"
                + Long.toHexString(end)
                + ") overlaps registered region [0x"
                + Long.toHexString(other.start)
                + ", 0x"
                + Long.toHexString(other.end)
                + ")");
      }
      byStart.put(start, new Region(start, end));
      registeredBytes += end - start;
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  /**
   * Drops one registration of exactly this region.
   *
   * @param region a segment previously passed to {@link #register}
   * @return true if a registration was dropped, false if the region was not registered
   */
  public boolean unregister(MemorySegment region) {
    if (!region.isNative()) {
      return false;
    }
    long start = region.address();
    long end = start + region.byteSize();
    long stamp = lock.writeLock();
    try {
      Region same = byStart.get(start);
      if (same == null || same.end != end) {
        return false;
      }
      if (--same.references == 0) {
        byStart.remove(start);
        registeredBytes -= end - start;
      }
      return true;
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  /**
   * Tells whether {@code segment} lies wholly inside one registered region. A zero-length native
   * segment is inside when its address is.
   *
   * @param segment any segment
   * @return true if every byte of it is inside a registered region
   */
  public boolean contains(MemorySegment segment) {
    if (!segment.isNative()) {
      return false;
    }
    long start = segment.address();
    long end = start + segment.byteSize();
    long stamp = lock.readLock();
    try {
      Map.Entry<Long, Region> entry = byStart.floorEntry(start);
      return entry != null && end <= entry.getValue().end && start < entry.getValue().end;
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /**
   * The number of distinct registered regions.
   *
   * @return the count
   */
  public int size() {
    long stamp = lock.readLock();
    try {
      return byStart.size();
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /**
   * The total size of the distinct registered regions.
   *
   * @return bytes registered
   */
  public long registeredBytes() {
    long stamp = lock.readLock();
    try {
      return registeredBytes;
    } finally {
      lock.unlockRead(stamp);
    }
  }

  private static void checkNative(MemorySegment region) {
    if (!region.isNative()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "only native segments can be registered: " + region);
    }
    if (region.byteSize() == 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "an empty region cannot be registered: " + region);
    }
  }
}
