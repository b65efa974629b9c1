package org.transferqueue.objectstore.engine;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.transferqueue.Clock;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreStatus;

/**
 * The metadata side of the embedded engine: keys, two-phase writes, read pins and leases, pins,
 * placement of objects in slabs, eviction and the reclamation of abandoned writes. It hands out
 * tickets naming where bytes go or come from and never touches the bytes itself.
 *
 * <h2>Design note</h2>
 *
 * <p><b>Threads and locks.</b> Any caller thread (application threads and the store's async
 * executor) calls in. One {@link ReentrantLock} guards every field below and every {@link Entry},
 * {@link Allocation}, {@link SlabAllocator}, {@link PendingWriteList} and {@link EvictionPolicy}
 * (which decides which objects eviction takes and when); critical sections are hash-map and
 * tree-map work, never a copy of object bytes. Bytes move outside the lock, into an allocation a
 * write ticket holds or out of one a read ticket holds; the tickets' pins keep that memory from
 * being reused until the ticket is returned, so no lock is needed for the copy.
 *
 * <p><b>Object states.</b> An {@link Entry} has a committed value ({@code committed}, readable
 * unless an in-place write runs over it) and at most one pending write ({@code pending}):
 *
 * <pre>
 *            put/upsert start (absent)         end
 *   absent ----------------------------> NEW ----------> READABLE
 *                                          |  revoke        |  upsert start, same size:
 *                                          v                |    no reader pinned -> IN_PLACE (not readable)
 *                                        absent             |    readers pinned   -> COPY_ON_WRITE (old readable)
 *                                                           |  upsert start, other size: old retired -> NEW
 *                                                           v
 *               end: IN_PLACE -> READABLE (same buffer); COPY_ON_WRITE -> READABLE (swap, old retired)
 *               revoke: IN_PLACE -> absent (value lost, as Mooncake); COPY_ON_WRITE -> READABLE (old)
 * </pre>
 *
 * <p><b>Invariants</b> (hold whenever the lock is free):
 *
 * <ol>
 *   <li>An allocation is returned to its slab exactly once, and only when it is retired (no entry
 *       refers to it), no reader pins it ({@code readers == 0}) and no writer writes into it
 *       ({@code !writing}) — or its writer is an abandoned one whose release deadline passed. Hence
 *       a reader never sees bytes of another object, whatever removes or evicts meanwhile.
 *   <li>A readable entry's bytes are never written: in-place writes start only when no reader pins
 *       the committed allocation, and they make the entry unreadable until their end; otherwise an
 *       upsert writes a fresh allocation and swaps it in at end. So a read returns one complete
 *       version.
 *   <li>Every pending write carries a unique token; end and revoke apply only with the current
 *       token, so a preempted writer can never publish ({@code -601}).
 *   <li>The writing list ({@link PendingWriteList}) holds exactly the entries with a pending write;
 *       {@code discarded} holds exactly the retired allocations that a writer still writes into;
 *       {@link EvictionPolicy}'s {@code unpinnedObjects} counts exactly the entries that are not
 *       hard-pinned.
 * </ol>
 *
 * <p><b>Linearisation points</b>: a write becomes visible, and a remove or eviction takes effect,
 * at the moment the lock is released after it.
 */
final class StoreMaster {
  private static final int OK = StoreStatus.OK.code();
  private static final long SWEEP_INTERVAL_NS = 1_000_000_000L;

  /** A range of a slab holding (or about to hold) one version of one object. */
  static final class Allocation {
    final int slab;
    final long offset;
    final long size;
    final MemorySegment memory;
    int readers;
    boolean writing;
    boolean retired;
    boolean freed;
    long discardDeadlineNs;

    Allocation(int slab, long offset, long size, MemorySegment memory) {
      this.slab = slab;
      this.offset = offset;
      this.size = size;
      this.memory = memory;
    }
  }

