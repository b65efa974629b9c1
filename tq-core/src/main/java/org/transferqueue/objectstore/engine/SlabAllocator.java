package org.transferqueue.objectstore.engine;

import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Best-fit allocator of byte ranges inside one slab, with coalescing of free neighbours.
 *
 * <p>Free ranges are indexed twice: by offset (to merge a freed range with its neighbours) and by
 * length (to find the smallest range that fits). Every range is a multiple of {@link #ALIGNMENT}
 * long and starts at a multiple of it. Allocation and free cost O(log n) in the number of free
 * ranges.
 *
 * <p>Not thread-safe: the {@link StoreMaster} lock guards it.
 */
final class SlabAllocator {
  /** Alignment of every range, a cache line. */
  static final long ALIGNMENT = 64;

  private final long capacity;
  private final TreeMap<Long, Long> freeByOffset = new TreeMap<>();
  private final TreeSet<FreeRange> freeByLength = new TreeSet<>();
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
    FreeRange fit = freeByLength.ceiling(new FreeRange(need, Long.MIN_VALUE));
    if (fit == null) {
      return -1;
    }
    long length = fit.length();
    long offset = fit.offset();
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
    Map.Entry<Long, Long> below = freeByOffset.floorEntry(start);
    if (below != null && below.getKey() + below.getValue() == start) {
      removeFree(below.getKey(), below.getValue());
      start = below.getKey();
    }
    Long aboveLength = freeByOffset.get(end);
    if (aboveLength != null) {
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
    return freeByLength.isEmpty() ? 0 : freeByLength.last().length();
  }

  /** Number of free ranges; 1 when everything is free and merged. */
  int freeRanges() {
    return freeByOffset.size();
  }

  private void addFree(long offset, long length) {
    freeByOffset.put(offset, length);
    freeByLength.add(new FreeRange(length, offset));
  }

  private void removeFree(long offset, long length) {
    freeByOffset.remove(offset);
    freeByLength.remove(new FreeRange(length, offset));
  }

  /** A free range in the length index: ordered by length, then offset (best fit, lowest first). */
  private record FreeRange(long length, long offset) implements Comparable<FreeRange> {
    @Override
    public int compareTo(FreeRange other) {
      int byLength = Long.compare(length, other.length);
      return byLength != 0 ? byLength : Long.compare(offset, other.offset);
    }
  }
}
