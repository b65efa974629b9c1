package org.transferqueue.objectstore.engine;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.Threads;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.objectstore.AbstractObjectStore;
import org.transferqueue.objectstore.CheckpointableObjectStore;
import org.transferqueue.objectstore.ObjectStore;
import org.transferqueue.objectstore.ObjectStoreArgs;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.StoreStatistics;
import org.transferqueue.objectstore.StoreStatus;
import org.transferqueue.objectstore.engine.StoreMaster.ReadTicket;
import org.transferqueue.objectstore.engine.StoreMaster.WriteTicket;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.checkpoint.FileDigest;

/**
 * An in-process {@link ObjectStore}: objects live in slabs taken from a {@link BufferAllocator} at
 * {@link #setup}, and bytes move with exactly one {@link MemorySegment#copy} per direction, from
 * the caller's memory into the store and back.
 *
 * <h2>Design note</h2>
 *
 * <p><b>Layers.</b> {@link StoreMaster} owns all metadata under its one lock and hands out write
 * and read tickets; {@link AbstractObjectStore} checks arguments and registered regions; this class
 * copies bytes outside every lock and returns tickets. Every write is two-phase: start (memory
 * allocated, object invisible), copy, then end (visible) — or revoke when the copy fails, so an
 * abandoned write never becomes visible and gives its memory back.
 *
 * <p><b>Threads.</b> Any thread may call; the async twins run on a fixed pool of {@link
 * MasterConfig#asyncThreads()} daemon threads owned by the store. A {@link ReentrantReadWriteLock}
 * guards the lifecycle: every call holds its read lock from entry to return, {@link #setup} and
 * {@link #closeStore} take its write lock, so close waits for calls in flight and no call sees
 * freed memory. Registered regions are {@link AbstractObjectStore}'s, under its own lock.
 *
 * <p><b>Ownership.</b> The slabs and the local-buffer child allocator belong to the store and are
 * freed at close (a slab still lent to a reader, e.g. a store node's shared-memory reply lease, is
 * freed at that reader's release); buffers returned by {@link #get} and {@link #getBatch} belong to
 * the caller, who must close them before closing the store. Registered regions stay the caller's.
 *
 * <p><b>Deviations from Mooncake</b> (all in the direction of safety): a put on a present key
 * returns {@code -705} instead of a silent 0; removal and eviction never hand out memory that a
 * read in flight still copies from; an upsert whose reader is in flight writes a fresh buffer
 * instead of overwriting in place; duplicate keys in one batch get {@code -600}; eviction is
 * byte-based and also runs synchronously when an allocation fails, so {@code -200} means nothing
 * could be freed. All replicas of one client share one segment name, so one replica is stored
 * whatever {@link ReplicateConfig#replicaNum()} asks (best effort, as Mooncake).
 */
