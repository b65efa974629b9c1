package org.transferqueue.controller;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;

/**
 * The operations of the controller that clients and storage use, the same whether the controller
 * runs in this process ({@link Controller}) or in another one (a remote proxy). This interface is
 * the contract of each operation: its semantics, results and errors.
 *
 * <p>Every operation is atomic. Arguments are validated before any state changes, so a rejected
 * request leaves no trace: every partition id, task name, field name and key must follow {@link
 * Names} (non-empty, valid Unicode; a partition id may be null only where null means "every
 * partition"), else the request fails with {@link ErrorCode#INVALID_ARGUMENT}. Every failure is a
 * {@link TqException}. A remote implementation adds transport errors ({@code CONNECTION_FAILED},
 * {@code DEADLINE_EXCEEDED}, {@code UNAUTHENTICATED}, {@code PROTOCOL_ERROR}) and carries every
 * controller error with its original {@link ErrorCode}. Implementations are thread-safe.
 */
public interface ControllerApi {
  /**
   * The controller's id; restored from checkpoints.
   *
   * @return the id
   */
  String controllerId();

  /**
   * Creates a partition and reserves its pre-allocated indexes.
   *
   * @param partitionId a non-empty name
   * @return true if created, false if it already existed
   */
  boolean createPartition(String partitionId);

  /**
   * All partition ids in creation order.
   *
   * @return the ids
   */
  List<String> listPartitions();

  /**
   * Every index the partition owns, active and pre-allocated.
   *
   * @param partitionId the partition
   * @return the indexes ascending; empty for an unknown partition
   */
  IndexSet getPartitionIndexRange(String partitionId);

  /**
   * Applies a storage notification atomically.
   *
   * <p>Every listed index must be owned by the partition (active or pre-allocated; a pre-allocated
   * one becomes active). Every field is validated against its recorded schema before anything
   * changes; a notification with an empty index list only registers its fields.
   *
   * @param update the notification
   * @throws TqException {@link ErrorCode#UNKNOWN_PARTITION} if the partition does not exist (it is
   *     not created); {@link ErrorCode#STALE_METADATA} for a sample whose generation is not its
   *     index's current one (the writer's metadata predates a clear of the index); {@link
   *     ErrorCode#INVALID_ARGUMENT} for an index the partition does not own or a malformed schema;
   *     {@link ErrorCode#SCHEMA_CONFLICT} for a dtype or kind conflict. In every case nothing
   *     changes and no sample becomes produced.
   */
  void updateProductionStatus(ProductionUpdate update);

  /**
   * Checks, without changing anything, whether a put of these field schemas into these samples
   * would be accepted by {@link #updateProductionStatus}: the partition exists, every sample's
   * generation is current, the partition owns every index, and the schema fits. Clients call it
   * before writing to storage, so that a backend that cannot undo a write (a key-value store
   * overwrites in place) never stores data the controller will reject. A concurrent clear or put of
   * another schema can still win the race; the notification then rejects this one as before.
   *
   * @param partitionId the partition; an unknown one accepts any schema for no samples
   * @param fields the schema of every field the put carries
   * @param indexes the samples the put writes
   * @param generations their generations, aligned ({@link BatchMeta#UNKNOWN_GENERATION} not
   *     checked)
   * @throws TqException {@link ErrorCode#UNKNOWN_PARTITION} for samples of an unknown partition;
   *     {@link ErrorCode#STALE_METADATA} for a generation that is not current; {@link
   *     ErrorCode#INVALID_ARGUMENT} for an index the partition does not own or a malformed schema;
   *     {@link ErrorCode#SCHEMA_CONFLICT} for a dtype or kind conflict with a registered field
   */
  void checkPut(
      String partitionId, Map<String, FieldSchema> fields, long[] indexes, long[] generations);

  /**
   * The production status of a partition for some fields.
   *
   * @param partitionId the partition
   * @param fields the fields, in the column order wanted
   * @return the status; empty for an unknown partition, an empty field list or any unregistered
   *     field
   */
  Optional<ProductionStatus> getProductionStatus(String partitionId, List<String> fields);

  /**
   * The samples ready for a task on some fields: active, produced for every field, unconsumed.
   * Registers the task.
   *
   * @param partitionId the partition
   * @param fields at least one field
   * @param taskName the task
   * @return the ready indexes; empty for an unknown partition or unregistered field
   */
  IndexSet scanReady(String partitionId, List<String> fields, String taskName);