  /** The metadata of one key. */
  static final class Entry {
    final String key;
    Allocation committed;
    Allocation pending;
    long pendingToken;
    long pendingStartNs;
    boolean pendingInPlace;
    ReplicateConfig pendingConfig;
    boolean hardPinned;
    boolean softPinned;
    long softPinDeadlineNs;
    // Whether a journal holds a visible value of this entry (so its loss must be journaled too).
    boolean journaled;
    long leaseDeadlineNs;
    // Links of the list of entries with a pending write (PendingWriteList), in the order their
    // writes began; inWriting tells whether the entry is on it.
    Entry writingPrev;
    Entry writingNext;
    boolean inWriting;

    Entry(String key, long nowNs) {
      this.key = key;
      this.leaseDeadlineNs = nowNs;
    }

    boolean readable() {
      return committed != null && !pendingInPlace;
    }
  }

  /**
   * Permission to write {@code allocation.memory}; {@code code != 0} means refused.
   *
   * @param code 0 or a negative {@link StoreStatus}
   * @param key the key written
   * @param token the write's token
   * @param allocation where the bytes go
   * @param config the write's replication settings (pins)
   */
  record WriteTicket(
      int code, String key, long token, Allocation allocation, ReplicateConfig config) {
    static WriteTicket refused(StoreStatus code) {
      return new WriteTicket(code.code(), null, 0, null, null);
    }
  }

  /**
   * Where the master reports the changes a journal must hold, under its lock: a write that became
   * visible, a key that lost its value. See {@link NodeJournal}.
   */
  interface ChangeLog {
    /**
     * A write is about to become visible; the log numbers its record now (and keeps the allocation
     * pinned until the record is written).
     *
     * @param ticket the write
     * @param prepared the record prepared outside the lock by the caller, or null
     * @return false when the journal refused it: the write is then revoked
     */
    boolean visible(WriteTicket ticket, Object prepared);

    /**
     * A key that had a visible value lost it (removed, evicted, or an upsert replaced it).
     *
     * @param key the key
     */
    void removed(String key);
  }

  /**
   * Permission to read {@code allocation.memory}; {@code code < 0} means refused.
   *
   * @param code 0 or a negative {@link StoreStatus}
   * @param allocation where the bytes are, pinned until released
   * @param size the object's size
   */
  record ReadTicket(long code, Allocation allocation, long size) {
    static ReadTicket refused(StoreStatus code) {
      return new ReadTicket(code.code(), null, 0);
    }
  }

  private final ReentrantLock lock = new ReentrantLock();
  private final HashMap<String, Entry> entries = new HashMap<>();
  // The entries with a pending write, oldest first (intrusive, through Entry).
  private final PendingWriteList writing = new PendingWriteList();
  private final LinkedHashSet<Allocation> discarded = new LinkedHashSet<>();
  private final SlabAllocator[] slabs;
  private final MemorySegment[] slabMemory;
  private final Clock clock;
  private final long leaseTtlNs;
  private final long softPinTtlNs;
  private final long discardTimeoutNs;
  private final long releaseTimeoutNs;
  private final long capacityBytes;
  private final long maxObjectBytes;
  private long nextToken = 1;
  private int nextSlab;
  private long nextSweepNs;
  private final EvictionPolicy eviction;
  // Guarded by lock: the journal's view of the master, or null.
  private ChangeLog log;

  StoreMaster(List<MemorySegment> slabSegments, MasterConfig config) {
    this.slabs = new SlabAllocator[slabSegments.size()];
    this.slabMemory = slabSegments.toArray(new MemorySegment[0]);
    long capacity = 0;
    long largest = 0;
    for (int i = 0; i < slabs.length; i++) {
      slabs[i] = new SlabAllocator(slabMemory[i].byteSize());
      capacity += slabs[i].capacity();
      largest = Math.max(largest, slabs[i].capacity());
    }
    this.capacityBytes = capacity;
    this.maxObjectBytes = largest;
    this.clock = config.clock();
    this.leaseTtlNs = config.leaseTtl().toNanos();
    this.softPinTtlNs = config.softPinTtl().toNanos();
    this.discardTimeoutNs = config.putStartDiscardTimeout().toNanos();
    this.releaseTimeoutNs = config.putStartReleaseTimeout().toNanos();
    this.eviction =
        new EvictionPolicy(
            new EvictionPolicy.Target() {
              @Override
              public Collection<Entry> entries() {
                return entries.values();
              }

              @Override
              public void erase(Entry victim) {
                eraseLocked(victim);
              }
            },
            this::usedBytesLocked,
            config,
            capacity);
    this.nextSweepNs = clock.nanoTime() + SWEEP_INTERVAL_NS;
  }