public final class EmbeddedObjectStore extends AbstractObjectStore
    implements CheckpointableObjectStore {
  private static final System.Logger LOG = System.getLogger(EmbeddedObjectStore.class.getName());
  private static final int OK = StoreStatus.OK.code();
  private static final int INVALID = StoreStatus.INVALID_PARAMS.code();
  private static final int TRANSFER_FAIL = StoreStatus.TRANSFER_FAIL.code();
  private static final int LEASE_EXPIRED = StoreStatus.LEASE_EXPIRED.code();

  private enum State {
    NEW,
    OPEN,
    CLOSED
  }

  private final BufferAllocator allocator;
  private final SharedMemoryPool slabPool;
  private final MasterConfig masterConfig;
  private final EngineCheckpoints checkpoints;
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();

  // Written under the lifecycle write lock; read under its read lock (state also without it).
  private volatile State state = State.NEW;
  private volatile StoreConfig config;
  private final List<NativeBuffer> slabs = new ArrayList<>();
  private BufferAllocator localBuffer;
  private StoreMaster master;
  private ExecutorService executor;
  // Set once recovery has rebuilt the store; null while it replays and without durability.
  private volatile NodeJournal journal;

  private EmbeddedObjectStore(
      BufferAllocator allocator, MasterConfig masterConfig, SharedMemoryPool slabPool) {
    this.allocator = Objects.requireNonNull(allocator, "allocator");
    this.slabPool = slabPool;
    this.masterConfig = Objects.requireNonNull(masterConfig, "masterConfig");
    this.checkpoints = new EngineCheckpoints(this, allocator);
  }

  /**
   * Creates a store that is not yet set up.
   *
   * @param allocator where the slabs and copy-path buffers come from; must outlive the store
   * @param masterConfig leases, pins, eviction, timeouts, clock
   * @return a store the caller owns and must close
   */
  public static EmbeddedObjectStore create(BufferAllocator allocator, MasterConfig masterConfig) {
    return new EmbeddedObjectStore(allocator, masterConfig, null);
  }

  /**
   * Creates a store, not yet set up, whose slabs lie in shared memory: each slab is a storage
   * region of {@code slabPool} ({@link SharedMemoryPool#allocateStorage}), so that a store node's
   * same-host clients can map every stored object (docs/PROTOCOL.md section 4.2). Slab bytes are
   * then accounted once, in the pool's child allocator (a child of the allocator the pool was
   * given); a slab the pool cannot create (its allocator's limit, or no memfd) comes from {@code
   * allocator} instead, accounted there, and the store works as without the pool.
   *
   * @param allocator where the other slabs and the copy-path buffers come from; must outlive the
   *     store
   * @param masterConfig leases, pins, eviction, timeouts, clock
   * @param slabPool the pool to take slabs from, or null for {@link #create(BufferAllocator,
   *     MasterConfig)}; not owned, must outlive the store's slabs
   * @return a store the caller owns and must close
   */
  public static EmbeddedObjectStore create(
      BufferAllocator allocator, MasterConfig masterConfig, SharedMemoryPool slabPool) {
    return new EmbeddedObjectStore(allocator, masterConfig, slabPool);
  }

  @Override
  public int setup(StoreConfig storeConfig) {
    Objects.requireNonNull(storeConfig, "storeConfig");
    lifecycle.writeLock().lock();
    try {
      if (state != State.NEW) {
        return INVALID;
      }
      List<MemorySegment> segments = new ArrayList<>();
      try {
        long remaining = storeConfig.globalSegmentSize();
        while (remaining > 0) {
          long length = Math.min(remaining, masterConfig.maxSlabBytes());
          NativeBuffer slab = allocateSlab(length);
          slabs.add(slab);
          segments.add(slab.segment());
          remaining -= length;
        }
        localBuffer =
            allocator.newChildAllocator(
                "objectstore-local:" + storeConfig.localHostname(), storeConfig.localBufferSize());
      } catch (TqException e) {
        LOG.log(System.Logger.Level.WARNING, "object store setup failed: " + e.getMessage());
        freeMemory();
        return INVALID;
      }
      config = storeConfig;
      master = new StoreMaster(segments, masterConfig);
      executor =
          Executors.newFixedThreadPool(
              masterConfig.asyncThreads(),
              Threads.daemon("tq-objectstore-" + storeConfig.localHostname()));
      state = State.OPEN;
      return OK;
    } finally {
      lifecycle.writeLock().unlock();
    }
  }

  @Override
  public int closeStore() {
    ExecutorService toStop;
    lifecycle.writeLock().lock();
    try {
      if (state == State.CLOSED) {
        return OK;
      }
      state = State.CLOSED;
      toStop = executor;
      closeRegistrations();
    } finally {
      lifecycle.writeLock().unlock();
    }
    // No call is in flight and none can start: tasks still queued return -600 at once.
    if (toStop != null) {
      toStop.shutdown();
      try {
        if (!toStop.awaitTermination(1, TimeUnit.MINUTES)) {
          LOG.log(System.Logger.Level.WARNING, "object store executor did not stop in 1 min");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    freeMemory();
    return OK;
  }

  /** A slab: from the shared-memory pool when there is one and it has room, else the allocator. */
  private NativeBuffer allocateSlab(long length) {
    if (slabPool != null) {
      try {
        return slabPool.allocateStorage(length);
      } catch (TqException e) {
        LOG.log(
            System.Logger.Level.WARNING,
            "a slab of "
                + length
                + " bytes does not fit in shared memory, so its objects are copied to same-host"
                + " readers: "
                + e.getMessage());
      }
    }
    return allocator.allocate(length);
  }

  /**
   * How many of the store's slab bytes lie in its shared-memory pool (for tests and statistics).
   *
   * @return bytes; 0 without a pool
   */
  public long sharedSlabBytes() {
    lifecycle.readLock().lock();
    try {
      long bytes = 0;
      for (NativeBuffer slab : slabs) {
        if (slabPool != null && slabPool.locate(slab.segment()) != null) {
          bytes += slab.lengthBytes();
        }
      }
      return bytes;
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /** Frees the local buffer allocator and the slabs, in reverse order of creation. */
  private void freeMemory() {
    RuntimeException failure = null;
    if (localBuffer != null) {
      try {
        localBuffer.close();
      } catch (RuntimeException e) {
        failure = e;
      }
      localBuffer = null;
    }
    for (int i = slabs.size() - 1; i >= 0; i--) {
      slabs.get(i).close();
    }
    slabs.clear();
    master = null;
    if (failure != null) {
      throw failure;
    }
  }

  @Override
  public String hostname() {
    StoreConfig current = config;
    return current == null ? "" : current.localHostname();
  }

  @Override
  protected Executor asyncExecutor() {
    return state == State.OPEN ? executor : null;
  }

  @Override
  protected StoreConfig openConfig() {
    return state == State.OPEN ? config : null;
  }

  /**
   * What the store holds now: objects, bytes used and capacity, and evictions so far.
   *
   * @return the statistics
   * @throws StorageException {@code CLOSED} when the store is not set up or closed
   */
  public StoreStatistics statistics() {
    if (!enter()) {
      throw new StorageException(ErrorCode.CLOSED, "object store is not open: " + hostname());
    }
    try {
      return new StoreStatistics(
          master.objectCount(),
          master.usedBytes(),
          master.capacityBytes(),
          master.evictedObjects());
    } finally {
      exit();
    }
  }

  /**
   * The metadata side, for {@link EngineCheckpoints} and tests in this package; null unless open.
   */
  StoreMaster master() {
    return master;
  }

  /** Enters the life-cycle gate; false (not entered) when the store is not open. */
  boolean enter() {
    lifecycle.readLock().lock();
    if (state != State.OPEN) {
      lifecycle.readLock().unlock();
      return false;
    }
    return true;
  }

  /** Leaves the life-cycle gate entered by {@link #enter}. */
  void exit() {
    lifecycle.readLock().unlock();
  }

  // ---------------------------------------------------------------- writes

  @Override
  protected int writeOneValidated(
      String key, MemorySegment source, ReplicateConfig config, boolean upsert) {
    if (!enter()) {
      return INVALID;
    }
    try {
      WriteTicket ticket = master.startWrite(key, source.byteSize(), config, upsert);
      if (ticket.code() != OK) {
        return ticket.code();
      }
      if (!copy(source, ticket.allocation().memory, key)) {
        master.revokeWrite(ticket);
        return TRANSFER_FAIL;
      }
      int[] codes = new int[1];
      finishJournaled(new WriteTicket[] {ticket}, new boolean[] {true}, codes);
      return codes[0];
    } finally {
      exit();
    }
  }

  /**
   * Ends or revokes writes; with a journal, the committed writes' records are checksummed here
   * (outside the master's lock) and the call returns once they are durable ({@code -500} for a
   * write whose record could not be made durable).
   */
  private void finishJournaled(WriteTicket[] tickets, boolean[] commit, int[] codes) {
    NodeJournal journaled = journal;
    if (journaled == null) {
      master.finishWrites(tickets, commit, codes);
      return;
    }
    Object[] prepared = new Object[tickets.length];
    for (int i = 0; i < tickets.length; i++) {
      if (tickets[i] != null && commit[i]) {
        prepared[i] = journaled.prepare(tickets[i]);
      }
    }
    master.finishWrites(tickets, commit, codes, prepared);
    if (!journaled.awaitDurable()) {
      for (int i = 0; i < tickets.length; i++) {
        if (tickets[i] != null && commit[i] && codes[i] == OK) {
          codes[i] = StoreStatus.WRITE_FAIL.code();
        }
      }
    }
  }

  /** Waits until removals just made are durable; {@code -500} for those that are not. */
  private void awaitRemovals(int[] codes) {
    NodeJournal journaled = journal;
    if (journaled != null && !journaled.awaitDurable()) {
      for (int i = 0; i < codes.length; i++) {
        if (codes[i] == OK) {
          codes[i] = StoreStatus.WRITE_FAIL.code();
        }
      }
    }
  }

  /** Waits until every change journaled so far is durable (logged when it cannot be). */
  void awaitJournal() {
    NodeJournal journaled = journal;
    if (journaled != null) {
      journaled.awaitDurable();
    }
  }

  /** Journals the store's changes from now on (after recovery). */
  void attachJournal(NodeJournal attached) {
    if (!enter()) {
      throw new StorageException(ErrorCode.CLOSED, "object store is not open: " + hostname());
    }
    try {
      journal = attached;
      master.changeLog(attached.changeLog(master));
    } finally {
      exit();
    }
  }

  /** Stops journaling (the journal is closing). */
  void detachJournal(NodeJournal attached) {
    if (journal != attached) {
      return;
    }
    journal = null;
    if (enter()) {
      try {
        master.changeLog(null);
      } finally {
        exit();
      }
    }
  }

  /** Replays a journaled write (recovery only): the key gets these bytes and pins. */
  int replayWrite(String key, ReplicateConfig config, MemorySegment bytes) {
    if (!enter()) {
      return INVALID;
    }
    try {
      WriteTicket ticket = master.startWrite(key, bytes.byteSize(), config, true);
      if (ticket.code() != OK) {
        return ticket.code();
      }
      MemorySegment.copy(bytes, 0, ticket.allocation().memory, 0, bytes.byteSize());
      return master.endWrite(ticket);
    } finally {
      exit();
    }
  }

  /** Replays a journaled removal (recovery only). */
  void replayRemove(String key) {
    if (!enter()) {
      return;
    }
    try {
      master.remove(List.of(key), true, new int[1]);
    } finally {
      exit();
    }
  }

  @Override
  protected int[] writeValidated(
      List<String> keys,
      List<MemorySegment> sources,
      ReplicateConfig config,
      boolean upsert,
      int[] codes) {
    int n = keys.size();
    if (!enter()) {
      Arrays.fill(codes, INVALID);
      return codes;
    }
    try {
      long[] sizes = new long[n];
      for (int i = 0; i < n; i++) {
        sizes[i] = sources.get(i).byteSize();
      }
      WriteTicket[] tickets = master.startWrites(keys, sizes, config, upsert, codes);
      boolean[] copied = new boolean[n];
      for (int i = 0; i < n; i++) {
        if (tickets[i] != null) {
          copied[i] = copy(sources.get(i), tickets[i].allocation().memory, keys.get(i));
        }
      }
      finishJournaled(tickets, copied, codes);
      for (int i = 0; i < n; i++) {
        if (tickets[i] != null && !copied[i]) {
          codes[i] = TRANSFER_FAIL;
        }
      }
      return codes;
    } finally {
      exit();
    }
  }

  /**
   * Starts a batch write whose bytes the caller puts in place itself: each accepted key gets memory
   * in the store's segment ({@link PendingWrites#destination}), invisible until {@link
   * PendingWrites#commit}; closing the pending writes without committing revokes them. The same
   * validation and outcomes as {@link #batchPutFrom} ({@code upsert} false) and {@link
   * #batchUpsertFrom}, without a registered source: a store node reads request bodies straight into
   * the segment instead of copying them there.
   *
   * @param keys the keys; an empty or repeated key is refused with {@code -600}
   * @param sizes each key's value size in bytes; 0 is refused with {@code -600}
   * @param config the replication settings
   * @param upsert overwrite present keys (true) or refuse them with {@code -705}
   * @return the pending writes, which the caller must commit or close; every key refused with
   *     {@code -600} when the store is not open
   */
  public PendingWrites startWrites(
      List<String> keys, long[] sizes, ReplicateConfig config, boolean upsert) {
    Objects.requireNonNull(keys, "keys");
    Objects.requireNonNull(sizes, "sizes");
    Objects.requireNonNull(config, "config");
    int n = keys.size();
    int[] codes = new int[n];
    if (sizes.length != n || !enter()) {
      Arrays.fill(codes, INVALID);
      return new PendingWrites(this, new StoreMaster.WriteTicket[n], codes);
    }
    try {
      ObjectStoreArgs.checkSizes(keys, sizes, codes);
      return new PendingWrites(this, master.startWrites(keys, sizes, config, upsert, codes), codes);
    } finally {
      exit();
    }
  }

  /** Ends or revokes the tickets of {@link PendingWrites}; every key fails when closed. */
  void finishWrites(StoreMaster.WriteTicket[] tickets, boolean[] commit, int[] codes) {
    if (!enter()) {
      for (int i = 0; i < tickets.length; i++) {
        if (tickets[i] != null) {
          codes[i] = INVALID;
        }
      }
      return;
    }
    try {
      finishJournaled(tickets, commit, codes);
    } finally {
      exit();
    }
  }

  /** The one copy of a transfer; false if the caller's memory became inaccessible. */
  static boolean copy(MemorySegment from, MemorySegment to, String key) {
    try {
      MemorySegment.copy(from, 0, to, 0, to.byteSize());
      return true;
    } catch (IllegalStateException | WrongThreadException e) {
      LOG.log(System.Logger.Level.WARNING, "transfer of key '" + key + "' failed: " + e);
      return false;
    }
  }

  // ---------------------------------------------------------------- reads

  @Override
  protected long[] batchGetIntoValidated(
      List<String> keys, List<MemorySegment> destinations, long[] results) {
    int n = keys.size();
    if (!enter()) {
      Arrays.fill(results, INVALID);
      return results;
    }
    try {
      long[] capacities = new long[n];
      for (int i = 0; i < n; i++) {
        capacities[i] = destinations.get(i).byteSize();
      }
      long sentAtNs = master.clock().nanoTime();
      ReadTicket[] tickets = master.acquireReads(keys, capacities, results);
      try {
        for (int i = 0; i < n; i++) {
          if (tickets[i] != null) {
            MemorySegment memory = tickets[i].allocation().memory;
            results[i] =
                copyOut(memory, destinations.get(i), keys.get(i))
                    ? memory.byteSize()
                    : TRANSFER_FAIL;
          }
        }
      } finally {
        master.releaseReads(tickets);
      }
      checkLeases(tickets, results, sentAtNs);
      return results;
    } finally {
      exit();
    }
  }

  /**
   * Starts a batch read whose bytes the caller takes from the store's segment itself ({@link
   * PendingReads#source}), until it closes the pending reads: the same lookups, lease grants and
   * outcomes as {@link #batchGetInto}, without a registered destination and without the copy. A
   * store node writes READ replies straight from the segment this way.
   *
   * @param keys the keys; an empty key is refused with {@code -600}
   * @param capacities per key the most bytes the caller accepts ({@code -600} for a larger object),
   *     or -1 for any size
   * @return the pending reads, which the caller must close; every key refused with {@code -600}
   *     when the store is not open
   */
  public PendingReads startReads(List<String> keys, long[] capacities) {
    Objects.requireNonNull(keys, "keys");
    Objects.requireNonNull(capacities, "capacities");
    int n = keys.size();
    long[] results = new long[n];
    if (capacities.length != n || !enter()) {
      Arrays.fill(results, INVALID);
      return new PendingReads(null, new ReadTicket[n], results);
    }
    try {
      ObjectStoreArgs.checkKeys(keys, results);
      ReadTicket[] tickets = master.acquireReads(keys, capacities, results);
      for (int i = 0; i < n; i++) {
        if (tickets[i] != null) {
          results[i] = tickets[i].size();
        }
      }
      return new PendingReads(master, tickets, results);
    } finally {
      exit();
    }
  }

  /** Mooncake's client-side check: a read that ends at or after its lease deadline fails. */
  private void checkLeases(ReadTicket[] tickets, long[] results, long sentAtNs) {
    long now = master.clock().nanoTime();
    if (now - (sentAtNs + master.leaseTtlNs()) >= 0) {
      for (int i = 0; i < tickets.length; i++) {
        if (tickets[i] != null && results[i] >= 0) {
          results[i] = LEASE_EXPIRED;
        }
      }
    }
  }

  private static boolean copyOut(MemorySegment memory, MemorySegment destination, String key) {
    try {
      MemorySegment.copy(memory, 0, destination, 0, memory.byteSize());
      return true;
    } catch (IllegalStateException | WrongThreadException e) {
      LOG.log(System.Logger.Level.WARNING, "read of key '" + key + "' failed: " + e);
      return false;
    }
  }

  @Override
  protected List<NativeBuffer> getBatchValidated(List<String> keys, long[] codes) {
    int n = keys.size();
    if (!enter()) {
      return Collections.nCopies(n, null);
    }
    try {
      long[] capacities = new long[n];
      Arrays.fill(capacities, -1);
      long sentAtNs = master.clock().nanoTime();
      ReadTicket[] tickets = master.acquireReads(keys, capacities, codes);
      NativeBuffer[] buffers = new NativeBuffer[n];
      try {
        for (int i = 0; i < n; i++) {
          if (tickets[i] != null) {
            buffers[i] = readIntoNewBuffer(tickets[i], keys.get(i));
            codes[i] = buffers[i] == null ? TRANSFER_FAIL : OK;
          }
        }
      } finally {
        master.releaseReads(tickets);
      }
      checkLeases(tickets, codes, sentAtNs);
      List<NativeBuffer> result = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        if (buffers[i] != null && codes[i] < 0) {
          buffers[i].close();
          buffers[i] = null;
        }
        result.add(buffers[i]);
      }
      return result;
    } finally {
      exit();
    }
  }

  private NativeBuffer readIntoNewBuffer(ReadTicket ticket, String key) {
    NativeBuffer buffer;
    try {
      buffer = localBuffer.allocate(ticket.size());
    } catch (TqException e) {
      return null; // local buffer exhausted: Mooncake's copy path fails the same way
    }
    if (!copyOut(ticket.allocation().memory, buffer.segment(), key)) {
      buffer.close();
      return null;
    }
    return buffer;
  }

  // ---------------------------------------------------------------- queries

  @Override
  protected int[] batchIsExistValidated(List<String> keys, int[] codes) {
    if (!enter()) {
      Arrays.fill(codes, INVALID);
      return codes;
    }
    try {
      int[] results = master.exist(keys);
      for (int i = 0; i < results.length; i++) {
        if (codes[i] != OK) {
          results[i] = codes[i];
        }
      }
      return results;
    } finally {
      exit();
    }
  }

  @Override
  protected long getSizeValidated(String key) {
    if (!enter()) {
      return INVALID;
    }
    try {
      return master.size(key);
    } finally {
      exit();
    }
  }

  // ---------------------------------------------------------------- removal

  @Override
  protected int[] batchRemoveValidated(List<String> keys, boolean force, int[] codes) {
    if (!enter()) {
      Arrays.fill(codes, INVALID);
      return codes;
    }
    try {
      master.remove(keys, force, codes);
      awaitRemovals(codes);
      return codes;
    } finally {
      exit();
    }
  }

  @Override
  public long removeByRegex(String regex, boolean force) {
    Objects.requireNonNull(regex, "regex");
    Pattern pattern;
    try {
      pattern = Pattern.compile(regex);
    } catch (PatternSyntaxException e) {
      return INVALID;
    }
    if (!enter()) {
      return INVALID;
    }
    try {
      long removed = master.removeMatching(key -> pattern.matcher(key).find(), force);
      int[] code = {OK};
      awaitRemovals(code);
      return code[0] == OK ? removed : code[0];
    } finally {
      exit();
    }
  }

  @Override
  public long removeAll(boolean force) {
    if (!enter()) {
      return INVALID;
    }
    try {
      long removed = master.removeMatching(key -> true, force);
      int[] code = {OK};
      awaitRemovals(code);
      return code[0] == OK ? removed : code[0];
    } finally {
      exit();
    }
  }

  // ---------------------------------------------------------------- checkpoints

  /**
   * Saves every readable object to {@code directory/mooncake_store/node_0.ckpt} (this store is one
   * node) and lists the node in {@code store_node_info.json}.
   */
  @Override
  public void saveCheckpoint(Path directory, CheckpointDigests digests) {
    checkpoints.save(directory, digests);
  }

  @Override
  public StorageManager.PreparedLoad prepareLoadCheckpoint(
      Path directory, CheckpointDigests digests) {
    return checkpoints.prepareLoad(directory, digests);
  }

  /**
   * Writes every readable object with its pins to one file, as of one instant (the objects stay
   * pinned, so removes and upserts meanwhile never change what is written); format in {@code
   * docs/CHECKPOINT.md}. Requests may continue.
   *
   * @param file the file, replaced if present; its directory must exist
   * @return the file's size and CRC32C, computed while writing
   * @throws StorageException {@code CLOSED} for a store that is not open, {@code STORAGE_ERROR} if
   *     writing failed
   */
  public FileDigest saveCheckpointFile(Path file) {
    return checkpoints.saveFile(file, () -> {});
  }

  /** As {@link #saveCheckpointFile(Path)}, running {@code underLock} as the objects are pinned. */
  FileDigest saveCheckpointFile(Path file, Runnable underLock) {
    return checkpoints.saveFile(file, underLock);
  }

  /**
   * Reads a file written by {@link #saveCheckpointFile} into staging memory from this store's
   * allocator, verifying it in the same pass, without changing the store. The commit removes every
   * object (forced) and writes the staged ones with their pins; it fails only if the store was
   * closed or requests ran meanwhile and took the space.
   *
   * @param file the file
   * @param expected the manifest's size and CRC32C, or null to check the structure only
   * @param digests where the verified file is noted, or null
   * @return the staged load
   * @throws StorageException {@code NOT_FOUND}, {@code CORRUPT_DATA} naming the file, {@code
   *     INVALID_ARGUMENT} when the objects do not fit this store, {@code OUT_OF_MEMORY} when the
   *     staging memory does not fit the allocator
   */
  public StorageManager.PreparedLoad prepareCheckpointFile(
      Path file, FileDigest expected, CheckpointDigests digests) {
    return checkpoints.prepareFile(file, expected, digests);
  }
}
