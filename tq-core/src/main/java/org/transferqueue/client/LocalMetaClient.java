package org.transferqueue.client;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.transferqueue.Clock;
import org.transferqueue.DistinctErrorLog;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.ConsumptionStatus;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.controller.FetchMode;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.KeyResolution;
import org.transferqueue.controller.Names;
import org.transferqueue.controller.ProductionStatus;
import org.transferqueue.controller.TagUpdate;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.metrics.ControllerOp;
import org.transferqueue.metrics.ControllerRequests;
import org.transferqueue.storage.ClearResult;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.storage.PartitionGroup;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.kv.KvKeys;
import org.transferqueue.tensor.Batch;

/**
 * A {@link MetaClient} over a controller (in-process, or remote through {@link
 * org.transferqueue.remote.controller.RemoteController}) and a storage manager that it calls
 * directly: data never passes through the controller.
 *
 * <p>A put that fails removes the samples it created (cells first, then metadata). That cleanup
 * runs within what is left of the put's deadline, the storage manager's {@link
 * StorageManager#requestTimeout() request timeout} from the start of the put, so that a storage
 * server that stopped answering makes the put wait one deadline, not one per step. A cleanup not
 * done by then goes on in the background (each of its remote calls has its own deadline) and the
 * put throws its error at once; a background cleanup that fails is logged and counted ({@link
 * #cleanupFailures()}). With storage in this process the cleanup always runs before the put
 * returns.
 *
 * <p>Thread-safe: the controller and storage manager are; this class holds no mutable state besides
 * its closed flag. Asynchronous twins and background cleanups run on a virtual thread per call,
 * owned by this client; {@link #close()} waits for them.
 */
final class LocalMetaClient implements MetaClient {
  private final ControllerApi controller;
  private final StorageManager storage;
  private final BufferAllocator allocator;
  private final ControllerRequests requests;
  private final Clock nanoClock;
  private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final DistinctErrorLog cleanupErrors =
      new DistinctErrorLog(System.getLogger(LocalMetaClient.class.getName()));

  /**
   * Creates a client.
   *
   * @param controller the controller; not owned
   * @param storage the storage manager; not owned
   * @param allocator where {@link #getData} allocates the batches it returns; not owned
   */
  LocalMetaClient(ControllerApi controller, StorageManager storage, BufferAllocator allocator) {
    this(controller, storage, allocator, ControllerRequests.NOOP);
  }

  /**
   * Creates a client whose controller calls are measured.
   *
   * @param controller the controller; not owned
   * @param storage the storage manager; not owned
   * @param allocator where {@link #getData} allocates the batches it returns; not owned
   * @param requests measures each controller call by its request type
   */
  LocalMetaClient(
      ControllerApi controller,
      StorageManager storage,
      BufferAllocator allocator,
      ControllerRequests requests) {
    this(controller, storage, allocator, requests, Clock.SYSTEM);
  }

  /**
   * Creates a client whose controller calls are measured, with the monotonic clock that puts
   * measure their deadline by.
   */
  LocalMetaClient(
      ControllerApi controller,
      StorageManager storage,
      BufferAllocator allocator,
      ControllerRequests requests,
      Clock nanoClock) {
    this.controller = Objects.requireNonNull(controller, "controller");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.allocator = Objects.requireNonNull(allocator, "allocator");
    this.requests = Objects.requireNonNull(requests, "requests");
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
  }

  @Override
  public BatchMeta getMeta(GetMetadataRequest request) {
    ensureOpen();
    if (Objects.requireNonNull(request, "request").mode() == FetchMode.FORCE_FETCH) {
      // A force fetch inspects a partition; one that does not exist holds nothing to inspect.
      return tryGetMeta(request).orElseGet(BatchMeta::empty);
    }
    return requests.measure(ControllerOp.GET_META, () -> controller.getMetadata(request));
  }

  @Override
  public Optional<BatchMeta> tryGetMeta(GetMetadataRequest request) {
    ensureOpen();
    return requests.measure(ControllerOp.GET_META, () -> controller.tryGetMetadata(request));
  }

  @Override
  public CompletableFuture<Optional<BatchMeta>> tryGetMetaAsync(GetMetadataRequest request) {
    return async(() -> tryGetMeta(request));
  }

