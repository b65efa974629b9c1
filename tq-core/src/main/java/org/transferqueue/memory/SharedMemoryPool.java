package org.transferqueue.memory;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A server's pool of {@link SharedSegment}s and the regions handed out of them: the memory a client
 * and a server on one host share to move frame bodies without the socket.
 *
 * <p>Regions are {@link NativeBuffer}s (reference-counted like any other buffer); the last release
 * of a region returns its space to its segment. Space is reused first-fit and coalesced, so
 * segments stay mapped and their pages touched once: fresh memory is expensive to touch, reused
 * memory is not. Every region starts 64-byte aligned at an offset of at least {@link
 * SharedSegment#HEADER_BYTES}. A region larger than a standard segment ({@code segmentBytes} minus
 * the header) gets a dedicated segment of its own size rounded up to 4 KiB. The segments together
 * hold at most {@code limitBytes}; each segment is accounted in full, from its creation, in a child
 * allocator of the allocator given here ({@link BufferAllocator#wrapForeign}), so the process's
 * memory limit covers them like any other off-heap byte. A segment that empties stays mapped for
 * the next region (its pages are touched already, on both sides of a connection): empty segments
 * are closed only when a new segment would not fit under the limit otherwise, when the allocator
 * refuses a new one, by {@link #trim()}, or at close.
 *
 * <p><b>Storage regions.</b> A store that keeps its memory in the pool, so that same-host clients
 * can map what it holds (a store node's engine slabs), takes it with {@link #allocateStorage}: each
 * such region gets a dedicated segment that is never carved for anything else, is closed as soon as
 * the region is released, and is accounted in the same child allocator as every other segment (so a
 * slab byte is counted once, there). Storage segments do not count against {@code limitBytes},
 * which bounds the memory that moves bodies (probes, grants, reply copies); they are reported apart
 * ({@link #storageBytes()}) and left out of {@link #segmentBytes()}, {@link #usedBytes()}, {@link
 * #segmentCount()} and {@link #regionCount()}.
 *
 * <p>Thread-safe: allocation, release and lookup take the pool's lock for a few map operations (a
 * new segment is created under it: memfd, truncate and map, no page touched). {@link #close()}
 * stops allocation; segments still holding regions are closed when their last region is released,
 * and the child allocator with the last of them.
 */
public final class SharedMemoryPool implements AutoCloseable {
  private static final long ALIGNMENT = BufferAllocator.ALIGNMENT_BYTES;
  private static final long PAGE = 4096;

  /**
   * Where a region lies: its segment and its offset in it.
   *
   * @param segment the segment
   * @param offset the byte offset of the given memory in the segment
   * @param region the region's buffer (the pool's first handle: retain it to hold the bytes)
   */
  public record Location(SharedSegment segment, long offset, NativeBuffer region) {}

  private final BufferAllocator accounting;
  private final long limitBytes;
  private final long segmentBytes;
  private final Object lock = new Object();

  /** Guarded by {@code lock}: segments by base address and the totals. */
  private final TreeMap<Long, Slot> slots = new TreeMap<>();

  private long totalBytes;
  private long storageBytes;
  private long usedBytes;
  private long regions;
  private boolean closed;

  /** One segment and its free and live regions; guarded by the pool's lock. */
  private static final class Slot {
    final SharedSegment segment;
    final long base;
    final boolean storage;
    NativeBuffer accounted;
    final TreeMap<Long, Long> free = new TreeMap<>();
    final TreeMap<Long, Region> live = new TreeMap<>();

    Slot(SharedSegment segment, boolean storage) {
      this.segment = segment;
      this.base = segment.memory().address();
      this.storage = storage;
      free.put(SharedSegment.HEADER_BYTES, segment.size() - SharedSegment.HEADER_BYTES);
    }
  }

  private record Region(long offset, long length, NativeBuffer buffer) {}

  /**
   * Creates an empty pool; segments are created on first use.
   *
   * @param parent the allocator whose child accounts the segments
   * @param name the child allocator's name
   * @param limitBytes the most bytes all segments may hold together
   * @param segmentBytes the size of a standard segment, a multiple of 4096 above the header
   * @throws TqException with {@code INVALID_ARGUMENT} for bad sizes
   */
  public SharedMemoryPool(BufferAllocator parent, String name, long limitBytes, long segmentBytes) {
    if (segmentBytes <= SharedSegment.HEADER_BYTES || segmentBytes % PAGE != 0 || limitBytes < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "shared memory pool: segmentBytes="
              + segmentBytes
              + " must be a multiple of 4096 above 64 and limitBytes="
              + limitBytes
              + " >= 0");
    }
    this.limitBytes = limitBytes;
    this.segmentBytes = segmentBytes;
    // The limit of transfer segments is checked here (grow); storage segments are bounded by the
    // parent's limit only, as the store's memory would be outside the pool.
    this.accounting = parent.newChildAllocator(name, parent.limitBytes());
  }

  /**
   * Reserves a region of at least {@code lengthBytes} bytes.
   *
   * @param lengthBytes 0 or more; the region is rounded up to a multiple of 64 (at least 64)
   * @return the region; the caller owns it, and its last release returns the space
   * @throws TqException with {@code OUT_OF_MEMORY} when the pool's limit, or an allocator limit,
   *     leaves no room; {@code CLOSED} after {@link #close()}
   */
  public NativeBuffer allocate(long lengthBytes) {
    if (lengthBytes < 0) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "lengthBytes=" + lengthBytes + " < 0");
    }
    long length = Math.max(ALIGNMENT, align(lengthBytes));
    synchronized (lock) {
      if (closed) {
        throw new TqException(ErrorCode.CLOSED, "shared memory pool is closed");
      }
      for (Slot slot : slots.values()) {
        NativeBuffer region = slot.storage ? null : carve(slot, length);
        if (region != null) {
          return region;
        }
      }
      return carve(grow(length), length);
    }
  }

  /**
   * Reserves a storage region of at least {@code lengthBytes} bytes in a segment of its own, for a
   * store that keeps its memory where same-host clients can map it (see the class comment): not
   * counted against {@link #limitBytes()}, accounted in the pool's child allocator, and its segment
   * is closed at the region's last release.
   *
   * @param lengthBytes 1 or more; rounded up to a multiple of 64
   * @return the region, at offset {@link SharedSegment#HEADER_BYTES} of its segment; the caller
   *     owns it
   * @throws TqException with {@code OUT_OF_MEMORY} when the allocator refuses the segment, {@code
   *     CLOSED} after {@link #close()}, {@code INVALID_ARGUMENT} for a length below 1, or the error
   *     of creating the segment (memfd, truncate, map)
   */
  public NativeBuffer allocateStorage(long lengthBytes) {
    if (lengthBytes < 1) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "lengthBytes=" + lengthBytes + " < 1");
    }
    long length = align(lengthBytes);
    long size = (length + SharedSegment.HEADER_BYTES + PAGE - 1) / PAGE * PAGE;
    synchronized (lock) {
      if (closed) {
        throw new TqException(ErrorCode.CLOSED, "shared memory pool is closed");
      }
      Slot slot = newSlot(size, true);
      NativeBuffer region;
      try {
        region = carve(slot, length);
      } catch (RuntimeException e) {
        slots.remove(slot.base);
        storageBytes -= size;
        slot.accounted.close();
        throw e;
      }
      return region;
    }
  }

  /**
   * Gives the tail of a live region back to the pool: the region keeps its first {@code keepBytes}
   * (rounded up to 64, at least 64) and the rest may be handed out again. For a granted region that
   * a request filled only partly and whose bytes a handler keeps. The buffer's segment keeps its
   * length: its holders must not touch the bytes beyond {@code keepBytes} any more.
   *
   * @param region a live region of this pool (any handle)
   * @param keepBytes the bytes still used from its start
   * @return the bytes given back (0 when the region is unknown or nothing is to give)
   */
  public long trim(NativeBuffer region, long keepBytes) {
    long keep = Math.max(ALIGNMENT, align(Math.max(0, keepBytes)));
    long address = region.segment().address();
    synchronized (lock) {
      Map.Entry<Long, Slot> entry = slots.floorEntry(address);
      if (entry == null) {
        return 0;
      }
      Slot slot = entry.getValue();
      Region live = slot.storage ? null : slot.live.get(address - slot.base);
      if (live == null || live.length() <= keep) {
        return 0;
      }
      long tail = live.length() - keep;
      slot.live.put(live.offset(), new Region(live.offset(), keep, live.buffer()));
      usedBytes -= tail;
      giveBack(slot, live.offset() + keep, tail);
      return tail;
    }
  }

  /**
   * Finds the region that holds {@code memory}, for a body that may already lie in shared memory.
   *
   * @param memory any segment
   * @return where it lies, or null if it is not inside one live region of this pool
   */
  public Location locate(MemorySegment memory) {
    if (!memory.isNative()) {
      return null;
    }
    long address = memory.address();
    synchronized (lock) {
      Map.Entry<Long, Slot> entry = slots.floorEntry(address);
      if (entry == null) {
        return null;
      }
      Slot slot = entry.getValue();
      long offset = address - slot.base;
      if (offset + memory.byteSize() > slot.segment.size()) {
        return null;
      }
      Map.Entry<Long, Region> live = slot.live.floorEntry(offset);
      if (live == null) {
        return null;
      }
      Region region = live.getValue();
      if (offset + memory.byteSize() > region.offset() + region.length()) {
        return null;
      }
      return new Location(slot.segment, offset, region.buffer());
    }
  }

  /** Carves {@code length} bytes first-fit out of a slot, or returns null. */
  private NativeBuffer carve(Slot slot, long length) {
    for (Map.Entry<Long, Long> free : slot.free.entrySet()) {
      if (free.getValue() >= length) {
        // Read both before the removal: TreeMap reuses a removed node for its successor, so the
        // entry would then name the next free range.
        long offset = free.getKey();
        long size = free.getValue();
        slot.free.remove(offset);
        if (size > length) {
          slot.free.put(offset + length, size - length);
        }
        NativeBuffer buffer;
        try {
          buffer =
              accounting.wrapForeign(
                  slot.segment.memory().asSlice(offset, length), 0, () -> release(slot, offset));
        } catch (RuntimeException e) {
          giveBack(slot, offset, length);
          throw e;
        }
        slot.live.put(offset, new Region(offset, length, buffer));
        if (!slot.storage) {
          usedBytes += length;
          regions++;
        }
        return buffer;
      }
    }
    return null;
  }

  /**
   * Creates a segment with room for {@code length} bytes, closing empty segments first if the new
   * one would not fit under the limit otherwise.
   */
  private Slot grow(long length) {
    long size =
        length + SharedSegment.HEADER_BYTES <= segmentBytes
            ? segmentBytes
            : (length + SharedSegment.HEADER_BYTES + PAGE - 1) / PAGE * PAGE;
    if (totalBytes + size > limitBytes && totalBytes - emptyBytes() + size <= limitBytes) {
      closeEmpty(totalBytes + size - limitBytes);
    }
    if (totalBytes + size > limitBytes) {
      throw new TqException(
          ErrorCode.OUT_OF_MEMORY,
          "shared memory pool: a region of "
              + length
              + " bytes needs a segment of "
              + size
              + " bytes, which would exceed shared_memory_limit_bytes="
              + limitBytes
              + " (segments hold "
              + totalBytes
              + ", regions use "
              + usedBytes
              + ")");
    }
    return newSlot(size, false);
  }

  /**
   * Creates, accounts and registers a segment of {@code size} bytes; called with the lock held.
   *
   * @param storage whether it holds one storage region (counted in {@code storageBytes}) rather
   *     than transfer regions (counted in {@code totalBytes})
   */
  private Slot newSlot(long size, boolean storage) {
    SharedSegment segment = SharedSegment.create(size);
    Slot slot = new Slot(segment, storage);
    try {
      slot.accounted = account(segment, size);
    } catch (RuntimeException e) {
      segment.close();
      throw e;
    }
    slots.put(slot.base, slot);
    if (storage) {
      storageBytes += size;
    } else {
      totalBytes += size;
    }
    return slot;
  }

  /**
   * Accounts a new segment; if the allocator refuses, closes the empty segments and tries again.
   */
  private NativeBuffer account(SharedSegment segment, long size) {
    try {
      return accounting.wrapForeign(segment.memory(), size, segment::close);
    } catch (TqException e) {
      if (e.code() != ErrorCode.OUT_OF_MEMORY || closeEmpty(Long.MAX_VALUE) == 0) {
        throw e;
      }
      return accounting.wrapForeign(segment.memory(), size, segment::close);
    }
  }

  private long emptyBytes() {
    long empty = 0;
    for (Slot slot : slots.values()) {
      if (!slot.storage && slot.live.isEmpty()) {
        empty += slot.segment.size();
      }
    }
    return empty;
  }

  /**
   * Closes empty segments, largest first, until at least {@code wanted} bytes are freed or none is
   * left; called with the lock held (closing a segment only unmaps it and closes its descriptor).
   *
   * @return the bytes freed
   */
  private long closeEmpty(long wanted) {
    List<Slot> empty = new ArrayList<>();
    for (Slot slot : slots.values()) {
      if (!slot.storage && slot.live.isEmpty()) {
        empty.add(slot);
      }
    }
    empty.sort((a, b) -> Long.compare(b.segment.size(), a.segment.size()));
    long freed = 0;
    for (Slot slot : empty) {
      if (freed >= wanted) {
        break;
      }
      slots.remove(slot.base);
      totalBytes -= slot.segment.size();
      freed += slot.segment.size();
      slot.accounted.close();
    }
    return freed;
  }

  /**
   * Closes every empty segment, giving its memory back to the operating system.
   *
   * @return the bytes freed
   */
  public long trim() {
    synchronized (lock) {
      return closeEmpty(Long.MAX_VALUE);
    }
  }

  private void release(Slot slot, long offset) {
    NativeBuffer emptied = null;
    boolean last = false;
    synchronized (lock) {
      Region region = slot.live.remove(offset);
      if (region == null) {
        return;
      }
      if (slot.storage) {
        // A storage segment serves its one region only: it goes with it.
        slots.remove(slot.base);
        storageBytes -= slot.segment.size();
        emptied = slot.accounted;
        last = closed && slots.isEmpty();
      } else {
        usedBytes -= region.length();
        regions--;
        giveBack(slot, offset, region.length());
        if (slot.live.isEmpty() && closed) {
          slots.remove(slot.base);
          totalBytes -= slot.segment.size();
          emptied = slot.accounted;
          last = slots.isEmpty();
        }
      }
    }
    if (emptied != null) {
      emptied.close();
    }
    if (last) {
      accounting.close();
    }
  }

  /** Returns space to a slot's free list, merged with its neighbours. */
  private static void giveBack(Slot slot, long offset, long length) {
    long start = offset;
    long end = offset + length;
    Map.Entry<Long, Long> before = slot.free.floorEntry(start);
    if (before != null && before.getKey() + before.getValue() == start) {
      start = before.getKey();
      slot.free.remove(start);
    }
    Long after = slot.free.get(end);
    if (after != null) {
      slot.free.remove(end);
      end += after;
    }
    slot.free.put(start, end - start);
  }

  private static long align(long length) {
    return (length + ALIGNMENT - 1) & -ALIGNMENT;
  }

  /**
   * The bytes the segments for moving bodies hold (what the allocator accounts for them; storage
   * segments are in {@link #storageBytes()}).
   *
   * @return bytes
   */
  public long segmentBytes() {
    synchronized (lock) {
      return totalBytes;
    }
  }

  /**
   * The bytes the storage segments hold ({@link #allocateStorage}), accounted in the pool's child
   * allocator like the others.
   *
   * @return bytes
   */
  public long storageBytes() {
    synchronized (lock) {
      return storageBytes;
    }
  }

  /**
   * The bytes of live regions.
   *
   * @return bytes
   */
  public long usedBytes() {
    synchronized (lock) {
      return usedBytes;
    }
  }

  /**
   * The number of mapped segments for moving bodies (storage segments left out).
   *
   * @return the count
   */
  public int segmentCount() {
    synchronized (lock) {
      int count = 0;
      for (Slot slot : slots.values()) {
        count += slot.storage ? 0 : 1;
      }
      return count;
    }
  }

  /**
   * The number of live regions in the segments for moving bodies.
   *
   * @return the count
   */
  public long regionCount() {
    synchronized (lock) {
      return regions;
    }
  }

  /**
   * The configured limit of {@link #segmentBytes()}.
   *
   * @return bytes
   */
  public long limitBytes() {
    return limitBytes;
  }

  /**
   * Stops allocation and closes every empty segment; a segment that still holds regions is closed
   * at its last region's release. The accounting allocator is closed when no segment is left: at
   * once, or at the last release of a region that a holder kept beyond the pool's close (a storage
   * unit's cells stored from shared puts); a region never released shows as an open child of the
   * parent allocator. Idempotent.
   */
  @Override
  public void close() {
    List<NativeBuffer> emptied = new ArrayList<>();
    boolean last;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      for (Slot slot : List.copyOf(slots.values())) {
        if (!slot.storage && slot.live.isEmpty()) {
          slots.remove(slot.base);
          totalBytes -= slot.segment.size();
          emptied.add(slot.accounted);
        }
      }
      last = slots.isEmpty();
    }
    emptied.forEach(NativeBuffer::close);
    if (last) {
      accounting.close();
    }
  }

  @Override
  public String toString() {
    synchronized (lock) {
      return "SharedMemoryPool[segments="
          + slots.size()
          + ", segmentBytes="
          + totalBytes
          + ", storageBytes="
          + storageBytes
          + ", usedBytes="
          + usedBytes
          + ", regions="
          + regions
          + ", limitBytes="
          + limitBytes
          + "]";
    }
  }
}