  /** Reports changes to {@code changeLog} from now on (null: to nobody). */
  void changeLog(ChangeLog changeLog) {
    lock.lock();
    try {
      this.log = changeLog;
    } finally {
      lock.unlock();
    }
  }

  /** Pins an allocation for a reader that is not a client (a journal writing its bytes). */
  void pin(Allocation allocation) {
    allocation.readers++;
  }

  /** Drops a pin taken by {@link #pin}; under its own lock acquisition. */
  void unpin(Allocation allocation) {
    lock.lock();
    try {
      allocation.readers--;
      maybeFreeLocked(allocation);
    } finally {
      lock.unlock();
    }
  }

  long leaseTtlNs() {
    return leaseTtlNs;
  }

  Clock clock() {
    return clock;
  }

  // ---------------------------------------------------------------- writes

  /**
   * Starts writes of several keys under one lock acquisition. Entries whose {@code codes[i]} is
   * already non-zero are skipped; refused starts set {@code codes[i]}.
   */
  WriteTicket[] startWrites(
      List<String> keys, long[] sizes, ReplicateConfig config, boolean upsert, int[] codes) {
    WriteTicket[] tickets = new WriteTicket[keys.size()];
    lock.lock();
    try {
      long now = clock.nanoTime();
      if (now - nextSweepNs >= 0) {
        sweepLocked(now);
        nextSweepNs = now + SWEEP_INTERVAL_NS;
      }
      for (int i = 0; i < tickets.length; i++) {
        if (codes[i] != OK) {
          continue;
        }
        WriteTicket ticket =
            upsert
                ? startUpsertLocked(keys.get(i), sizes[i], config, now)
                : startPutLocked(keys.get(i), sizes[i], config, now);
        if (ticket.code() == OK) {
          tickets[i] = ticket;
        } else {
          codes[i] = ticket.code();
        }
      }
    } finally {
      lock.unlock();
    }
    return tickets;
  }

  WriteTicket startWrite(String key, long size, ReplicateConfig config, boolean upsert) {
    int[] codes = new int[1];
    WriteTicket ticket = startWrites(List.of(key), new long[] {size}, config, upsert, codes)[0];
    return ticket != null ? ticket : new WriteTicket(codes[0], null, 0, null, null);
  }

  /** Ends (commits) or revokes the writes of non-null tickets; the outcome goes to codes[i]. */
  void finishWrites(WriteTicket[] tickets, boolean[] commit, int[] codes) {
    finishWrites(tickets, commit, codes, null);
  }

  /**
   * As {@link #finishWrites(WriteTicket[], boolean[], int[])}, with the journal records of the
   * committed writes prepared by the caller outside the lock ({@code prepared[i]}, or null).
   */
  void finishWrites(WriteTicket[] tickets, boolean[] commit, int[] codes, Object[] prepared) {
    lock.lock();
    try {
      long now = clock.nanoTime();
      for (int i = 0; i < tickets.length; i++) {
        if (tickets[i] != null) {
          codes[i] =
              commit[i]
                  ? endLocked(tickets[i], now, prepared == null ? null : prepared[i])
                  : revokeLocked(tickets[i]);
        }
      }
      eviction.maybeEvict(now);
    } finally {
      lock.unlock();
    }
  }

  int endWrite(WriteTicket ticket) {
    int[] codes = new int[1];
    finishWrites(new WriteTicket[] {ticket}, new boolean[] {true}, codes);
    return codes[0];
  }

  int revokeWrite(WriteTicket ticket) {
    int[] codes = new int[1];
    finishWrites(new WriteTicket[] {ticket}, new boolean[] {false}, codes);
    return codes[0];
  }

