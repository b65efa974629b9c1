package org.transferqueue.objectstore.engine;

import java.util.Arrays;

/**
 * Best-fit allocator of byte ranges inside one slab, with coalescing of free neighbours.
 *
 * <p>Free ranges are indexed twice: by offset (to merge a freed range with its neighbours) and by
 * length, then offset (to find the smallest range that fits, the lowest of equals). Every range is
 * a multiple of {@link #ALIGNMENT} long and starts at a multiple of it. Both indexes are sorted
 * primitive arrays: a lookup is a binary search, O(log n) in the number of free ranges, and an
 * insertion or removal moves the array's tail (a memory move of at most n longs). Steady-state
 * allocation and free allocate nothing on the heap; the arrays only grow when there are more free
 * ranges than ever before.
 *
 * <p>Not thread-safe: the {@link StoreMaster} lock guards it.
 */
final class SlabAllocator {
  /** Alignment of every range, a cache line. */
  static final long ALIGNMENT = 64;

  private final long capacity;
  private final SortedPairs freeByOffset = new SortedPairs();
  private final SortedPairs freeByLength = new SortedPairs();
  private long usedBytes;

  SlabAllocator(long capacity) {
    this.capacity = capacity - capacity % ALIGNMENT;
    if (this.capacity > 0) {
      addFree(0, this.capacity);
    }
  }

  static long aligned(long size) {
    return (size + ALIGNMENT - 1) & -ALIGNMENT;
  }

  /** Allocates {@code size} bytes; returns the offset, or -1 when no free range is long enough. */
  long allocate(long size) {
    long need = aligned(size);
    int fit = freeByLength.ceiling(need, Long.MIN_VALUE);
    if (fit == freeByLength.size) {
      return -1;
    }
    long length = freeByLength.primary[fit];
    long offset = freeByLength.secondary[fit];
    removeFree(offset, length);
    if (length > need) {
      addFree(offset + need, length - need);
    }
    usedBytes += need;
    return offset;
  }

  /** Frees a range returned by {@link #allocate} for the same {@code size}. */
  void free(long offset, long size) {
    long length = aligned(size);
    usedBytes -= length;
    long start = offset;
    long end = offset + length;
    // The free range at or below start: the last one whose offset is not above it.
    int next = freeByOffset.ceiling(start, Long.MIN_VALUE);
    int below = next < freeByOffset.size && freeByOffset.primary[next] == start ? next : next - 1;
    if (below >= 0) {
      long belowOffset = freeByOffset.primary[below];
      long belowLength = freeByOffset.secondary[below];
      if (belowOffset + belowLength == start) {
        removeFree(belowOffset, belowLength);
        start = belowOffset;
      }
    }
    int above = freeByOffset.ceiling(end, Long.MIN_VALUE);
    if (above < freeByOffset.size && freeByOffset.primary[above] == end) {
      long aboveLength = freeByOffset.secondary[above];
      removeFree(end, aboveLength);
      end += aboveLength;
    }
    addFree(start, end - start);
  }

  long capacity() {
    return capacity;
  }

  long usedBytes() {
    return usedBytes;
  }

  /** The longest free range: the largest object that fits now. */
  long largestFree() {
    return freeByLength.size == 0 ? 0 : freeByLength.primary[freeByLength.size - 1];
  }

  /** Number of free ranges; 1 when everything is free and merged. */
  int freeRanges() {
    return freeByOffset.size;
  }

  private void addFree(long offset, long length) {
    freeByOffset.insert(offset, length);
    freeByLength.insert(length, offset);
  }

  private void removeFree(long offset, long length) {
    freeByOffset.remove(offset, length);
    freeByLength.remove(length, offset);
  }

  /**
   * Distinct pairs of longs in two parallel arrays, sorted by the first, then the second: an
   * ordered set without an object per element.
   */
  private static final class SortedPairs {
    long[] primary = new long[16];
    long[] secondary = new long[16];
    int size;

    /** The position of the first pair not below {@code (p, s)}; {@code size} when none is. */
    int ceiling(long p, long s) {
      int low = 0;
      int high = size;
      while (low < high) {
        int mid = (low + high) >>> 1;
        int byPrimary = Long.compare(primary[mid], p);
        int order = byPrimary != 0 ? byPrimary : Long.compare(secondary[mid], s);
        if (order < 0) {
          low = mid + 1;
        } else {
          high = mid;
        }
      }
      return low;
    }

    void insert(long p, long s) {
      int at = ceiling(p, s);
      if (size == primary.length) {
        primary = Arrays.copyOf(primary, size * 2);
        secondary = Arrays.copyOf(secondary, size * 2);
      }
      System.arraycopy(primary, at, primary, at + 1, size - at);
      System.arraycopy(secondary, at, secondary, at + 1, size - at);
      primary[at] = p;
      secondary[at] = s;
      size++;
    }

    void remove(long p, long s) {
      int at = ceiling(p, s);
      if (at == size || primary[at] != p || secondary[at] != s) {
        throw new IllegalStateException("free range (" + p + ", " + s + ") is not indexed");
      }
      System.arraycopy(primary, at + 1, primary, at, size - at - 1);
      System.arraycopy(secondary, at + 1, secondary, at, size - at - 1);
      size--;
    }
  }
}
