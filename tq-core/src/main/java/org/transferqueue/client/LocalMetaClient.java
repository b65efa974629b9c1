package org.transferqueue.client;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.ConsumptionStatus;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.ProductionStatus;
import org.transferqueue.controller.TagUpdate;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.tensor.Batch;

/**
 * A {@link MetaClient} over a controller (in-process, or remote through {@link
 * org.transferqueue.remote.RemoteController}) and a storage manager that it calls directly: data
 * never passes through the controller.
 *
 * <p>Thread-safe: the controller and storage manager are; this class holds no mutable state besides
 * its closed flag. Asynchronous twins run the blocking form on a virtual thread per call, owned by
 * this client and stopped by {@link #close()}.
 */
final class LocalMetaClient implements MetaClient {
  private final ControllerApi controller;
  private final StorageManager storage;
  private final BufferAllocator allocator;
  private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * Creates a client.
   *
   * @param controller the controller; not owned
   * @param storage the storage manager; not owned
   * @param allocator where {@link #getData} allocates the batches it returns; not owned
   */
  LocalMetaClient(ControllerApi controller, StorageManager storage, BufferAllocator allocator) {
    this.controller = Objects.requireNonNull(controller, "controller");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.allocator = Objects.requireNonNull(allocator, "allocator");
  }

  @Override
  public BatchMeta getMeta(GetMetadataRequest request) {
    ensureOpen();
    return controller.getMetadata(request);
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
    BatchMeta meta =
        controller.getMetadata(
            GetMetadataRequest.insert(partitionId, data.fields(), data.rowCount()));
    return put(data, meta);
  }

  @Override
  public CompletableFuture<BatchMeta> putAsync(Batch data, String partitionId) {
    return async(() -> put(data, partitionId));
  }

  @Override
  public BatchMeta put(Batch data, BatchMeta meta) {
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
    PutResult result = storage.put(data, meta);
    pushTags(meta);
    return result.applyTo(meta);
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
    return storage.get(meta, allocator);
  }

  @Override
  public CompletableFuture<Batch> getDataAsync(BatchMeta meta) {
    return async(() -> getData(meta));
  }

  @Override
  public void setTags(BatchMeta meta) {
    ensureOpen();
    pushTags(Objects.requireNonNull(meta, "meta"));
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
      controller.setTags(new TagUpdate(byPartition, TagUpdate.Mode.MERGE));
    }
  }

  @Override
  public void clearPartition(String partitionId) {
    ensureOpen();
    Optional<BatchMeta> meta = controller.getPartitionMeta(partitionId);
    if (meta.isEmpty()) {
      return;
    }
    if (!meta.get().isEmpty()) {
      storage.clear(meta.get());
    }
    controller.clearPartition(partitionId);
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
    // Storage first, so that no global index is recycled while its data still exists.
    storage.clear(meta);
    controller.clearSamples(
        new ClearSamplesRequest(meta.globalIndexes(), meta.partitionIds(), true));
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
    return controller.getProductionStatus(partitionId, fields);
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
    return controller.getConsumptionStatus(partitionId, taskName);
  }

  @Override
  public boolean checkConsumptionStatus(String partitionId, String taskName) {
    return getConsumptionStatus(partitionId, taskName)
        .map(ConsumptionStatus::allConsumed)
        .orElse(false);
  }

  @Override
  public void resetConsumption(String partitionId, String taskName) {
    ensureOpen();
    controller.resetConsumption(partitionId, taskName);
  }

  @Override
  public List<String> getPartitionList() {
    ensureOpen();
    return controller.listPartitions();
  }

  @Override
  public BatchMeta resolveKeys(String partitionId, List<String> keys, boolean create) {
    ensureOpen();
    return controller.resolveKeys(partitionId, keys, create);
  }

  @Override
  public List<String> resolveIndexes(String partitionId, List<Long> globalIndexes) {
    ensureOpen();
    return controller.resolveIndexes(partitionId, globalIndexes);
  }

  @Override
  public Map<String, Map<String, Map<String, Object>>> listKeys(String partitionId) {
    ensureOpen();
    return controller.listKeys(partitionId).partitions();
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
