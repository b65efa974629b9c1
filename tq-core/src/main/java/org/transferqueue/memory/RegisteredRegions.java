package org.transferqueue.memory;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
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
  // The regions sorted by start, in parallel arrays: lookups and changes allocate nothing (the
  // arrays only grow past their largest size so far).
  private long[] starts = new long[8];
  private long[] ends = new long[8];
  private int[] references = new int[8];
  private MemorySegment[] segments = new MemorySegment[8];
  private int size;
  private long registeredBytes;

  /** Creates an empty registry. */
  public RegisteredRegions() {}

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
      int at = floor(start);
      if (at >= 0 && starts[at] == start && ends[at] == end) {
        references[at]++;
        return;
      }
      int below = floor(end - 1);
      if (below >= 0 && ends[below] > start) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "region [0x"
                + Long.toHexString(start)
                + ", 0x"
                + Long.toHexString(end)
                + ") overlaps registered region [0x"
                + Long.toHexString(starts[below])
                + ", 0x"
                + Long.toHexString(ends[below])
                + ")");
      }
      insert(below + 1, region, start, end);
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
      int at = floor(start);
      if (at < 0 || starts[at] != start || ends[at] != end) {
        return false;
      }
      if (--references[at] == 0) {
        remove(at);
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
      int at = floor(start);
      return at >= 0 && end <= ends[at] && start < ends[at];
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /**
   * The registered region that starts at {@code address}: the segment passed to its first {@link
   * #register}.
   *
   * @param address a native address
   * @return the region, or null when none starts there
   */
  public MemorySegment regionAt(long address) {
    long stamp = lock.readLock();
    try {
      int at = floor(address);
      return at >= 0 && starts[at] == address ? segments[at] : null;
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /**
   * Drops every registration.
   *
   * @return the regions that were registered, in address order
   */
  public List<MemorySegment> clear() {
    long stamp = lock.writeLock();
    try {
      List<MemorySegment> dropped = List.of(Arrays.copyOf(segments, size));
      Arrays.fill(segments, 0, size, null);
      size = 0;
      registeredBytes = 0;
      return dropped;
    } finally {
      lock.unlockWrite(stamp);
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
      return size;
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

  /** The position of the last region starting at or below {@code address}; -1 when none does. */
  private int floor(long address) {
    int low = 0;
    int high = size;
    while (low < high) {
      int mid = (low + high) >>> 1;
      if (starts[mid] <= address) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    return low - 1;
  }

  private void insert(int at, MemorySegment segment, long start, long end) {
    if (size == starts.length) {
      starts = Arrays.copyOf(starts, size * 2);
      ends = Arrays.copyOf(ends, size * 2);
      references = Arrays.copyOf(references, size * 2);
      segments = Arrays.copyOf(segments, size * 2);
    }
    System.arraycopy(segments, at, segments, at + 1, size - at);
    segments[at] = segment;
    System.arraycopy(starts, at, starts, at + 1, size - at);
    System.arraycopy(ends, at, ends, at + 1, size - at);
    System.arraycopy(references, at, references, at + 1, size - at);
    starts[at] = start;
    ends[at] = end;
    references[at] = 1;
    size++;
  }

  private void remove(int at) {
    System.arraycopy(starts, at + 1, starts, at, size - at - 1);
    System.arraycopy(ends, at + 1, ends, at, size - at - 1);
    System.arraycopy(references, at + 1, references, at, size - at - 1);
    System.arraycopy(segments, at + 1, segments, at, size - at - 1);
    size--;
    segments[size] = null;
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