  private WriteTicket startPutLocked(String key, long size, ReplicateConfig config, long now) {
    Entry existing = entries.get(key);
    if (existing != null) {
      if (existing.committed != null || now - existing.pendingStartNs <= discardTimeoutNs) {
        return WriteTicket.refused(StoreStatus.OBJECT_ALREADY_EXISTS);
      }
      // An abandoned write: preempt it; its memory is reclaimed at its start + release timeout.
      preemptLocked(existing, existing.pendingStartNs + releaseTimeoutNs);
    }
    return createLocked(key, size, config, false, now);
  }

  private WriteTicket startUpsertLocked(String key, long size, ReplicateConfig config, long now) {
    Entry entry = entries.get(key);
    if (entry != null && entry.pending != null) {
      // A later upsert preempts a write in progress at once (Mooncake); the preempted writer's
      // buffer is freed when it finishes, or at the release deadline if it never does.
      preemptLocked(entry, now + releaseTimeoutNs);
      entry = entries.get(key);
    }
    if (entry == null) {
      return createLocked(key, size, config, false, now);
    }
    Allocation old = entry.committed;
    if (config.withHardPin() && !entry.hardPinned) {
      entry.hardPinned = true;
      eviction.unpinnedRemoved();
    }
    if (old.size == size) {
      if (old.readers == 0) {
        old.writing = true;
        return beginLocked(entry, old, true, config, now);
      }
      Allocation fresh = allocateLocked(size, now, entry);
      if (fresh == null) {
        return WriteTicket.refused(StoreStatus.NO_AVAILABLE_HANDLE);
      }
      return beginLocked(entry, fresh, false, config, now);
    }
    // New size: the old value goes now (readers in flight keep its memory until they finish).
    removeEntryLocked(entry);
    retireLocked(old);
    Entry carried = new Entry(key, now);
    carried.softPinned = entry.softPinned && now - entry.softPinDeadlineNs < 0;
    carried.softPinDeadlineNs = entry.softPinDeadlineNs;
    return createCarryingLocked(carried, size, config, entry.hardPinned, now);
  }

  private WriteTicket createLocked(
      String key, long size, ReplicateConfig config, boolean hardPinned, long now) {
    return createCarryingLocked(new Entry(key, now), size, config, hardPinned, now);
  }

  private WriteTicket createCarryingLocked(
      Entry entry, long size, ReplicateConfig config, boolean hardPinned, long now) {
    Allocation allocation = allocateLocked(size, now, null);
    if (allocation == null) {
      return WriteTicket.refused(StoreStatus.NO_AVAILABLE_HANDLE);
    }
    entry.hardPinned = hardPinned || config.withHardPin();
    entries.put(entry.key, entry);
    if (!entry.hardPinned) {
      eviction.unpinnedAdded();
    }
    return beginLocked(entry, allocation, false, config, now);
  }

  private WriteTicket beginLocked(
      Entry entry, Allocation allocation, boolean inPlace, ReplicateConfig config, long now) {
    allocation.writing = true;
    entry.pending = allocation;
    entry.pendingToken = nextToken++;
    entry.pendingStartNs = now;
    entry.pendingInPlace = inPlace;
    entry.pendingConfig = config;
    writing.link(entry);
    return new WriteTicket(OK, entry.key, entry.pendingToken, allocation, config);
  }

  private void preemptLocked(Entry entry, long discardDeadlineNs) {
    Allocation pending = entry.pending;
    clearPendingLocked(entry);
    if (entry.pendingInPlace) {
      entry.committed = null;
      entry.pendingInPlace = false;
    }
    pending.discardDeadlineNs = discardDeadlineNs;
    retireLocked(pending);
    if (entry.committed == null) {
      removeEntryLocked(entry);
    }
  }

  private void clearPendingLocked(Entry entry) {
    entry.pending = null;
    entry.pendingConfig = null;
    writing.unlink(entry);
  }

