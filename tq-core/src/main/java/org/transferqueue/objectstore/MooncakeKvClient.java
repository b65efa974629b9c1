package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.random.RandomGenerator;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.codec.PackedValueCodec;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.kv.KvCellKind;
import org.transferqueue.storage.kv.KvCellValues;
import org.transferqueue.storage.kv.KvClient;
import org.transferqueue.storage.kv.KvValues;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * The key-value client of the MooncakeStore backend over an {@link ObjectStore}: tensors move as
 * raw bytes straight from and into registered memory, object values as packed buffers on the same
 * path.
 *
 * <h2>Design note</h2>
 *
 * <p><b>Put.</b> Cells are split into tensor and object cells (in key order) and then into slices
 * of at most {@code batch_size_limit} keys. A tensor slice writes every tensor with {@code
 * batchUpsertFrom} straight from its segment ({@link PutSources}: the caller's memory is registered
 * as merged regions; only heap memory or memory that cannot be registered is staged). An object
 * slice packs its values ({@link PackedValueCodec}) into one pooled registered buffer and upserts
 * the slots; the packed sizes are returned as backend metadata {@code {"packed_size": n}}. Every
 * write uses one {@link ReplicateConfig} whose hard pin is {@link KvClientConfig#hardPin()} (from
 * {@code backend.MooncakeStore}: on unless offload is enabled or {@code hard_pin} says otherwise).
 * Zero-byte tensors are not written (a store object cannot be empty) and not read.
 *
 * <p><b>Get.</b> Tensor slices allocate their destinations grouped by dtype (one pooled registered
 * buffer per dtype, views aligned to 64 bytes) from the expected dtypes and shapes and read with
 * {@code batchGetInto}; object slices read their packed sizes (required in the backend metadata)
 * into one pooled buffer and decode views of it. Every read must return exactly the expected byte
 * count. Keys whose metadata records chunks ({@code n_chunks}, {@code chunk_bytes}) are read chunk
 * by chunk into consecutive parts of their destination.
 *
 * <p><b>Clear.</b> {@code batchRemove(force = true)} per slice, chunk keys expanded whenever the
 * metadata records chunks ({@link ChunkKeys}, as reads expand them); {@code -704} (absent) is
 * success, other codes are logged and returned.
 *
 * <p><b>Threads.</b> Slice tasks run on virtual worker threads owned by the client (store calls
 * block), at most {@code max_batch_worker_threads} at a time per put, get or clear, so calls from
 * many threads do not queue behind each other; unless a {@link RetryScheduler} is injected, one
 * scheduler thread serves retry pauses. Slices of one call, tensor and object alike, run
 * concurrently; the calling thread waits for all of them, and the first failure is thrown after all
 * have finished and released their memory ({@link SliceFanOut} owns the workers, the retry timer
 * and the join). Retries follow {@link TransferRetrier}. Pooled buffers and memory registered with
 * {@link #registerMemory} stay registered across calls ({@link RegisteredBufferPool}, {@link
 * RegionRegistry}).
 *
 * <p><b>Ownership.</b> The store stays the caller's and must outlive the client, unless it was
 * handed over with {@link Builder#ownsStore}. Values returned by {@link #get} live in pooled
 * buffers until their {@link KvValues} is closed.
 *
 * <pre>{@code
 * try (MooncakeKvClient client =
 *     MooncakeKvClient.builder().store(store).allocator(allocator).build()) {
 *   List<Map<String, Object>> meta = client.put(keys, values);
 *   try (KvValues read = client.get(keys, shapes, dtypes, meta)) { ... }
 *   client.clear(keys, meta);
 * }
 * }</pre>
 */
public final class MooncakeKvClient implements KvClient {
  /** Backend-metadata key of an object cell's packed size. */
  public static final String PACKED_SIZE = "packed_size";

  /** Backend-metadata key of the number of chunks of a chunked tensor. */
  public static final String N_CHUNKS = "n_chunks";

  /** Backend-metadata key of the chunk size of a chunked tensor (all but the last chunk). */
  public static final String CHUNK_BYTES = "chunk_bytes";

  /** Default deadline of one put, get or clear. */
  public static final Duration OPERATION_TIMEOUT_DEFAULT = Duration.ofSeconds(120);

  /** Default bytes of registered buffers kept in the pool between calls. */
  public static final long MAX_POOLED_BYTES_DEFAULT = 2L << 30;

  private static final System.Logger LOG = System.getLogger(MooncakeKvClient.class.getName());

  /** Schedules the pause before a retry; the returned future completes when it is over. */
  @FunctionalInterface
  public interface RetryScheduler {
    /**
     * Completes a future after a delay.
     *
     * @param delayNs the delay, positive
     * @return a future completed (on any thread) once the delay has passed
     */
    CompletableFuture<Void> after(long delayNs);
  }

  private final ObjectStore store;
  private final KvClientConfig config;
  private final ReplicateConfig replicateConfig;
  private final Clock nanoClock;
  private final long operationTimeoutNs;
  private final SliceFanOut fanOut;
  private final RegionRegistry registry;
  private final RegisteredBufferPool pool;
  private final SliceTransfers transfers;
  private final boolean ownsStore;
  private final AtomicBoolean closed = new AtomicBoolean();

  private MooncakeKvClient(Builder b) {
    this.store = Objects.requireNonNull(b.store, "store");
    this.ownsStore = b.ownsStore;
    this.config = b.config;
    this.replicateConfig = ReplicateConfig.builder().withHardPin(config.hardPin()).build();
    this.nanoClock = b.nanoClock;
    this.operationTimeoutNs = b.operationTimeout.toNanos();
    this.fanOut = new SliceFanOut(b.retryScheduler);
    this.registry = new RegionRegistry(store);
    this.pool =
        new RegisteredBufferPool(
            Objects.requireNonNull(b.allocator, "allocator"),
            registry,
            b.pooledRegistration,
            b.maxPooledBytes);
    TransferRetrier retrier =
        new TransferRetrier(
            fanOut.workers(),
            fanOut.retryScheduler(),
            nanoClock,
            config.maxRetries(),
            config.retryDelay().toNanos(),
            b.jitter);
    this.transfers = new SliceTransfers(store, replicateConfig, registry, pool, retrier);
  }

  /**
   * Starts a builder.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The replicate config used for every write.
   *
   * @return the config; hard pin as {@link KvClientConfig#hardPin()}
   */
  public ReplicateConfig replicateConfig() {
    return replicateConfig;
  }

  /**
   * How many times this client has registered memory with the store so far.
   *
   * @return the count
   */
  public long registrations() {
    return registry.registerCalls();
  }

  /**
   * How many times this client has unregistered memory from the store so far.
   *
   * @return the count
   */
  public long unregistrations() {
    return registry.unregisterCalls();
  }

  /**
   * Registers caller memory for as long as the caller keeps it, so that puts of tensors inside it
   * need no registration per call (allocate tensors that are put often inside such a region).
   *
   * @param region a native segment that stays valid until {@link #unregisterMemory}
   * @throws TqException with {@code INVALID_ARGUMENT} for a heap or empty segment, one already
   *     registered through this method, or one the store refuses (for example because it partly
   *     overlaps a registered region)
   */
  public void registerMemory(MemorySegment region) {
    Objects.requireNonNull(region, "region");
    checkOpen();
    registry.registerCaller(region);
  }

  /**
   * Drops a registration made by {@link #registerMemory}; the region is unregistered once no
   * transfer in flight uses it.
   *
   * @param region the segment given to {@link #registerMemory}
   * @return false if it was not registered through this method
   */
  public boolean unregisterMemory(MemorySegment region) {
    Objects.requireNonNull(region, "region");
    return registry.unregisterCaller(region);
  }

  // ---------------------------------------------------------------- put

  @Override
  public List<Map<String, Object>> put(List<String> keys, List<?> values, List<KvCellKind> kinds) {
    Objects.requireNonNull(keys, "keys");
    Objects.requireNonNull(values, "values");
    Objects.requireNonNull(kinds, "kinds");
    checkOpen();
    if (keys.size() != values.size() || keys.size() != kinds.size()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "Number of keys must match number of values: keys="
              + keys.size()
              + ", values="
              + values.size()
              + ", kinds="
              + kinds.size());
    }
    int n = keys.size();
    if (n == 0) {
      return List.of();
    }
    // Tensor cells from the front of one index array, object cells from its back.
    int[] order = new int[n];
    int tensors = 0;
    int objects = n;
    KvCellValues cells = values instanceof KvCellValues c ? c : null;
    for (int i = 0; i < n; i++) {
      if (kinds.get(i) == KvCellKind.TENSOR) {
        boolean tensor =
            cells != null ? cells.kind(i) == KvCellKind.TENSOR : values.get(i) instanceof Tensor;
        if (!tensor) {
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "value of tensor key '" + keys.get(i) + "' is not a tensor: " + values.get(i));
        }
        order[tensors++] = i;
      } else {
        order[--objects] = i;
      }
    }
    reverse(order, objects, n);
    long deadline = nanoClock.nanoTime() + operationTimeoutNs;
    long[] packedSizes = objects < n ? new long[n] : null; // only object cells record a size
    List<SliceFanOut.SliceTask> tasks = new ArrayList<>();
    int limit = config.batchSizeLimit();
    for (int from = 0; from < tensors; from += limit) {
      int start = from;
      int end = Math.min(tensors, from + limit);
      tasks.add(() -> transfers.putTensors(order, start, end, keys, values, deadline));
    }
    for (int from = objects; from < n; from += limit) {
      List<Integer> slice = new ArrayList<>(Math.min(limit, n - from));
      for (int j = from; j < Math.min(n, from + limit); j++) {
        slice.add(order[j]);
      }
      tasks.add(() -> transfers.putObjects(slice, keys, values, packedSizes, deadline));
    }
    fanOut.run(tasks, config.maxBatchWorkerThreads());
    if (objects == n) {
      return Collections.nCopies(n, null); // tensor cells record no metadata
    }
    List<Map<String, Object>> meta = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      meta.add(kinds.get(i) == KvCellKind.TENSOR ? null : Map.of(PACKED_SIZE, packedSizes[i]));
    }
    return Collections.unmodifiableList(meta);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Each native region is registered (or referenced, when already registered) once for the call,
   * so that the values inside it need no registration of their own; a region that cannot be
   * registered is skipped and its values are registered or staged as by {@link #put(List, List,
   * List)}.
   */
  @Override
  public List<Map<String, Object>> put(
      List<String> keys, List<?> values, List<KvCellKind> kinds, List<MemorySegment> regions) {
    Objects.requireNonNull(regions, "regions");
    checkOpen();
    List<RegionRegistry.Region> registered = new ArrayList<>(regions.size());
    try {
      for (MemorySegment region : regions) {
        if (region.isNative() && region.byteSize() > 0) {
          RegionRegistry.Region acquired = registry.acquire(region);
          if (acquired != null) {
            registered.add(acquired);
          }
        }
      }
      return put(keys, values, kinds);
    } finally {
      registered.forEach(registry::release);
    }
  }

  // ---------------------------------------------------------------- get

  @Override
  public KvValues get(
      List<String> keys,
      List<long[]> shapes,
      List<DType> dtypes,
      List<Map<String, Object>> backendMeta) {
    Objects.requireNonNull(keys, "keys");
    checkOpen();
    GetPlan plan = GetPlan.of(keys, shapes, dtypes, backendMeta);
    int n = keys.size();
    if (n == 0) {
      return new KvValues(List.of(), List.of());
    }
    long deadline = nanoClock.nanoTime() + operationTimeoutNs;
    Object[] results = new Object[n];
    List<AutoCloseable> owned = Collections.synchronizedList(new ArrayList<>());
    List<SliceFanOut.SliceTask> tasks = new ArrayList<>();
    for (List<Integer> slice : SliceFanOut.slices(plan.tensorIndexes(), config.batchSizeLimit())) {
      tasks.add(() -> transfers.getTensors(plan, slice, results, owned, deadline));
    }
    for (List<Integer> slice : SliceFanOut.slices(plan.objectIndexes(), config.batchSizeLimit())) {
      tasks.add(() -> transfers.getObjects(plan, slice, results, owned, deadline));
    }
    try {
      fanOut.run(tasks, config.maxBatchWorkerThreads());
    } catch (RuntimeException e) {
      new KvValues(List.of(), owned).close();
      throw e;
    }
    return new KvValues(Arrays.asList(results), owned);
  }

  /**
   * Reads tensor cells with {@code batchGetInto} straight into the caller's destinations: the
   * caller's allocations are registered for the call (reference-counted, so concurrent reads into
   * the same memory share a registration) and each key's bytes land in its row, chunk by chunk when
   * the metadata records chunks. Memory the store refuses to register is read through the pooled
   * path of {@link #get} and copied over instead.
   */
  @Override
  public void getInto(
      List<String> keys,
      List<long[]> shapes,
      List<DType> dtypes,
      List<Map<String, Object>> backendMeta,
      List<MemorySegment> destinations,
      List<MemorySegment> regions) {
    Objects.requireNonNull(keys, "keys");
    Objects.requireNonNull(destinations, "destinations");
    Objects.requireNonNull(regions, "regions");
    checkOpen();
    GetPlan plan = GetPlan.of(keys, shapes, dtypes, backendMeta);
    if (plan.objectCount() != 0 || destinations.size() != keys.size()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "getInto reads tensor cells only, one destination per key: keys="
              + keys.size()
              + ", destinations="
              + destinations.size()
              + ", object cells="
              + plan.objectCount());
    }
    for (int i = 0; i < keys.size(); i++) {
      if (destinations.get(i).byteSize() != plan.nbytes(i)) {
        throw new TqException(
            ErrorCode.SHAPE_MISMATCH,
            "destination of key '"
                + keys.get(i)
                + "' has "
                + destinations.get(i).byteSize()
                + " bytes, expected "
                + plan.nbytes(i));
      }
    }
    List<RegionRegistry.Region> registered = new ArrayList<>(regions.size());
    try {
      for (MemorySegment region : regions) {
        if (region.byteSize() == 0) {
          continue;
        }
        RegionRegistry.Region acquired = region.isNative() ? registry.acquire(region) : null;
        if (acquired == null) {
          registered.forEach(registry::release);
          registered.clear();
          KvClient.super.getInto(keys, shapes, dtypes, backendMeta, destinations, regions);
          return;
        }
        registered.add(acquired);
      }
      long deadline = nanoClock.nanoTime() + operationTimeoutNs;
      List<SliceFanOut.SliceTask> tasks = new ArrayList<>();
      int limit = config.batchSizeLimit();
      for (int from = 0; from < plan.tensorCount(); from += limit) {
        int start = from;
        int end = Math.min(plan.tensorCount(), from + limit);
        tasks.add(() -> transfers.getTensorsInto(plan, start, end, destinations, deadline));
      }
      fanOut.run(tasks, config.maxBatchWorkerThreads());
    } finally {
      registered.forEach(registry::release);
    }
  }

  // ---------------------------------------------------------------- clear

  @Override
  public Map<String, Integer> clear(List<String> keys, List<Map<String, Object>> backendMeta) {
    Objects.requireNonNull(keys, "keys");
    checkOpen();
    if (backendMeta != null && backendMeta.size() != keys.size()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "custom_backend_meta has "
              + backendMeta.size()
              + " entries for "
              + keys.size()
              + " keys");
    }
    List<String> actual = new ArrayList<>(keys.size());
    List<String> base = new ArrayList<>(keys.size());
    for (int i = 0; i < keys.size(); i++) {
      Map<String, Object> meta = backendMeta == null ? null : backendMeta.get(i);
      int chunks = ChunkKeys.count(keys.get(i), meta);
      if (chunks == 0) {
        actual.add(keys.get(i));
        base.add(keys.get(i));
      }
      for (int c = 0; c < chunks; c++) {
        actual.add(ChunkKeys.of(keys.get(i), c));
        base.add(keys.get(i));
      }
    }
    List<Integer> all = new ArrayList<>(actual.size());
    for (int i = 0; i < actual.size(); i++) {
      all.add(i);
    }
    int[] codes = new int[actual.size()];
    List<SliceFanOut.SliceTask> tasks = new ArrayList<>();
    for (List<Integer> slice : SliceFanOut.slices(all, config.batchSizeLimit())) {
      tasks.add(
          () -> {
            List<String> sliceKeys = slice.stream().map(actual::get).toList();
            int[] rc = store.batchRemove(sliceKeys, true);
            for (int j = 0; j < slice.size(); j++) {
              codes[slice.get(j)] =
                  rc.length == slice.size() ? rc[j] : StoreStatus.INTERNAL_ERROR.code();
            }
            return CompletableFuture.completedFuture(null);
          });
    }
    fanOut.run(tasks, config.maxBatchWorkerThreads());
    Map<String, Integer> failed = new LinkedHashMap<>();
    for (int i = 0; i < codes.length; i++) {
      if (codes[i] != 0 && codes[i] != StoreStatus.OBJECT_NOT_FOUND.code()) {
        LOG.log(
            System.Logger.Level.ERROR,
            "remove failed for key " + actual.get(i) + " with error code: " + codes[i]);
        failed.putIfAbsent(base.get(i), codes[i]);
      }
    }
    return Collections.unmodifiableMap(failed);
  }

  // ---------------------------------------------------------------- plumbing

  private static void reverse(int[] values, int from, int to) {
    for (int i = from, j = to - 1; i < j; i++, j--) {
      int swap = values[i];
      values[i] = values[j];
      values[j] = swap;
    }
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new TqException(ErrorCode.CLOSED, "MooncakeKvClient is closed");
    }
  }

  /**
   * Saves the store's objects, when the store is a {@link CheckpointableObjectStore} (the embedded
   * engine and remote nodes are).
   *
   * @throws org.transferqueue.StorageException {@code UNSUPPORTED_OPERATION} for another store
   */
  @Override
  public void saveCheckpoint(Path directory, CheckpointDigests digests) {
    checkpointable().saveCheckpoint(directory, digests);
  }

  @Override
  public StorageManager.PreparedLoad prepareLoadCheckpoint(
      Path directory, CheckpointDigests digests) {
    return checkpointable().prepareLoadCheckpoint(directory, digests);
  }

  private CheckpointableObjectStore checkpointable() {
    if (closed.get()) {
      throw new TqException(ErrorCode.CLOSED, "Mooncake client is closed");
    }
    if (store instanceof CheckpointableObjectStore checkpointable) {
      return checkpointable;
    }
    throw new StorageException(
        ErrorCode.UNSUPPORTED_OPERATION,
        "object store " + store.getClass().getSimpleName() + " does not support checkpoint");
  }

  /**
   * Stops the workers (waiting up to 5 s for tasks in flight), then unregisters and frees the
   * pooled buffers, and closes the store if the client owns it. Values of {@link KvValues} still
   * open stay valid until they are closed (unless the store is closed under them). Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    fanOut.close();
    try {
      pool.close();
    } finally {
      registry.close();
      if (ownsStore) {
        store.close();
      }
    }
  }

  /** Builds a {@link MooncakeKvClient}; {@link #build()} validates. Not thread-safe. */
  public static final class Builder {
    private ObjectStore store;
    private boolean ownsStore;
    private BufferAllocator allocator;
    private KvClientConfig config = KvClientConfig.defaults();
    private Clock nanoClock = Clock.SYSTEM;
    private RetryScheduler retryScheduler;
    private Duration operationTimeout = OPERATION_TIMEOUT_DEFAULT;
    private boolean pooledRegistration = true;
    private long maxPooledBytes = MAX_POOLED_BYTES_DEFAULT;
    private RandomGenerator jitter = RandomGenerator.of("L64X128MixRandom");

    private Builder() {}

    /**
     * Sets the store (required). It must be set up and outlive the client.
     *
     * @param store the store
     * @return this builder
     */
    public Builder store(ObjectStore store) {
      this.store = store;
      return this;
    }

    /**
     * Sets whether the client closes the store when it closes.
     *
     * @param ownsStore true to hand the store over to the client; default false
     * @return this builder
     */
    public Builder ownsStore(boolean ownsStore) {
      this.ownsStore = ownsStore;
      return this;
    }

    /**
     * Sets where pooled transfer buffers come from (required).
     *
     * @param allocator the allocator; must outlive the client
     * @return this builder
     */
    public Builder allocator(BufferAllocator allocator) {
      this.allocator = allocator;
      return this;
    }

    /**
     * Sets the client's settings (batch size, workers, retries, hard pin).
     *
     * @param config the settings; default {@link KvClientConfig#defaults()}
     * @return this builder
     */
    public Builder config(KvClientConfig config) {
      this.config = Objects.requireNonNull(config, "config");
      return this;
    }

    /**
     * Sets the clock that deadlines are read from.
     *
     * @param nanoClock nanoseconds of a monotonic clock; default {@code Clock.SYSTEM}
     * @return this builder
     */
    public Builder nanoClock(Clock nanoClock) {
      this.nanoClock = nanoClock;
      return this;
    }

    /**
     * Sets what schedules retry pauses (tests inject one that advances a manual clock).
     *
     * @param retryScheduler the scheduler; default a timer thread owned by the client
     * @return this builder
     */
    public Builder retryScheduler(RetryScheduler retryScheduler) {
      this.retryScheduler = retryScheduler;
      return this;
    }

    /**
     * Sets the deadline of one operation: no retry starts after it.
     *
     * @param operationTimeout positive; default {@link #OPERATION_TIMEOUT_DEFAULT}
     * @return this builder
     */
    public Builder operationTimeout(Duration operationTimeout) {
      this.operationTimeout = operationTimeout;
      return this;
    }

    /**
     * Sets whether pooled buffers stay registered between calls (true, the default) or are
     * registered and unregistered on every use, as upstream did (for comparison only).
     *
     * @param pooledRegistration whether registrations are kept
     * @return this builder
     */
    public Builder pooledRegistration(boolean pooledRegistration) {
      this.pooledRegistration = pooledRegistration;
      return this;
    }

    /**
     * Sets how many bytes of registered buffers the pool keeps between calls.
     *
     * @param maxPooledBytes zero or more; default {@link #MAX_POOLED_BYTES_DEFAULT}
     * @return this builder
     */
    public Builder maxPooledBytes(long maxPooledBytes) {
      this.maxPooledBytes = maxPooledBytes;
      return this;
    }

    /**
     * Sets the random source of retry jitter (tests pass a seeded one).
     *
     * @param jitter the generator
     * @return this builder
     */
    public Builder jitter(RandomGenerator jitter) {
      this.jitter = jitter;
      return this;
    }

    /**
     * Creates the client and starts its workers.
     *
     * @return a client the caller owns and must close
     * @throws TqException with {@code INVALID_ARGUMENT} for a missing store, allocator, config or
     *     clock, a non-positive timeout or a negative pool size
     */
    public MooncakeKvClient build() {
      if (store == null || allocator == null || config == null || nanoClock == null) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "store, allocator, config and nanoClock are required: store="
                + store
                + ", allocator="
                + allocator
                + ", config="
                + config
                + ", nanoClock="
                + nanoClock);
      }
      if (operationTimeout == null || operationTimeout.isNegative() || operationTimeout.isZero()) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "operationTimeout=" + operationTimeout + " must be positive");
      }
      if (maxPooledBytes < 0) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "maxPooledBytes=" + maxPooledBytes + " < 0");
      }
      Objects.requireNonNull(jitter, "jitter");
      return new MooncakeKvClient(this);
    }
  }
}