  /**
   * The consumption status of a partition for a task; registers the task.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @return the status, or empty for an unknown partition
   */
  Optional<ConsumptionStatus> getConsumptionStatus(String partitionId, String taskName);

  /**
   * Marks samples unconsumed again so they can be fetched anew.
   *
   * @param partitionId the partition; unknown is a no-op
   * @param taskName the task, or null for every task; an unknown task is a no-op and is not
   *     registered
   * @return whether some sample was marked consumed (by the task, or by any task for null) and now
   *     is not
   */
  boolean resetConsumption(String partitionId, String taskName);

  /**
   * Answers a metadata request in insert, fetch or force-fetch mode.
   *
   * <ul>
   *   <li>Insert: creates the partition if needed, activates pre-allocated indexes (smallest
   *       first), allocates the rest, and returns them unproduced with the recorded schema of each
   *       field (a placeholder for new fields).
   *   <li>Fetch: consults the sampler's cache, then the ready set of (task, fields); when at least
   *       {@code batchSize} samples are ready the sampler chooses, its consumed indexes are marked
   *       consumed, and its sampled indexes are returned. When too few samples are ready, or the
   *       sampler returns nothing from them (for example no complete prompt group), polling mode
   *       returns an empty batch and blocking mode waits, re-checking whenever the state changes,
   *       until the request's deadline; a fetch that times out consumes nothing.
   *   <li>Force fetch: every index of the partition, produced or not, without sampling.
   * </ul>
   *
   * @param request the request
   * @return the batch's metadata
   * @throws DeadlineExceededException when a blocking fetch times out
   * @throws TqException {@link ErrorCode#UNKNOWN_PARTITION} for a force fetch of an unknown
   *     partition; {@link ErrorCode#INVALID_ARGUMENT} for sampler argument errors
   */
  BatchMeta getMetadata(GetMetadataRequest request);

  /**
   * Answers a metadata request as {@link #getMetadata} does, with "nothing to return now" as a
   * value instead of an error: a fetch that cannot be served (too few ready samples, or the sampler
   * served nothing from them) answers empty, at once in polling mode and at the request's deadline
   * in blocking mode, and consumes nothing; a force fetch of a partition that does not exist
   * answers empty. Streaming consumers, which ask again later, use it.
   *
   * @param request the request
   * @return the batch's metadata, or empty when there is none to return now
   * @throws TqException as {@link #getMetadata}, except for the two outcomes above
   */
  Optional<BatchMeta> tryGetMetadata(GetMetadataRequest request);

  /**
   * The force-fetch metadata of a partition over all its registered fields.
   *
   * @param partitionId the partition
   * @return the metadata, or empty for an unknown partition
   */
  Optional<BatchMeta> getPartitionMeta(String partitionId);

  /**
   * The current metadata of some samples of a partition: their generations, tags, backend metadata,
   * and the schema and production status of the requested fields. A reader whose metadata no longer
   * matches what storage holds (a read that found cells missing or of other shapes) asks for it to
   * tell a cleared sample from a rewritten one.
   *
   * @param partitionId the partition
   * @param indexes the samples, in the order wanted
   * @param fields the fields to describe (unregistered ones are left out), or null for every field
   *     of the partition
   * @return the samples among {@code indexes} that are active in the partition, in request order;
   *     empty for an unknown partition
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when {@code indexes} is null
   */
  BatchMeta getSampleMeta(String partitionId, List<Long> indexes, List<String> fields);

  /**
   * Writes tags (custom metadata) atomically, merging or replacing per sample.
   *
   * @param update the tags to write; unknown partitions and inactive indexes are skipped
   * @return the number of samples whose tags were written
   */
  int setTags(TagUpdate update);

  /**
   * The tags of some samples of a partition.
   *
   * @param partitionId the partition
   * @param indexes the samples
   * @return only the samples that have tags, in request order; empty for an unknown partition
   * @throws TqException {@code INVALID_ARGUMENT} when {@code indexes} is null
   */
  Map<Long, Map<String, Object>> getTags(String partitionId, List<Long> indexes);

  /**
   * The backend metadata of some samples, restricted to some fields.
   *
   * @param partitionId the partition
   * @param indexes the samples
   * @param fields the fields to keep, or null for every field
   * @return only the samples that have backend metadata; empty for an unknown partition
   * @throws TqException {@code INVALID_ARGUMENT} when {@code indexes} is null
   */
  Map<Long, Map<String, Object>> getBackendMeta(
      String partitionId, List<Long> indexes, List<String> fields);