  private int endLocked(WriteTicket ticket, long now, Object prepared) {
    Allocation allocation = ticket.allocation();
    Entry entry = entries.get(ticket.key());
    int code;
    if (entry == null) {
      code = StoreStatus.OBJECT_NOT_FOUND.code();
    } else if (entry.pending != allocation || entry.pendingToken != ticket.token()) {
      code = StoreStatus.ILLEGAL_CLIENT.code();
    } else if (log != null && !log.visible(ticket, prepared)) {
      revokeLocked(ticket);
      return StoreStatus.WRITE_FAIL.code();
    } else {
      entry.journaled = log != null;
      ReplicateConfig config = entry.pendingConfig;
      boolean inPlace = entry.pendingInPlace;
      clearPendingLocked(entry);
      entry.pendingInPlace = false;
      if (!inPlace) {
        if (entry.committed != null) {
          retireLocked(entry.committed);
        }
        entry.committed = allocation;
      }
      if (entry.leaseDeadlineNs - now < 0) {
        entry.leaseDeadlineNs = now;
      }
      if (config.withSoftPin()) {
        entry.softPinned = true;
        entry.softPinDeadlineNs = now + softPinTtlNs;
      }
      code = OK;
    }
    allocation.writing = false;
    maybeFreeLocked(allocation);
    return code;
  }

  private int revokeLocked(WriteTicket ticket) {
    Allocation allocation = ticket.allocation();
    Entry entry = entries.get(ticket.key());
    int code;
    if (entry == null) {
      code = StoreStatus.OBJECT_NOT_FOUND.code();
    } else if (entry.pending != allocation || entry.pendingToken != ticket.token()) {
      code = StoreStatus.ILLEGAL_CLIENT.code();
    } else {
      clearPendingLocked(entry);
      if (entry.pendingInPlace) {
        // No rollback of an in-place write (Mooncake): the old bytes are partly overwritten.
        entry.committed = null;
        entry.pendingInPlace = false;
      }
      retireLocked(allocation);
      if (entry.committed == null) {
        removeEntryLocked(entry);
      }
      code = OK;
    }
    allocation.writing = false;
    maybeFreeLocked(allocation);
    return code;
  }

  // ---------------------------------------------------------------- reads and queries

  /**
   * Pins the committed allocations of several keys for reading and grants leases. A capacity of -1
   * skips the size check; {@code codes[i] != 0} on entry skips key i.
   */
  ReadTicket[] acquireReads(List<String> keys, long[] capacities, long[] codes) {
    ReadTicket[] tickets = new ReadTicket[keys.size()];
    lock.lock();
    try {
      long now = clock.nanoTime();
      for (int i = 0; i < tickets.length; i++) {
        if (codes[i] != OK) {
          continue;
        }
        ReadTicket ticket = acquireReadLocked(keys.get(i), capacities[i], now);
        if (ticket.code() == OK) {
          tickets[i] = ticket;
        } else {
          codes[i] = ticket.code();
        }
      }
    } finally {
      lock.unlock();
    }
    return tickets;
  }

  ReadTicket acquireRead(String key, long capacity) {
    long[] codes = new long[1];
    ReadTicket ticket = acquireReads(List.of(key), new long[] {capacity}, codes)[0];
    return ticket != null ? ticket : new ReadTicket(codes[0], null, 0);
  }

  /** Drops the pins of non-null tickets. */
  void releaseReads(ReadTicket... tickets) {
    lock.lock();
    try {
      for (ReadTicket ticket : tickets) {
        if (ticket != null) {
          Allocation allocation = ticket.allocation();
          allocation.readers--;
          maybeFreeLocked(allocation);
        }
      }
    } finally {
      lock.unlock();
    }
  }

  private ReadTicket acquireReadLocked(String key, long capacity, long now) {
    Entry entry = entries.get(key);
    if (entry == null) {
      return ReadTicket.refused(StoreStatus.OBJECT_NOT_FOUND);
    }
    if (!entry.readable()) {
      return ReadTicket.refused(StoreStatus.REPLICA_IS_NOT_READY);
    }
    grantLeaseLocked(entry, now);
    Allocation allocation = entry.committed;
    if (capacity >= 0 && capacity < allocation.size) {
      return ReadTicket.refused(StoreStatus.INVALID_PARAMS);
    }
    allocation.readers++;
    return new ReadTicket(OK, allocation, allocation.size);
  }

