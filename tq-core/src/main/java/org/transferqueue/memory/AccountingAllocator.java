package org.transferqueue.memory;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Accounting shared by the root and child allocators: a limit, the bytes currently allocated, the
 * peak, the outstanding buffers and the open children.
 *
 * <p>Thread-safe. An allocation reserves its block size in this allocator and every ancestor with a
 * compare-and-set loop each, and rolls all of them back if any limit would be exceeded, so a failed
 * allocation leaves no trace.
 */
abstract sealed class AccountingAllocator implements BufferAllocator
    permits RootAllocator, ChildAllocator {
  private final String name;
  private final long limitBytes;
  private final AccountingAllocator parent;
  private final AtomicLong allocatedBytes = new AtomicLong();
  private final AtomicLong peakBytes = new AtomicLong();
  private final AtomicLong outstanding = new AtomicLong();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Set<ChildAllocator> children = ConcurrentHashMap.newKeySet();
  private final Map<NativeBuffer, Throwable> allocationSites;

  AccountingAllocator(
      String name, long limitBytes, AccountingAllocator parent, boolean trackSites) {
    this.name = Objects.requireNonNull(name, "name");
    if (limitBytes < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "allocator '" + name + "': limitBytes=" + limitBytes + " < 0");
    }
    this.limitBytes = limitBytes;
    this.parent = parent;
    this.allocationSites = trackSites ? new ConcurrentHashMap<>() : null;
  }

  abstract RootAllocator root();

  @Override
  public final NativeBuffer allocate(long lengthBytes) {
    if (lengthBytes < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "allocator '" + name + "': lengthBytes=" + lengthBytes + " < 0");
    }
    ensureOpen();
    long blockSize = BlockPool.blockSize(lengthBytes);
    reserve(blockSize, lengthBytes);
    MemorySegment block;
    try {
      block = root().takeBlock(blockSize, lengthBytes);
    } catch (RuntimeException | Error e) {
      unreserve(blockSize);
      throw e;
    }
    outstanding.incrementAndGet();
    NativeBuffer buffer =
        new NativeBuffer(this, block, lengthBytes, root().checksUseAfterRelease());
    if (allocationSites != null) {
      allocationSites.put(buffer, new Throwable("allocation site of " + buffer));
    }
    return buffer;
  }

  @Override
  public final NativeBuffer wrapForeign(
      MemorySegment memory, long accountedBytes, Runnable onFree) {
    Objects.requireNonNull(memory, "memory");
    Objects.requireNonNull(onFree, "onFree");
    if (accountedBytes < 0 || !memory.isNative()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "allocator '"
              + name
              + "': wrapping "
              + memory
              + " with accountedBytes="
              + accountedBytes
              + " needs native memory and accountedBytes >= 0");
    }
    ensureOpen();
    reserve(accountedBytes, memory.byteSize());
    outstanding.incrementAndGet();
    NativeBuffer buffer =
        new NativeBuffer(this, memory, root().checksUseAfterRelease(), onFree, accountedBytes);
    if (allocationSites != null) {
      allocationSites.put(buffer, new Throwable("allocation site of " + buffer));
    }
    return buffer;
  }

  /** Called by {@link NativeBuffer} when the last reference of a foreign lease goes. */
  final void freeForeign(NativeBuffer buffer, long accountedBytes, Runnable onFree) {
    if (allocationSites != null) {
      allocationSites.remove(buffer);
    }
    outstanding.decrementAndGet();
    unreserve(accountedBytes);
    onFree.run();
  }

  /** Called by {@link NativeBuffer} when the last reference of a lease goes. */
  final void free(NativeBuffer buffer, MemorySegment block) {
    if (allocationSites != null) {
      allocationSites.remove(buffer);
    }
    outstanding.decrementAndGet();
    unreserve(block.byteSize());
    root().returnBlock(block);
  }

  private void reserve(long blockSize, long lengthBytes) {
    for (AccountingAllocator a = this; a != null; a = a.parent) {
      long now = a.allocatedBytes.addAndGet(blockSize);
      if (now > a.limitBytes) {
        a.allocatedBytes.addAndGet(-blockSize);
        for (AccountingAllocator b = this; b != a; b = b.parent) {
          b.allocatedBytes.addAndGet(-blockSize);
        }
        throw new TqException(
            ErrorCode.OUT_OF_MEMORY,
            "allocator '"
                + a.name
                + "': allocating "
                + lengthBytes
                + " bytes (block "
                + blockSize
                + ") would exceed limitBytes="
                + a.limitBytes
                + ", allocatedBytes="
                + (now - blockSize));
      }
      a.peakBytes.accumulateAndGet(now, Math::max);
    }
  }

  private void unreserve(long blockSize) {
    for (AccountingAllocator a = this; a != null; a = a.parent) {
      a.allocatedBytes.addAndGet(-blockSize);
    }
  }

  @Override
  public final BufferAllocator newChildAllocator(String childName, long childLimitBytes) {
    ensureOpen();
    ChildAllocator child =
        new ChildAllocator(childName, childLimitBytes, this, allocationSites != null);
    children.add(child);
    return child;
  }

  void removeChild(ChildAllocator child) {
    children.remove(child);
  }

  final void ensureOpen() {
    if (closed.get()) {
      throw new TqException(ErrorCode.CLOSED, "allocator '" + name + "' is closed");
    }
  }

  final boolean isClosed() {
    return closed.get();
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final long limitBytes() {
    return limitBytes;
  }

  @Override
  public final long allocatedBytes() {
    return allocatedBytes.get();
  }

  @Override
  public final long peakBytes() {
    return peakBytes.get();
  }

  @Override
  public final long outstandingBuffers() {
    return outstanding.get();
  }

  /**
   * Marks this allocator closed and reports a leak if buffers or children are outstanding.
   *
   * @return false if it was already closed
   */
  final boolean closeAccounting() {
    if (!closed.compareAndSet(false, true)) {
      return false;
    }
    if (parent != null && this instanceof ChildAllocator child) {
      parent.removeChild(child);
    }
    long count = outstanding.get();
    List<String> openChildren = new ArrayList<>();
    for (ChildAllocator child : children) {
      openChildren.add(child.name());
    }
    if (count > 0 || !openChildren.isEmpty()) {
      String message =
          "allocator '"
              + name
              + "' closed with "
              + count
              + " outstanding buffers ("
              + allocatedBytes.get()
              + " bytes including children) and open children "
              + openChildren;
      TqException leak = new TqException(ErrorCode.RESOURCE_LEAK, message);
      if (allocationSites != null) {
        allocationSites.values().stream().limit(8).forEach(leak::addSuppressed);
      }
      root().reportLeak(leak);
    }
    return true;
  }

  @Override
  public String toString() {
    return getClass().getSimpleName()
        + "[name="
        + name
        + ", allocatedBytes="
        + allocatedBytes.get()
        + ", limitBytes="
        + limitBytes
        + ", outstanding="
        + outstanding.get()
        + "]";
  }
}
