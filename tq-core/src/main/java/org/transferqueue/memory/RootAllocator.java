package org.transferqueue.memory;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The process's top allocator: owns the pool of reusable native blocks and bounds the native memory
 * held by it (leased and pooled blocks together) to {@link #limitBytes()}.
 *
 * <p>A request is served from the free list of its size class when possible (no system call, pages
 * already touched); otherwise a new block is created, after freeing pooled blocks of other classes
 * if the limit demands it. Pools keep what they grew: memory goes back to the operating system only
 * under the limit's pressure, by {@link #trim()}, or at close.
 *
 * <p>Thread-safe. Closing frees every pooled block; buffers still outstanding are a leak handled by
 * the {@link LeakPolicy}.
 */
public final class RootAllocator extends AccountingAllocator {
  private static final System.Logger LOG = System.getLogger(RootAllocator.class.getName());

  private final BlockPool pool = new BlockPool();
  private final ReentrantLock growLock = new ReentrantLock();
  private final LeakPolicy leakPolicy;
  private final AtomicLong leakCount = new AtomicLong();
  private final AtomicLong blocksCreated = new AtomicLong();
  private final boolean checkUseAfterRelease;

  private RootAllocator(Builder builder) {
    super(builder.name, builder.limitBytes, null, builder.trackAllocationSites);
    this.leakPolicy = builder.leakPolicy;
    this.checkUseAfterRelease = builder.checkUseAfterRelease;
  }

  /**
   * Starts building a root allocator.
   *
   * @return a builder with no limit, {@link LeakPolicy#LOG} and no allocation-site tracking
   */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  RootAllocator root() {
    return this;
  }

  /** Whether each lease gets its own arena, closed at its last release (a debug mode). */
  boolean checksUseAfterRelease() {
    return checkUseAfterRelease;
  }

  /**
   * Creates pooled blocks ahead of use so that the first allocations of this size are fast too.
   *
   * @param lengthBytes the size of the buffers that will be asked for
   * @param count how many blocks to have pooled
   * @throws TqException with {@code OUT_OF_MEMORY} if the blocks would not fit under the limit
   */
  public void preallocate(long lengthBytes, int count) {
    ensureOpen();
    long blockSize = BlockPool.blockSize(lengthBytes);
    growLock.lock();
    try {
      if (pool.reservedBytes() + blockSize * count > limitBytes()) {
        throw new TqException(
            ErrorCode.OUT_OF_MEMORY,
            "preallocating "
                + count
                + " x "
                + blockSize
                + " bytes exceeds limitBytes="
                + limitBytes()
                + ", reservedBytes="
                + pool.reservedBytes());
      }
      for (int i = 0; i < count; i++) {
        pool.offer(pool.create(blockSize));
        blocksCreated.incrementAndGet();
      }
    } finally {
      growLock.unlock();
    }
  }

  MemorySegment takeBlock(long blockSize, long lengthBytes) {
    MemorySegment block = pool.poll(blockSize);
    if (block != null) {
      return block;
    }
    growLock.lock();
    try {
      long over = pool.reservedBytes() + blockSize - limitBytes();
      if (over > 0 && pool.trim(over) < over) {
        throw new TqException(
            ErrorCode.OUT_OF_MEMORY,
            "allocator '"
                + name()
                + "': no room for a block of "
                + blockSize
                + " bytes (asked "
                + lengthBytes
                + "), limitBytes="
                + limitBytes()
                + ", reservedBytes="
                + pool.reservedBytes());
      }
      blocksCreated.incrementAndGet();
      return pool.create(blockSize);
    } finally {
      growLock.unlock();
    }
  }

  void returnBlock(MemorySegment block) {
    pool.offer(block);
    if (isClosed()) {
      pool.trim(Long.MAX_VALUE);
    }
  }

  void reportLeak(TqException leak) {
    leakCount.incrementAndGet();
    if (leakPolicy == LeakPolicy.THROW) {
      throw leak;
    }
    LOG.log(System.Logger.Level.ERROR, leak.getMessage());
  }

  /**
   * Frees every pooled (not leased) block back to the operating system.
   *
   * @return the bytes freed
   */
  public long trim() {
    growLock.lock();
    try {
      return pool.trim(Long.MAX_VALUE);
    } finally {
      growLock.unlock();
    }
  }

  /**
   * Native bytes held: leased plus pooled blocks.
   *
   * @return bytes reserved from the operating system
   */
  public long reservedBytes() {
    return pool.reservedBytes();
  }

  /**
   * Native bytes in free lists, ready for reuse.
   *
   * @return pooled bytes
   */
  public long pooledBytes() {
    return pool.pooledBytes();
  }

  /**
   * How many blocks were ever created; a steady value under load means buffers are being reused.
   *
   * @return the number of blocks created
   */
  public long blocksCreated() {
    return blocksCreated.get();
  }

  /**
   * Leaks reported by this allocator and its children at close.
   *
   * @return the leak count
   */
  public long leakCount() {
    return leakCount.get();
  }

  @Override
  public void close() {
    try {
      closeAccounting();
    } finally {
      trim();
    }
  }

  /** Builds a {@link RootAllocator}; {@link #build()} validates every setting. */
  public static final class Builder {
    private String name = "root";
    private long limitBytes = Long.MAX_VALUE;
    private LeakPolicy leakPolicy = LeakPolicy.LOG;
    private boolean trackAllocationSites;
    private boolean checkUseAfterRelease;

    private Builder() {}

    /**
     * Sets the name used in statistics and errors.
     *
     * @param name the allocator's name
     * @return this builder
     */
    public Builder name(String name) {
      this.name = name;
      return this;
    }

    /**
     * Sets the most native memory the pool may hold.
     *
     * @param limitBytes the limit, at least 0
     * @return this builder
     */
    public Builder limitBytes(long limitBytes) {
      this.limitBytes = limitBytes;
      return this;
    }

    /**
     * Sets what close does about outstanding buffers.
     *
     * @param leakPolicy the policy
     * @return this builder
     */
    public Builder leakPolicy(LeakPolicy leakPolicy) {
      this.leakPolicy = leakPolicy;
      return this;
    }

    /**
     * Records a stack trace per allocation so that leak reports say where leaked buffers came from.
     * Costly; for tests.
     *
     * @param track true to record
     * @return this builder
     */
    public Builder trackAllocationSites(boolean track) {
      this.trackAllocationSites = track;
      return this;
    }

    /**
     * Makes any access to a buffer's memory after its last release throw {@link
     * IllegalStateException}, instead of silently reaching the next lease of the pooled block: each
     * lease is handed out through its own shared arena, closed when its reference count reaches
     * zero. Costly (an arena per allocation, and closing a shared arena synchronises with every
     * thread); a debug mode for tests, on in {@code LeakCheckExtension}.
     *
     * @param check true to check
     * @return this builder
     */
    public Builder checkUseAfterRelease(boolean check) {
      this.checkUseAfterRelease = check;
      return this;
    }

    /**
     * Validates the settings and creates the allocator.
     *
     * @return a new root allocator the caller owns
     * @throws TqException with {@code INVALID_ARGUMENT} naming a bad setting
     */
    public RootAllocator build() {
      if (name == null || name.isBlank()) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "allocator name is blank: '" + name + "'");
      }
      if (leakPolicy == null) {
        throw new TqException(ErrorCode.INVALID_ARGUMENT, "leakPolicy is null");
      }
      return new RootAllocator(this);
    }
  }
}