  private void grantLeaseLocked(Entry entry, long now) {
    long deadline = now + leaseTtlNs;
    if (deadline - entry.leaseDeadlineNs > 0) {
      entry.leaseDeadlineNs = deadline;
    }
  }

  /** A readable object pinned for a checkpoint: its key, read ticket and pins. */
  record PinnedObject(String key, ReadTicket ticket, boolean hardPinned, boolean softPinned) {}

  /**
   * Pins every readable object for reading, as of one instant, sorted by key; the caller returns
   * the tickets with {@link #releaseReads}. Grants no leases (a checkpoint is not a client read).
   */
  List<PinnedObject> pinAllReadable() {
    return pinAllReadable(() -> {});
  }

  /**
   * As {@link #pinAllReadable()}, running {@code underLock} at the same instant (so that a
   * journal's last LSN read there matches the pinned objects exactly).
   */
  List<PinnedObject> pinAllReadable(Runnable underLock) {
    List<PinnedObject> pinned = new ArrayList<>();
    lock.lock();
    try {
      underLock.run();
      for (Entry entry : entries.values()) {
        if (entry.readable()) {
          Allocation allocation = entry.committed;
          allocation.readers++;
          pinned.add(
              new PinnedObject(
                  entry.key,
                  new ReadTicket(OK, allocation, allocation.size),
                  entry.hardPinned,
                  entry.softPinned));
        }
      }
    } finally {
      lock.unlock();
    }
    pinned.sort(Comparator.comparing(PinnedObject::key));
    return pinned;
  }

  /** Per key: 1 readable (lease granted), 0 absent or not yet readable. */
  int[] exist(List<String> keys) {
    int[] result = new int[keys.size()];
    lock.lock();
    try {
      long now = clock.nanoTime();
      for (int i = 0; i < result.length; i++) {
        Entry entry = entries.get(keys.get(i));
        if (entry != null && entry.readable()) {
          grantLeaseLocked(entry, now);
          result[i] = 1;
        }
      }
    } finally {
      lock.unlock();
    }
    return result;
  }