  /**
   * Clears a whole partition: its samples, status and keys; releases every index it owns to the
   * pool and drops the sampler's cache of it. Unknown partitions are ignored (idempotent).
   *
   * @param partitionId the partition
   * @return true if the partition existed
   */
  boolean clearPartition(String partitionId);

  /**
   * Clears individual samples and releases their indexes to the pool. Only active samples of
   * existing partitions are cleared; everything else is ignored, so repeating a request is safe.
   *
   * @param request the (index, partition) pairs
   * @return the number of samples cleared
   */
  int clearSamples(ClearSamplesRequest request);

  /**
   * Marks samples as being cleared, the first step of a clear: from now on no fetch returns them
   * (they leave the ready sets, a sampler's cached answer is filtered, a force fetch omits them),
   * while their metadata stays for the removal of their data; {@link #clearSamples} then frees
   * them. Pairs that name no active sample at its current generation are ignored (idempotent).
   *
   * @param request the (index, partition) pairs
   * @return the number of samples newly marked
   */
  int markClearing(ClearSamplesRequest request);

  /**
   * Resolves keys to samples, optionally creating missing keys.
   *
   * <p>Duplicate keys are rejected before anything is registered. With {@code create}, the
   * partition is created if needed and each missing key gets a sample (pre-allocated indexes
   * first). The returned metadata lists, in request order, the samples of all found or created
   * keys, and the fields produced for every one of them.
   *
   * @param partitionId the partition
   * @param keys at least one distinct, non-empty key
   * @param create whether missing keys are created
   * @return the metadata; an empty batch when no key is found
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for an empty list or a null, empty or
   *     not well-formed key; {@link ErrorCode#DUPLICATE_KEY} when a key repeats
   */
  BatchMeta resolveKeys(String partitionId, List<String> keys, boolean create);

  /**
   * Checks a key-value put's schema and resolves its keys, creating missing ones, under one lock:
   * the schema check of {@link #checkPut} followed by {@link #resolveKeys} with {@code create},
   * reporting which samples were created. A rejected schema or key list registers nothing.
   *
   * @param partitionId the partition; created if missing
   * @param keys at least one distinct, non-empty key
   * @param fields the schema of every field the put carries; empty for a put of tags only
   * @param sampleCount the number of samples the put writes
   * @return the keys' metadata and the global indexes of the created samples, in request order
   * @throws TqException as {@link #checkPut} and {@link #resolveKeys}
   */
  KeyResolution resolveKeysForPut(
      String partitionId, List<String> keys, Map<String, FieldSchema> fields, int sampleCount);

  /**
   * The keys of some samples.
   *
   * @param partitionId the partition
   * @param indexes the samples
   * @return the key of each sample in order, null where a sample has no key; empty for an unknown
   *     partition
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a null or empty list
   */
  List<String> resolveIndexes(String partitionId, List<Long> indexes);

  /**
   * The keys and tags of one or all partitions.
   *
   * @param partitionId a partition, or null for all
   * @return the listing; empty with an explanatory message for an unknown partition
   */
  KvListing listKeys(String partitionId);

  /**
   * Statistics of one partition.
   *
   * @param partitionId the partition
   * @return the statistics, or empty if unknown
   */
  Optional<PartitionStatistics> partitionStatistics(String partitionId);

  /**
   * Statistics of every partition and the allocator, taken atomically.
   *
   * @return the statistics
   */
  ControllerStatistics statistics();

  /**
   * A complete copy of the controller's state, for a checkpoint.
   *
   * @return the state
   */
  ControllerState snapshotState();

  /**
   * Where the controller's Prometheus endpoint can be scraped, so that any process can find it.
   *
   * @return {@code host:port} of the endpoint the controller's process serves while {@code
   *     metrics.enabled}; empty when it serves none
   */
  Optional<String> metricsEndpoint();

  /**
   * Replaces all state with a snapshot: partitions created since disappear, the controller id and
   * the sampler's state are restored. Waiting fetches re-check.
   *
   * @param state a snapshot from {@link #snapshotState()}
   * @throws TqException {@link ErrorCode#INVALID_CONFIGURATION} when the state belongs to another
   *     sampler type; nothing changes then
   */
  void restoreState(ControllerState state);
}
