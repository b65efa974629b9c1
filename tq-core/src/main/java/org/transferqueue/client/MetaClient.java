package org.transferqueue.client;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.transferqueue.controller.ConsumptionStatus;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.ProductionStatus;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.tensor.Batch;

/**
 * The low-level client: asks the controller for metadata and moves data between the caller and
 * storage against that metadata.
 *
 * <p>Typical producer and consumer:
 *
 * <pre>{@code
 * BatchMeta written = client.put(batch, "train");            // allocates samples, stores, notifies
 * BatchMeta ready = client.getMeta(GetMetadataRequest.fetch("train", List.of("input_ids"), "actor", 8));
 * try (Batch data = client.getData(ready)) { ... }           // caller owns the returned batch
 * client.clearPartition("train");
 * }</pre>
 *
 * <p>Thread-safe. Every method has an {@code ...Async} twin returning a {@link CompletableFuture}
 * that completes with the same result or exception. Errors are {@link
 * org.transferqueue.TqException}s whose code names what went wrong; a failed call changes nothing
 * it did not report. Partition ids, task names, field names and keys are non-empty, valid Unicode
 * strings ({@link org.transferqueue.controller.Names}), and so is every string of tags and object
 * values ({@link org.transferqueue.Strings}); field names must not contain {@code @} nor end in
 * {@code :c<digits>} (the cell keys of key-value backends): every call rejects what breaks these
 * rules with {@code INVALID_ARGUMENT}, on every backend and deployment, before anything is
 * registered, stored or sent.
 */
public interface MetaClient extends AutoCloseable {

  /**
   * Asks the controller for metadata: insert (reserve new samples), fetch (ready samples for a
   * task, through the sampler; marks them consumed) or force fetch (everything in a partition).
   *
   * @param request the mode, partition, fields, task, batch size, sampling configuration and wait
   * @return the metadata; empty when a non-blocking fetch found too few ready samples, and for a
   *     force fetch of a partition that does not exist
   * @throws org.transferqueue.DeadlineExceededException when a blocking fetch waited in vain
   */
  BatchMeta getMeta(GetMetadataRequest request);

  /**
   * Asks the controller for metadata as {@link #getMeta} does, with "nothing to return now" as a
   * value: a fetch that found too few ready samples (at once in polling mode, at its deadline in
   * blocking mode) and a force fetch of a partition that does not exist answer empty, and consume
   * nothing. For consumers that ask again later, such as {@link StreamingLoader}.
   *
   * <pre>{@code
   * Optional<BatchMeta> ready = client.tryGetMeta(GetMetadataRequest.fetch("train", fields, "actor", 8));
   * ready.ifPresent(meta -> process(meta));   // else ask again after a while
   * }</pre>
   *
   * @param request the mode, partition, fields, task, batch size, sampling configuration and wait
   * @return the metadata, or empty when there is none to return now
   */
  Optional<BatchMeta> tryGetMeta(GetMetadataRequest request);

  /**
   * Asynchronous {@link #tryGetMeta}.
   *
   * @param request the request
   * @return the metadata or empty, later
   */
  CompletableFuture<Optional<BatchMeta>> tryGetMetaAsync(GetMetadataRequest request);

  /**
   * Asynchronous {@link #getMeta}.
   *
   * @param request the request
   * @return the metadata, later
   */
  CompletableFuture<BatchMeta> getMetaAsync(GetMetadataRequest request);

  /**
   * Stores a batch as new samples of a partition (created on demand).
   *
   * @param data the rows to store; the caller keeps ownership
   * @param partitionId the partition
   * @return the metadata of the new samples, with the batch's fields marked produced
   */
  BatchMeta put(Batch data, String partitionId);

  /**
   * Asynchronous {@link #put(Batch, String)}.
   *
   * @param data the rows; must stay open until the future completes
   * @param partitionId the partition
   * @return the metadata, later
   */
  CompletableFuture<BatchMeta> putAsync(Batch data, String partitionId);

  /**
   * Stores fields of existing samples: row {@code i} of {@code data} belongs to sample {@code i} of
   * {@code meta}. Storage notifies the controller before this returns; the tags carried by {@code
   * meta} are merged into the samples' tags afterwards.
   *
   * @param data the rows; the caller keeps ownership
   * @param meta the target samples, as returned by {@link #getMeta} or an earlier put
   * @return {@code meta} with the batch's fields added and marked produced
   * @throws org.transferqueue.TqException with {@code SHAPE_MISMATCH} when the row counts differ,
   *     {@code INVALID_ARGUMENT} for empty metadata, {@code SCHEMA_CONFLICT} when a dtype or shape
   *     conflicts with the partition's schema (nothing becomes produced then)
   */
  BatchMeta put(Batch data, BatchMeta meta);