  @Override
  public CompletableFuture<BatchMeta> getMetaAsync(GetMetadataRequest request) {
    return async(() -> getMeta(request));
  }

  @Override
  public BatchMeta put(Batch data, String partitionId) {
    ensureOpen();
    Objects.requireNonNull(data, "data");
    if (data.rowCount() == 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "cannot put an empty batch into partition '" + partitionId + "'");
    }
    checkFieldNames(data.fields());
    long startNs = nanoClock.nanoTime();
    GetMetadataRequest insert =
        GetMetadataRequest.insert(partitionId, data.fields(), data.rowCount());
    BatchMeta meta = requests.measure(ControllerOp.GET_META, () -> controller.getMetadata(insert));
    try {
      return put(data, meta);
    } catch (RuntimeException e) {
      // The samples were allocated for this put only: a failed put must not leave them behind.
      cleanUp(meta.addFields(data, false), startNs, e);
      throw e;
    }
  }

  @Override
  public CompletableFuture<BatchMeta> putAsync(Batch data, String partitionId) {
    return async(() -> put(data, partitionId));
  }

  @Override
  public BatchMeta put(Batch data, BatchMeta meta) {
    return store(data, meta, null);
  }

  @Override
  public BatchMeta put(Batch data, BatchMeta meta, DataParserReference parser) {
    return store(data, meta, Objects.requireNonNull(parser, "parser"));
  }

  @Override
  public CompletableFuture<BatchMeta> putAsync(
      Batch data, BatchMeta meta, DataParserReference parser) {
    return async(() -> put(data, meta, parser));
  }

  private BatchMeta store(Batch data, BatchMeta meta, DataParserReference parser) {
    return store(data, meta, parser, parser == null);
  }

  @Override
  public BatchMeta putKeys(
      String partitionId, List<String> keys, Batch data, DataParserReference parser) {
    ensureOpen();
    Objects.requireNonNull(data, "data");
    checkFieldNames(data.fields());
    long startNs = nanoClock.nanoTime();
    // Without a parser the controller checks the schema before it creates any key; a parser may
    // change the schema, so its puts are checked by the production notification only.
    Map<String, FieldSchema> schema = parser == null ? FieldSchema.extract(data) : Map.of();
    KeyResolution resolution =
        requests.measure(
            ControllerOp.KV_RETRIEVE_META,
            () -> controller.resolveKeysForPut(partitionId, keys, schema, data.rowCount()));
    BatchMeta meta = resolution.meta();
    try {
      return store(data, meta, parser, false);
    } catch (RuntimeException e) {
      forgetCreated(meta.addFields(data, false), resolution.createdIndexes(), startNs, e);
      throw e;
    }
  }

  /**
   * Removes the samples a failed key-value put created, so that a rejected put leaves no key
   * behind; keys that existed before the put keep their data.
   */
  private void forgetCreated(
      BatchMeta resolved, List<Long> created, long startNs, RuntimeException failure) {
    if (created.isEmpty()) {
      return;
    }
    Set<Long> createdSet = new HashSet<>(created);
    int[] positions =
        IntStream.range(0, resolved.size())
            .filter(i -> createdSet.contains(resolved.globalIndex(i)))
            .toArray();
    cleanUp(resolved.selectSamples(positions), startNs, failure);
  }

  /**
   * Removes the samples a failed put created, within what is left of the put's deadline (see the
   * class comment), else in the background. A cleanup failure known in time is added to {@code
   * failure} as suppressed; a later one goes to the cleanup error log.
   *
   * @param created the samples to remove, with the fields the put wrote
   * @param startNs when the put started, on {@link #nanoClock}
   * @param failure the put's failure, which the caller throws
   */
  private void cleanUp(BatchMeta created, long startNs, RuntimeException failure) {
    Optional<Duration> budget = storage.requestTimeout();
    if (budget.isPresent()) {
      try {
        CompletableFuture<Void> cleanup =
            CompletableFuture.runAsync(() -> removeCreated(created), executor);
        long remainingNs = startNs + budget.get().toNanos() - nanoClock.nanoTime();
        if (cleanupErrors.awaitWithin(cleanup, remainingNs, "cleanup of a failed put")) {
          cleanup.join();
        }
        return;
      } catch (CompletionException e) {
        failure.addSuppressed(e.getCause());
        return;
      } catch (RejectedExecutionException closing) {
        // The client is closing: clean up before the put returns.
      }
    }
    try {
      removeCreated(created);
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /**
   * Removes the samples of a failed put: their cells, then their metadata (also when some cells
   * could not be removed, as {@link #clearSamples} does, so that no key of the put stays listed).
   *
   * @throws StorageException {@code STORAGE_ERROR} naming the cells that could not be removed
   */
  private void removeCreated(BatchMeta created) {
    ClearResult cleared = removeSamples(created);
    if (!cleared.isComplete()) {
      throw new StorageException(
          ErrorCode.STORAGE_ERROR,
          "the cells of a failed put could not all be removed: " + cleared.failures());
    }
  }

  /**
   * The number of background cleanups of failed puts that failed (see the class comment).
   *
   * @return the count
   */
  long cleanupFailures() {
    return cleanupErrors.errorCount();
  }

  private BatchMeta store(
      Batch data, BatchMeta meta, DataParserReference parser, boolean checkSchema) {
    ensureOpen();
    Objects.requireNonNull(data, "data");
    Objects.requireNonNull(meta, "meta");
    if (meta.isEmpty()) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "metadata cannot be empty for a put");
    }
    if (data.rowCount() != meta.size()) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "batch has "
              + data.rowCount()
              + " rows but the metadata has "
              + meta.size()
              + " samples");
    }
    checkFieldNames(data.fields());
    checkPartitionIds(meta);
    BatchMeta samples = CurrentMetadata.withKnownGenerations(meta, controller);
    if (checkSchema) {
      // Ask the controller first, so that no backend stores data it will reject: a schema it
      // refuses, a sample cleared since the metadata was made, an index of another partition.
      Map<String, FieldSchema> schema = FieldSchema.extract(data);
      long[] gis = samples.globalIndexArray();
      long[] generations = samples.generationArray();
      for (PartitionGroup group : PartitionGroup.of(samples)) {
        int[] rows = group.positions();
        long[] groupGis = new long[rows.length];
        long[] groupGenerations = new long[rows.length];
        for (int j = 0; j < rows.length; j++) {
          groupGis[j] = gis[rows[j]];
          groupGenerations[j] = generations[rows[j]];
        }
        controller.checkPut(group.partitionId(), schema, groupGis, groupGenerations);
      }
    }
    PutResult result;
    try {
      result = parser == null ? storage.put(data, samples) : storage.put(data, samples, parser);
    } catch (TqException e) {
      if (isStale(e)) {
        forgetStale(data, samples, e);
      }
      throw e instanceof StorageException storageFailure ? schemaConflictOf(storageFailure) : e;
    }
    pushTags(samples);
    return result.applyTo(samples);
  }

  private static boolean isStale(TqException e) {
    return e.code() == ErrorCode.STALE_METADATA
        || e.getCause() instanceof TqException cause && cause.code() == ErrorCode.STALE_METADATA;
  }

  /**
   * After a put refused as stale: removes what the put may have stored for the samples that were
   * cleared since its metadata was made. Those cells live under the old samples' generations
   * (key-value keys name the generation; storage units refuse to remove a newer one), so this never
   * touches the samples that reuse the indexes. Failures are added to {@code failure}.
   */
  private void forgetStale(Batch data, BatchMeta meta, TqException failure) {
    try {
      int[] stale = CurrentMetadata.stalePositions(meta, controller);
      if (stale.length > 0) {
        storage.clear(meta.addFields(data, false).selectSamples(stale));
      }
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /**
   * Rejects field names that are empty or not valid Unicode ({@link Names}), and those that a
   * key-value backend cannot store apart from other cells ({@code @}, which separates index and
   * field in its keys, or a {@code :c<digits>} suffix, which names a chunk), on every backend, so
   * that a field name is valid or invalid whatever the backend, and is rejected before anything is
   * registered.
   *
   * @throws TqException {@code INVALID_ARGUMENT} naming the field
   */
  static void checkFieldNames(Collection<String> fields) {
    Names.checkFieldNames(fields);
    for (String field : fields) {
      KvKeys.checkField(field);
    }
  }

  /**
   * Rejects metadata whose partition ids are not valid names ({@link Names}), before anything is
   * stored, read or sent. Samples of one partition usually share one id instance, so the check runs
   * about once per partition and allocates nothing.
   *
   * @throws TqException {@code INVALID_ARGUMENT} naming the partition id
   */
  private static void checkPartitionIds(BatchMeta meta) {
    String checked = null;
    for (String partitionId : meta.partitionIds()) {
      if (partitionId != checked) {
        checked = Names.checkPartitionId(partitionId);
      }
    }
  }

  /**
   * A storage failure whose cause is the controller rejecting the schema is reported as that schema
   * conflict, so callers see the same code whether storage or the controller noticed it.
   */
  private static RuntimeException schemaConflictOf(StorageException e) {
    if (e.code() == ErrorCode.NOTIFICATION_FAILED
        && e.getCause() instanceof TqException cause
        && cause.code() == ErrorCode.SCHEMA_CONFLICT) {
      return new TqException(ErrorCode.SCHEMA_CONFLICT, e.getMessage(), e);
    }
    return e;
  }

  @Override
  public CompletableFuture<BatchMeta> putAsync(Batch data, BatchMeta meta) {
    return async(() -> put(data, meta));
  }

  @Override
  public Batch getData(BatchMeta meta) {
    ensureOpen();
    Objects.requireNonNull(meta, "meta");
    if (meta.isEmpty() || meta.fieldNames().isEmpty()) {
      return Batch.builder().rowCount(meta.isEmpty() ? 0 : meta.size()).build();
    }
    checkFieldNames(meta.fieldNames());
    checkPartitionIds(meta);
    BatchMeta samples = CurrentMetadata.withKnownGenerations(meta, controller);
    try {
      return storage.get(samples, allocator);
    } catch (TqException e) {
      if (!REREAD_CODES.contains(e.code())) {
        throw e;
      }
      BatchMeta current = currentAfter(samples, e);
      if (current == null) {
        throw classify(samples, e);
      }
      // The samples' fields were rewritten with other shapes since the metadata was made (storage
      // units return the new rows; a key-value read sized from the old shapes cannot): read the
      // current cells, as a storage unit would.
      try {
        return storage.get(current, allocator);
      } catch (TqException again) {
        again.addSuppressed(e);
        throw REREAD_CODES.contains(again.code()) ? classify(current, again) : again;
      }
    }
  }

  /** Read failures after which the metadata is held against the controller's current state. */
  private static final Set<ErrorCode> REREAD_CODES =
      Set.of(
          ErrorCode.NOT_FOUND,
          ErrorCode.UNKNOWN_FIELD,
          ErrorCode.CORRUPT_DATA,
          ErrorCode.STORAGE_ERROR,
          ErrorCode.SHAPE_MISMATCH);

  /** The current metadata to read again with, or null; throws {@code STALE_METADATA}. */
  private BatchMeta currentAfter(BatchMeta meta, TqException failure) {
    try {
      return CurrentMetadata.afterFailedRead(meta, failure, controller);
    } catch (TqException e) {
      if (e.code() == ErrorCode.STALE_METADATA) {
        throw e;
      }
      failure.addSuppressed(e);
      return null;
    }
  }

  private TqException classify(BatchMeta meta, TqException failure) {
    return failure.code() == ErrorCode.NOT_FOUND || failure.code() == ErrorCode.UNKNOWN_FIELD
        ? MissingCells.classify(meta, failure, this)
        : failure;
  }

  @Override
  public CompletableFuture<Batch> getDataAsync(BatchMeta meta) {
    return async(() -> getData(meta));
  }

  @Override
  public void setTags(BatchMeta meta) {
    ensureOpen();
    checkPartitionIds(Objects.requireNonNull(meta, "meta"));
    pushTags(meta);
  }

  @Override
  public CompletableFuture<Void> setTagsAsync(BatchMeta meta) {
    return async(
        () -> {
          setTags(meta);
          return null;
        });
  }

  /** Sends the non-empty tags of {@code meta}, grouped by partition, as one merge. */
  private void pushTags(BatchMeta meta) {
    Map<String, Map<Long, Map<String, Object>>> byPartition = new HashMap<>();
    for (int i = 0; i < meta.size(); i++) {
      Map<String, Object> tags = meta.tags(i);
      if (tags != null && !tags.isEmpty()) {
        byPartition
            .computeIfAbsent(meta.partitionId(i), p -> new HashMap<>())
            .put(meta.globalIndex(i), tags);
      }
    }
    if (!byPartition.isEmpty()) {
      TagUpdate update = new TagUpdate(byPartition, TagUpdate.Mode.MERGE);
      requests.measure(ControllerOp.SET_CUSTOM_META, () -> controller.setTags(update));
    }
  }

  @Override
  public void clearPartition(String partitionId) {
    ensureOpen();
    Optional<BatchMeta> meta =
        requests.measure(
            ControllerOp.GET_PARTITION_META, () -> controller.getPartitionMeta(partitionId));
    if (meta.isEmpty()) {
      return;
    }
    if (!meta.get().isEmpty()) {
      // Mark first, so that no fetch hands out a sample whose data is being removed.
      controller.markClearing(ClearSamplesRequest.of(meta.get(), true));
      storage.clear(meta.get());
    }
    requests.measure(ControllerOp.CLEAR_PARTITION, () -> controller.clearPartition(partitionId));
  }

  @Override
  public CompletableFuture<Void> clearPartitionAsync(String partitionId) {
    return async(
        () -> {
          clearPartition(partitionId);
          return null;
        });
  }

  @Override
  public void clearSamples(BatchMeta meta) {
    ensureOpen();
    Objects.requireNonNull(meta, "meta");
    if (meta.isEmpty()) {
      return;
    }
    checkFieldNames(meta.fieldNames());
    checkPartitionIds(meta);
    removeSamples(meta);
  }

  /** Removes the cells of some samples, then their metadata; returns the storage's outcome. */
  private ClearResult removeSamples(BatchMeta meta) {
    BatchMeta samples = CurrentMetadata.withKnownGenerations(meta, controller);
    ClearSamplesRequest clear = ClearSamplesRequest.of(samples, true);
    // Three steps. The controller marks the samples first, so that no fetch hands out a sample
    // whose data is being removed; storage removes the data next, so that no global index is
    // recycled while its data still exists; the controller frees the indexes last. Storage and
    // the controller skip a sample whose generation is not the current one: a clear through stale
    // metadata leaves the sample that reuses the index alone.
    controller.markClearing(clear);
    ClearResult cleared = storage.clear(withEveryStoredField(samples));
    requests.measure(ControllerOp.CLEAR_META, () -> controller.clearSamples(clear), n -> n);
    return cleared;
  }

  /**
   * {@code meta} with every field registered in its partitions: a sample's cells are removed
   * whichever fields the caller's metadata lists (key-value backends remove cells by field). Asks
   * the controller only for backends that {@linkplain StorageManager#clearsByField clear by field};
   * the others remove whole samples, so {@code meta} is returned as is, without a round trip.
   */
  private BatchMeta withEveryStoredField(BatchMeta meta) {
    if (!storage.clearsByField()) {
      return meta;
    }
    Map<String, FieldSchema> missing = new TreeMap<>();
    for (String partitionId : new LinkedHashSet<>(meta.partitionIds())) {
      controller
          .partitionStatistics(partitionId)
          .ifPresent(
              stats -> {
                for (String field : stats.producedPerField().keySet()) {
                  if (!meta.fieldSchema().containsKey(field)) {
                    missing.put(field, FieldSchema.placeholder());
                  }
                }
              });
    }
    return missing.isEmpty() ? meta : meta.addFields(missing, false);
  }

  @Override
  public CompletableFuture<Void> clearSamplesAsync(BatchMeta meta) {
    return async(
        () -> {
          clearSamples(meta);
          return null;
        });
  }

  @Override
  public Optional<ProductionStatus> getProductionStatus(String partitionId, List<String> fields) {
    ensureOpen();
    return requests.measure(
        ControllerOp.GET_PRODUCTION, () -> controller.getProductionStatus(partitionId, fields));
  }

  @Override
  public boolean checkProductionStatus(String partitionId, List<String> fields) {
    return getProductionStatus(partitionId, fields)
        .map(s -> !s.indexes().isEmpty() && s.allProduced())
        .orElse(false);
  }

  @Override
  public Optional<ConsumptionStatus> getConsumptionStatus(String partitionId, String taskName) {
    ensureOpen();
    return requests.measure(
        ControllerOp.GET_CONSUMPTION, () -> controller.getConsumptionStatus(partitionId, taskName));
  }

  @Override
  public boolean checkConsumptionStatus(String partitionId, String taskName) {
    return getConsumptionStatus(partitionId, taskName)
        .map(ConsumptionStatus::allConsumed)
        .orElse(false);
  }

  @Override
  public boolean resetConsumption(String partitionId, String taskName) {
    ensureOpen();
    return requests.measure(
        ControllerOp.RESET_CONSUMPTION, () -> controller.resetConsumption(partitionId, taskName));
  }

  @Override
  public CompletableFuture<Boolean> resetConsumptionAsync(String partitionId, String taskName) {
    return async(() -> resetConsumption(partitionId, taskName));
  }

  @Override
  public CompletableFuture<Optional<ProductionStatus>> getProductionStatusAsync(
      String partitionId, List<String> fields) {
    return async(() -> getProductionStatus(partitionId, fields));
  }

  @Override
  public CompletableFuture<Boolean> checkProductionStatusAsync(
      String partitionId, List<String> fields) {
    return async(() -> checkProductionStatus(partitionId, fields));
  }

  @Override
  public CompletableFuture<Optional<ConsumptionStatus>> getConsumptionStatusAsync(
      String partitionId, String taskName) {
    return async(() -> getConsumptionStatus(partitionId, taskName));
  }

  @Override
  public CompletableFuture<Boolean> checkConsumptionStatusAsync(
      String partitionId, String taskName) {
    return async(() -> checkConsumptionStatus(partitionId, taskName));
  }

  @Override
  public CompletableFuture<List<String>> getPartitionListAsync() {
    return async(this::getPartitionList);
  }

  @Override
  public CompletableFuture<BatchMeta> resolveKeysAsync(
      String partitionId, List<String> keys, boolean create) {
    return async(() -> resolveKeys(partitionId, keys, create));
  }

  @Override
  public CompletableFuture<BatchMeta> putKeysAsync(
      String partitionId, List<String> keys, Batch data, DataParserReference parser) {
    return async(() -> putKeys(partitionId, keys, data, parser));
  }

  @Override
  public CompletableFuture<List<String>> resolveIndexesAsync(
      String partitionId, List<Long> globalIndexes) {
    return async(() -> resolveIndexes(partitionId, globalIndexes));
  }

  @Override
  public CompletableFuture<Map<String, Map<String, Map<String, Object>>>> listKeysAsync(
      String partitionId) {
    return async(() -> listKeys(partitionId));
  }

  @Override
  public List<String> getPartitionList() {
    ensureOpen();
    return requests.measure(ControllerOp.GET_LIST_PARTITIONS, controller::listPartitions);
  }

  @Override
  public BatchMeta resolveKeys(String partitionId, List<String> keys, boolean create) {
    ensureOpen();
    return requests.measure(
        ControllerOp.KV_RETRIEVE_META, () -> controller.resolveKeys(partitionId, keys, create));
  }

  @Override
  public List<String> resolveIndexes(String partitionId, List<Long> globalIndexes) {
    ensureOpen();
    List<String> keys =
        requests.measure(
            ControllerOp.KV_RETRIEVE_KEYS,
            () -> controller.resolveIndexes(partitionId, globalIndexes));
    if (keys.size() != globalIndexes.size()) {
      throw new TqException(
          ErrorCode.UNKNOWN_PARTITION,
          "Some global_indexes have no corresponding keys: partition '"
              + partitionId
              + "' does not exist (indexes "
              + globalIndexes
              + ")");
    }
    return keys;
  }

  @Override
  public Map<String, Map<String, Map<String, Object>>> listKeys(String partitionId) {
    ensureOpen();
    return requests
        .measure(ControllerOp.KV_LIST, () -> controller.listKeys(partitionId))
        .partitions();
  }

  @Override
  public Optional<String> metricsEndpoint() {
    ensureOpen();
    return controller.metricsEndpoint();
  }

  @Override
  public CompletableFuture<Optional<String>> metricsEndpointAsync() {
    return async(this::metricsEndpoint);
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      executor.close();
    }
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new TqException(ErrorCode.CLOSED, "the client is closed");
    }
  }

  private <T> CompletableFuture<T> async(Supplier<T> call) {
    ensureOpen();
    return CompletableFuture.supplyAsync(call, executor);
  }
}
