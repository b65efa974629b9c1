package org.transferqueue.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The process's pool of native blocks in size classes: powers of two from {@link #MIN_BLOCK_BYTES}
 * up to {@link #FINE_CLASSES_FROM_BYTES}, and above it four classes per power of two (a quarter of
 * the power apart), so a large block wastes at most a fifth of itself instead of up to half.
 *
 * <p>A block is created once (its pages touched at creation, so a later copy into it runs at full
 * speed) and then circulates between the free list of its class and the buffers that lease it.
 * Blocks are freed only when the pool needs room under its limit ({@link #trim}) or when it closes.
 * Each block has its own shared arena so that it can be freed alone.
 *
 * <p>Thread-safe: one lock per size class guards its free list; byte counters are atomic.
 */
final class BlockPool {
  static final int MIN_BLOCK_SHIFT = 6;
  static final long MIN_BLOCK_BYTES = 1L << MIN_BLOCK_SHIFT;
  static final long FINE_CLASSES_FROM_BYTES = 1L << 20;

  /** Size classes by block size; created on first use, kept for the pool's lifetime. */
  private final ConcurrentSkipListMap<Long, SizeClass> classes = new ConcurrentSkipListMap<>();

  private final AtomicLong reservedBytes = new AtomicLong();
  private final AtomicLong pooledBytes = new AtomicLong();

  /** Block size used for a request of {@code lengthBytes}. */
  static long blockSize(long lengthBytes) {
    if (lengthBytes <= MIN_BLOCK_BYTES) {
      return MIN_BLOCK_BYTES;
    }
    if (lengthBytes <= FINE_CLASSES_FROM_BYTES) {
      return Long.highestOneBit(lengthBytes - 1) << 1;
    }
    long step = Long.highestOneBit(lengthBytes - 1) >> 2;
    return Math.ceilDiv(lengthBytes, step) * step;
  }

  private SizeClass sizeClass(long blockSize) {
    return classes.computeIfAbsent(blockSize, SizeClass::new);
  }

  /** Takes a pooled block of {@code blockSize}, or null when the class's free list is empty. */
  MemorySegment poll(long blockSize) {
    MemorySegment block = sizeClass(blockSize).poll();
    if (block != null) {
      pooledBytes.addAndGet(-blockSize);
    }
    return block;
  }

  /** Creates a new block; its pages are touched before it is returned. */
  MemorySegment create(long blockSize) {
    Arena arena = Arena.ofShared();
    MemorySegment block;
    try {
      block = arena.allocate(blockSize, BufferAllocator.ALIGNMENT_BYTES);
    } catch (OutOfMemoryError e) {
      // The operating system refused the memory (a size no limit caught, e.g. an unlimited root
      // asked for a length taken from a hostile peer): a typed error the caller can handle, not an
      // Error that escapes every catch of TqException.
      arena.close();
      throw new TqException(
          ErrorCode.OUT_OF_MEMORY,
          "the operating system refused a block of " + blockSize + " bytes: " + e.getMessage(),
          e);
    }
    block.fill((byte) 0);
    sizeClass(blockSize).track(block, arena);
    reservedBytes.addAndGet(blockSize);
    return block;
  }

  /** Returns a block to its free list. */
  void offer(MemorySegment block) {
    sizeClass(block.byteSize()).offer(block);
    pooledBytes.addAndGet(block.byteSize());
  }

  /**
   * Frees pooled blocks, largest classes first, until at least {@code bytes} were freed or nothing
   * is pooled.
   *
   * @return bytes freed
   */
  long trim(long bytes) {
    long freed = 0;
    for (SizeClass sizeClass : classes.descendingMap().values()) {
      if (freed >= bytes) {
        break;
      }
      freed += sizeClass.trim(bytes - freed);
    }
    reservedBytes.addAndGet(-freed);
    pooledBytes.addAndGet(-freed);
    return freed;
  }

  /** Frees every pooled block; blocks still leased are left alone. */
  void close() {
    trim(Long.MAX_VALUE);
  }

  long reservedBytes() {
    return reservedBytes.get();
  }

  long pooledBytes() {
    return pooledBytes.get();
  }

  /** One size class: its free list and the arenas of all its blocks. */
  private static final class SizeClass {
    private final long blockSize;
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<MemorySegment> free = new ArrayDeque<>();
    private final java.util.HashMap<Long, Arena> arenas = new java.util.HashMap<>();

    SizeClass(long blockSize) {
      this.blockSize = blockSize;
    }

    MemorySegment poll() {
      lock.lock();
      try {
        return free.pollLast();
      } finally {
        lock.unlock();
      }
    }

    void offer(MemorySegment block) {
      lock.lock();
      try {
        free.addLast(block);
      } finally {
        lock.unlock();
      }
    }

    void track(MemorySegment block, Arena arena) {
      lock.lock();
      try {
        arenas.put(block.address(), arena);
      } finally {
        lock.unlock();
      }
    }

    long trim(long bytes) {
      long freed = 0;
      lock.lock();
      try {
        while (freed < bytes && !free.isEmpty()) {
          MemorySegment block = free.pollFirst();
          arenas.remove(block.address()).close();
          freed += blockSize;
        }
      } finally {
        lock.unlock();
      }
      return freed;
    }
  }
}