  /**
   * Like {@link #put(Batch, BatchMeta)}, with a data parser that the storage units run on their
   * rows before storing them (SimpleStorage only; parsers are registered on the storage units).
   *
   * @param data the rows; the caller keeps ownership
   * @param meta the target samples
   * @param parser the registered parser and its arguments
   * @return {@code meta} with the parsed batch's fields added and marked produced
   * @throws org.transferqueue.StorageException {@code UNSUPPORTED_OPERATION} on a backend without
   *     parsers and {@code DATA_PARSER_FAILED} for an unknown or failing parser; nothing is stored
   *     then
   */
  BatchMeta put(Batch data, BatchMeta meta, DataParserReference parser);

  /**
   * Asynchronous {@link #put(Batch, BatchMeta, DataParserReference)}.
   *
   * @param data the rows; must stay open until the future completes
   * @param meta the target samples
   * @param parser the registered parser and its arguments
   * @return the metadata, later
   */
  CompletableFuture<BatchMeta> putAsync(Batch data, BatchMeta meta, DataParserReference parser);

  /**
   * Asynchronous {@link #put(Batch, BatchMeta)}.
   *
   * @param data the rows; must stay open until the future completes
   * @param meta the target samples
   * @return the metadata, later
   */
  CompletableFuture<BatchMeta> putAsync(Batch data, BatchMeta meta);

  /**
   * Reads the fields of {@code meta} for its samples, rows in the metadata's order.
   *
   * @param meta the samples and fields to read
   * @return a new batch the caller owns and must close; an empty batch for empty metadata
   * @throws org.transferqueue.StorageException {@code UNKNOWN_FIELD} when a field is not one of a
   *     sample's partition (no sample of the partition was ever produced for it), {@code NOT_FOUND}
   *     when every field is but a cell is absent (never written, cleared, or no such sample); the
   *     same on every backend and deployment
   */
  Batch getData(BatchMeta meta);

  /**
   * Asynchronous {@link #getData}.
   *
   * @param meta the samples and fields
   * @return the batch, later; the caller owns it
   */
  CompletableFuture<Batch> getDataAsync(BatchMeta meta);

  /**
   * Merges the per-sample tags carried by {@code meta} into the controller's tags.
   *
   * @param meta samples with tags
   */
  void setTags(BatchMeta meta);

  /**
   * Asynchronous {@link #setTags}.
   *
   * @param meta samples with tags
   * @return completion
   */
  CompletableFuture<Void> setTagsAsync(BatchMeta meta);

  /**
   * Removes every sample of a partition from storage, then from the controller. Idempotent.
   *
   * @param partitionId the partition
   */
  void clearPartition(String partitionId);

  /**
   * Asynchronous {@link #clearPartition}.
   *
   * @param partitionId the partition
   * @return completion
   */
  CompletableFuture<Void> clearPartitionAsync(String partitionId);

  /**
   * Removes some samples from storage (every stored field, whichever fields {@code meta} lists),
   * then from the controller; their global indexes become free for reuse. Idempotent.
   *
   * @param meta the samples
   */
  void clearSamples(BatchMeta meta);

  /**
   * Asynchronous {@link #clearSamples}.
   *
   * @param meta the samples
   * @return completion
   */
  CompletableFuture<Void> clearSamplesAsync(BatchMeta meta);

  /**
   * The production matrix of a partition for some fields.
   *
   * @param partitionId the partition
   * @param fields the fields
   * @return the status, or empty for an unknown partition
   */
  Optional<ProductionStatus> getProductionStatus(String partitionId, List<String> fields);

  /**
   * Asynchronous {@link #getProductionStatus}.
   *
   * @param partitionId the partition
   * @param fields the fields
   * @return the status, later
   */
  CompletableFuture<Optional<ProductionStatus>> getProductionStatusAsync(
      String partitionId, List<String> fields);

  /**
   * Whether every sample of the partition has every listed field produced.
   *
   * @param partitionId the partition
   * @param fields the fields
   * @return false for an unknown or empty partition
   */
  boolean checkProductionStatus(String partitionId, List<String> fields);

  /**
   * Asynchronous {@link #checkProductionStatus}.
   *
   * @param partitionId the partition
   * @param fields the fields
   * @return whether all are produced, later
   */
  CompletableFuture<Boolean> checkProductionStatusAsync(String partitionId, List<String> fields);

  /**
   * The consumption flags of a task in a partition.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @return the status, or empty for an unknown partition
   */
  Optional<ConsumptionStatus> getConsumptionStatus(String partitionId, String taskName);

  /**
   * Asynchronous {@link #getConsumptionStatus}.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @return the status, later
   */
  CompletableFuture<Optional<ConsumptionStatus>> getConsumptionStatusAsync(
      String partitionId, String taskName);

  /**
   * Whether the task has consumed every sample of the partition.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @return false for an unknown or empty partition
   */
  boolean checkConsumptionStatus(String partitionId, String taskName);

  /**
   * Asynchronous {@link #checkConsumptionStatus}.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @return whether all are consumed, later
   */
  CompletableFuture<Boolean> checkConsumptionStatusAsync(String partitionId, String taskName);

