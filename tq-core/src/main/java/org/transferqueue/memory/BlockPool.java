package org.transferqueue.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The process's pool of native blocks, in power-of-two size classes from {@link #MIN_BLOCK_BYTES}.
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
  private static final int CLASS_COUNT = 63 - MIN_BLOCK_SHIFT;

  private final SizeClass[] classes = new SizeClass[CLASS_COUNT];
  private final AtomicLong reservedBytes = new AtomicLong();
  private final AtomicLong pooledBytes = new AtomicLong();

  BlockPool() {
    for (int i = 0; i < CLASS_COUNT; i++) {
      classes[i] = new SizeClass(1L << (i + MIN_BLOCK_SHIFT));
    }
  }

  /** Block size used for a request of {@code lengthBytes}. */
  static long blockSize(long lengthBytes) {
    if (lengthBytes <= MIN_BLOCK_BYTES) {
      return MIN_BLOCK_BYTES;
    }
    return Long.highestOneBit(lengthBytes - 1) << 1;
  }

  private SizeClass sizeClass(long blockSize) {
    return classes[Long.numberOfTrailingZeros(blockSize) - MIN_BLOCK_SHIFT];
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
      arena.close();
      throw e;
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
    for (int i = CLASS_COUNT - 1; i >= 0 && freed < bytes; i--) {
      freed += classes[i].trim(bytes - freed);
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