  /** The size of a readable object (lease granted), or a negative code. */
  long size(String key) {
    lock.lock();
    try {
      Entry entry = entries.get(key);
      if (entry == null) {
        return StoreStatus.OBJECT_NOT_FOUND.code();
      }
      if (!entry.readable()) {
        return StoreStatus.REPLICA_IS_NOT_READY.code();
      }
      grantLeaseLocked(entry, clock.nanoTime());
      return entry.committed.size;
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- removal

  /** Removes keys; {@code codes[i] != 0} on entry skips key i. */
  void remove(List<String> keys, boolean force, int[] codes) {
    lock.lock();
    try {
      long now = clock.nanoTime();
      for (int i = 0; i < codes.length; i++) {
        if (codes[i] == OK) {
          codes[i] = removeLocked(keys.get(i), force, now);
        }
      }
    } finally {
      lock.unlock();
    }
  }

  private int removeLocked(String key, boolean force, long now) {
    Entry entry = entries.get(key);
    if (entry == null) {
      return StoreStatus.OBJECT_NOT_FOUND.code();
    }
    if (!force && EvictionPolicy.leased(entry, now)) {
      return StoreStatus.OBJECT_HAS_LEASE.code();
    }
    if (entry.pending != null) {
      return StoreStatus.REPLICA_IS_NOT_READY.code();
    }
    eraseLocked(entry);
    return OK;
  }

  /** Removes every complete object whose key matches, skipping leased ones unless forced. */
  long removeMatching(Predicate<String> matches, boolean force) {
    lock.lock();
    try {
      long now = clock.nanoTime();
      long removed = 0;
      for (Entry entry : new ArrayList<>(entries.values())) {
        if (entry.pending == null
            && (force || !EvictionPolicy.leased(entry, now))
            && matches.test(entry.key)) {
          eraseLocked(entry);
          removed++;
        }
      }
      return removed;
    } finally {
      lock.unlock();
    }
  }

  private void eraseLocked(Entry entry) {
    removeEntryLocked(entry);
    retireLocked(entry.committed);
  }

  private void removeEntryLocked(Entry entry) {
    entries.remove(entry.key);
    if (log != null && entry.journaled) {
      log.removed(entry.key);
    }
    if (!entry.hardPinned) {
      eviction.unpinnedRemoved();
    }
  }

  // ---------------------------------------------------------------- memory

  private void retireLocked(Allocation allocation) {
    allocation.retired = true;
    if (allocation.writing) {
      discarded.add(allocation);
    }
    maybeFreeLocked(allocation);
  }

  private void maybeFreeLocked(Allocation allocation) {
    if (!allocation.freed && allocation.retired && allocation.readers == 0 && !allocation.writing) {
      slabs[allocation.slab].free(allocation.offset, allocation.size);
      allocation.freed = true;
      discarded.remove(allocation);
    }
  }

  private Allocation tryAllocateLocked(long size) {
    for (int n = 0; n < slabs.length; n++) {
      int i = (nextSlab + n) % slabs.length;
      long offset = slabs[i].allocate(size);
      if (offset >= 0) {
        nextSlab = (i + 1) % slabs.length;
        return new Allocation(i, offset, size, slabMemory[i].asSlice(offset, size));
      }
    }
    return null;
  }

  /**
   * Allocates {@code size} bytes, reclaiming abandoned writes and then evicting (oldest lease
   * first, soft-pinned last) until it fits; null when nothing more can be freed.
   */
  private Allocation allocateLocked(long size, long now, Entry exempt) {
    if (size > maxObjectBytes) {
      return null;
    }
    Allocation allocation = tryAllocateLocked(size);
    if (allocation != null) {
      return allocation;
    }
    sweepLocked(now);
    allocation = tryAllocateLocked(size);
    if (allocation != null) {
      return allocation;
    }
    return eviction.evictUntil(now, exempt, () -> tryAllocateLocked(size));
  }

  /**
   * Reclaims abandoned writes: pending writes started a release timeout ago are erased, and
   * discarded allocations past their deadline are freed even though their writer never finished.
   */
  private void sweepLocked(long now) {
    for (Entry entry : writing.snapshot()) {
      if (now - entry.pendingStartNs >= releaseTimeoutNs) {
        preemptLocked(entry, entry.pendingStartNs + releaseTimeoutNs);
      }
    }
    for (Allocation allocation : new ArrayList<>(discarded)) {
      if (now - allocation.discardDeadlineNs >= 0) {
        allocation.writing = false;
        maybeFreeLocked(allocation);
      }
    }
  }

  /** Runs the reclamation of abandoned writes now. */
  void sweep() {
    lock.lock();
    try {
      sweepLocked(clock.nanoTime());
    } finally {
      lock.unlock();
    }
  }

  private long usedBytesLocked() {
    long used = 0;
    for (SlabAllocator slab : slabs) {
      used += slab.usedBytes();
    }
    return used;
  }

  // ---------------------------------------------------------------- statistics

  long usedBytes() {
    return underLock(this::usedBytesLocked);
  }

  long maxObjectBytes() {
    return maxObjectBytes;
  }

  long capacityBytes() {
    return capacityBytes;
  }

  long unpinnedObjects() {
    return underLock(eviction::unpinnedObjects);
  }

  int objectCount() {
    return underLock(entries::size);
  }

  /** The memory of a key's committed value, or null; for tests of placement. */
  MemorySegment committedMemory(String key) {
    return underLock(
        () -> {
          Entry entry = entries.get(key);
          return entry == null || entry.committed == null ? null : entry.committed.memory;
        });
  }

  long evictedObjects() {
    return underLock(eviction::evictedObjects);
  }

  /** Reads a statistic under the lock, so it is consistent with the state the lock guards. */
  private <T> T underLock(Supplier<T> read) {
    lock.lock();
    try {
      return read.get();
    } finally {
      lock.unlock();
    }
  }
}
