package org.transferqueue.controller;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;

/**
 * The operations of the controller that clients and storage use, the same whether the controller
 * runs in this process ({@link Controller}) or in another one (a remote proxy).
 *
 * <p>Each method has the semantics, results and errors of the {@link Controller} method of the same
 * name; a remote implementation adds transport errors ({@code CONNECTION_FAILED}, {@code
 * DEADLINE_EXCEEDED}, {@code UNAUTHENTICATED}, {@code PROTOCOL_ERROR}) and carries every controller
 * error with its original {@link org.transferqueue.ErrorCode}. Implementations are thread-safe.
 */
public interface ControllerApi {
  /**
   * The controller's id.
   *
   * @return the id
   */
  String controllerId();

  /**
   * Creates a partition.
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
   * @return the indexes; empty for an unknown partition
   */
  IndexSet getPartitionIndexRange(String partitionId);

  /**
   * Applies a storage notification atomically.
   *
   * @param update the notification
   */
  void updateProductionStatus(ProductionUpdate update);

  /**
   * Checks, without changing anything, whether a put of these field schemas into these samples
   * would be accepted (partition, generations, ownership, schema).
   *
   * @param partitionId the partition; an unknown one accepts any schema for no samples
   * @param fields the schema of every field the put carries
   * @param indexes the samples the put writes
   * @param generations their generations, aligned
   */
  void checkPut(
      String partitionId, Map<String, FieldSchema> fields, long[] indexes, long[] generations);

  /**
   * The production status of a partition for some fields.
   *
   * @param partitionId the partition
   * @param fields the fields
   * @return the status, or empty (unknown partition, no or unregistered fields)
   */
  Optional<ProductionStatus> getProductionStatus(String partitionId, List<String> fields);

  /**
   * The samples ready for a task on some fields.
   *
   * @param partitionId the partition
   * @param fields at least one field
   * @param taskName the task
   * @return the ready indexes
   */
  IndexSet scanReady(String partitionId, List<String> fields, String taskName);

  /**
   * The consumption status of a partition for a task.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @return the status, or empty for an unknown partition
   */
  Optional<ConsumptionStatus> getConsumptionStatus(String partitionId, String taskName);

  /**
   * Marks samples unconsumed again.
   *
   * @param partitionId the partition
   * @param taskName the task, or null for every task
   * @return whether some sample was marked consumed (by the task, or by any task for null) and now
   *     is not; false for an unknown partition or task
   */
  boolean resetConsumption(String partitionId, String taskName);

  /**
   * Answers a metadata request in insert, fetch or force-fetch mode; a blocking fetch waits at most
   * the request's timeout.
   *
   * @param request the request
   * @return the batch's metadata
   */
  BatchMeta getMetadata(GetMetadataRequest request);

  /**
   * The force-fetch metadata of a partition over all its registered fields.
   *
   * @param partitionId the partition
   * @return the metadata, or empty for an unknown partition
   */
  Optional<BatchMeta> getPartitionMeta(String partitionId);

  /**
   * The current metadata of some samples of a partition (generations, tags, backend metadata, the
   * schema and production status of some fields).
   *
   * @param partitionId the partition
   * @param indexes the samples, in the order wanted
   * @param fields the fields to describe, or null for every field of the partition
   * @return the samples among {@code indexes} that are active in the partition, in request order
   */
  BatchMeta getSampleMeta(String partitionId, List<Long> indexes, List<String> fields);

  /**
   * Merges or replaces the tags of samples.
   *
   * @param update the update
   * @return the number of samples updated
   */
  int setTags(TagUpdate update);

  /**
   * The tags of some samples.
   *
   * @param partitionId the partition
   * @param indexes the samples
   * @return the tags of the samples that have any
   */
  Map<Long, Map<String, Object>> getTags(String partitionId, List<Long> indexes);

  /**
   * The backend metadata of some samples, restricted to some fields.
   *
   * @param partitionId the partition
   * @param indexes the samples
   * @param fields the fields to keep
   * @return the backend metadata of the samples that have any
   */
  Map<Long, Map<String, Object>> getBackendMeta(
      String partitionId, List<Long> indexes, List<String> fields);

  /**
   * Removes a partition and releases its indexes.
   *
   * @param partitionId the partition
   * @return true if it existed
   */
  boolean clearPartition(String partitionId);

  /**
   * Removes samples and releases their indexes.
   *
   * @param request the samples
   * @return the number of samples removed
   */
  int clearSamples(ClearSamplesRequest request);

  /**
   * Marks samples as being cleared, the first step of every clear (then storage removes their data,
   * then {@link #clearSamples} or {@link #clearPartition} frees their indexes): no fetch returns a
   * marked sample, so no reader is handed a sample whose data is being removed. Idempotent; pairs
   * that name no active sample at its current generation are ignored.
   *
   * @param request the samples
   * @return the number of samples newly marked
   */
  int markClearing(ClearSamplesRequest request);

  /**
   * The samples of some keys, optionally creating missing ones.
   *
   * @param partitionId the partition
   * @param keys distinct keys
   * @param create whether missing keys are created
   * @return the metadata of the found or created keys
   */
  BatchMeta resolveKeys(String partitionId, List<String> keys, boolean create);

  /**
   * For a key-value put: checks the put's schema as {@link #checkPut} does, then resolves the keys
   * creating missing ones as {@link #resolveKeys} with {@code create} does, in one step. A rejected
   * schema creates nothing.
   *
   * @param partitionId the partition; created if missing
   * @param keys distinct keys
   * @param fields the schema of every field the put carries; empty for a put of tags only
   * @param sampleCount the number of samples the put writes
   * @return the keys' metadata and the indexes of the samples created
   */
  KeyResolution resolveKeysForPut(
      String partitionId, List<String> keys, Map<String, FieldSchema> fields, int sampleCount);

  /**
   * The keys of some samples.
   *
   * @param partitionId the partition
   * @param indexes the samples
   * @return the key of each sample, null where it has none
   */
  List<String> resolveIndexes(String partitionId, List<Long> indexes);

  /**
   * The keys and tags of one or all partitions.
   *
   * @param partitionId a partition, or null for all
   * @return the listing
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
   * Statistics of every partition and the allocator.
   *
   * @return the statistics
   */
  ControllerStatistics statistics();

  /**
   * A complete copy of the controller's state, for a checkpoint (taken under one lock).
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
   * Replaces all state with a snapshot from {@link #snapshotState()}.
   *
   * @param state the snapshot
   * @throws org.transferqueue.TqException {@code INVALID_CONFIGURATION} when the state belongs to
   *     another sampler type; nothing changes then
   */
  void restoreState(ControllerState state);
}