  /**
   * Marks samples of a partition unconsumed again, for one task or (null) for all, so that they can
   * be fetched anew. Data, production status, tags and sampler caches are unchanged.
   *
   * @param partitionId the partition
   * @param taskName the task, or null for every task
   * @return whether anything was reset: true when at least one sample was marked consumed by the
   *     task (by some task, for null) and now is not; false for an unknown partition or task, and
   *     when nothing had been consumed
   */
  boolean resetConsumption(String partitionId, String taskName);

  /**
   * Asynchronous {@link #resetConsumption}.
   *
   * @param partitionId the partition
   * @param taskName the task, or null for every task
   * @return whether anything was reset, later
   */
  CompletableFuture<Boolean> resetConsumptionAsync(String partitionId, String taskName);

  /**
   * The partitions that exist, in creation order.
   *
   * @return the partition ids
   */
  List<String> getPartitionList();

  /**
   * Asynchronous {@link #getPartitionList}.
   *
   * @return the partition ids, later
   */
  CompletableFuture<List<String>> getPartitionListAsync();

  /**
   * Resolves keys to samples of a partition, creating missing keys when asked.
   *
   * @param partitionId the partition
   * @param keys distinct keys
   * @param create whether to create missing keys (and the partition)
   * @return the samples found or created, in request order, with the fields produced for all
   * @throws org.transferqueue.TqException {@code INVALID_ARGUMENT} for a null or empty key list, or
   *     a null, empty or not well-formed key (naming its position); {@code DUPLICATE_KEY} for a
   *     repeated key; nothing is created then
   */
  BatchMeta resolveKeys(String partitionId, List<String> keys, boolean create);

  /**
   * Asynchronous {@link #resolveKeys}.
   *
   * @param partitionId the partition
   * @param keys distinct keys
   * @param create whether to create missing keys (and the partition)
   * @return the samples, later
   */
  CompletableFuture<BatchMeta> resolveKeysAsync(
      String partitionId, List<String> keys, boolean create);

  /**
   * Writes rows under keys of a partition, the key-value put: resolves the keys, creating missing
   * ones (and the partition), and checks the rows' schema in one controller call, then stores the
   * rows as {@link #put(Batch, BatchMeta)} does. When storing fails, the samples this call created
   * are removed again (keys that existed keep their data) and the failure is rethrown.
   *
   * @param partitionId the partition
   * @param keys distinct keys, one per row
   * @param data the rows; the caller keeps ownership
   * @param parser a parser registered on the storage units, or null for none (with a parser the
   *     schema is not checked up front, since the parser may change it)
   * @return the keys' metadata after the put, as {@link #put(Batch, BatchMeta)} returns it
   * @throws org.transferqueue.TqException as {@link #resolveKeys} and {@link #put(Batch,
   *     BatchMeta)}; {@code SCHEMA_CONFLICT} before anything is registered
   */
  BatchMeta putKeys(String partitionId, List<String> keys, Batch data, DataParserReference parser);

  /**
   * Asynchronous {@link #putKeys}.
   *
   * @param partitionId the partition
   * @param keys distinct keys, one per row
   * @param data the rows; must stay open until the future completes
   * @param parser a registered parser, or null for none
   * @return the keys' metadata, later
   */
  CompletableFuture<BatchMeta> putKeysAsync(
      String partitionId, List<String> keys, Batch data, DataParserReference parser);

  /**
   * The keys of samples.
   *
   * @param partitionId the partition
   * @param globalIndexes the samples
   * @return one key per sample, null where a sample has no key
   * @throws org.transferqueue.TqException {@code UNKNOWN_PARTITION} when the partition does not
   *     exist, {@code INVALID_ARGUMENT} for an empty list
   */
  List<String> resolveIndexes(String partitionId, List<Long> globalIndexes);

  /**
   * Asynchronous {@link #resolveIndexes}.
   *
   * @param partitionId the partition
   * @param globalIndexes the samples
   * @return one key per sample, later
   */
  CompletableFuture<List<String>> resolveIndexesAsync(String partitionId, List<Long> globalIndexes);

  /**
   * The keys and their tags, of one partition or (null) of all.
   *
   * @param partitionId a partition, or null
   * @return partition id to key to tags; empty for an unknown partition
   */
  Map<String, Map<String, Map<String, Object>>> listKeys(String partitionId);

  /**
   * Asynchronous {@link #listKeys}.
   *
   * @param partitionId a partition, or null
   * @return partition id to key to tags, later
   */
  CompletableFuture<Map<String, Map<String, Map<String, Object>>>> listKeysAsync(
      String partitionId);

  /**
   * Where the controller's Prometheus endpoint can be scraped, the same answer from every process
   * of a deployment (upstream's {@code get_metrics_endpoint()}).
   *
   * @return {@code host:port} while the controller's process serves metrics ({@code
   *     metrics.enabled}); empty otherwise
   */
  Optional<String> metricsEndpoint();

  /**
   * Asynchronous {@link #metricsEndpoint()}.
   *
   * @return the endpoint, later
   */
  CompletableFuture<Optional<String>> metricsEndpointAsync();

  /** Releases this client; a client of an owning system does not stop the system. Idempotent. */
  @Override
  void close();
}
