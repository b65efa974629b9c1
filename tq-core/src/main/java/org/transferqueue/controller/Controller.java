package org.transferqueue.controller;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.transferqueue.Clock;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.MetaValues;
import org.transferqueue.sampler.SampleResult;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.SamplerState;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.sampler.SamplingRequest;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.sampler.TokenBudgetSampler;

/**
 * The in-process controller: the single authority over partitions, global indexes, production and
 * consumption status, field schemas, tags, keys and the sampler.
 *
 * <h2>Design note (concurrency)</h2>
 *
 * <p>All mutable state (the partitions and the index allocator in {@code ControllerTables}, the
 * sampler and its caches, the controller id) is guarded by one {@link ReentrantLock}; every public
 * operation runs entirely under it, so each operation is atomic and linearises at the moment it
 * takes the lock. Samplers run inside the critical section. A blocking fetch that cannot be served
 * waits on a condition of that lock with its deadline: waiting releases the lock, so notifications,
 * queries, clears and other fetches proceed meanwhile. A fetch cannot be served while fewer than
 * its batch size of samples are ready, or while the sampler returns nothing from what is ready (a
 * {@code GrpoGroupNSampler} that finds no complete group). Production updates, consumption resets,
 * clears, restores and sampler replacement signal the condition; a waiting fetch also wakes once
 * per {@link ControllerOptions#checkInterval()}, for samplers whose answer depends on time. A woken
 * fetch re-scans (an O(1) size check of the maintained ready set, then the sampler once enough
 * samples are ready) and, at the deadline, checks once more before failing with {@link
 * DeadlineExceededException}.
 *
 * <p>Requests are validated before any state changes, so a rejected request leaves no trace: every
 * partition id, task name, field name and key argument must follow {@link Names} (non-empty, valid
 * Unicode; a partition id may be null only where null means "every partition"), else the request
 * fails with {@link ErrorCode#INVALID_ARGUMENT}, whether it came from this process or from a remote
 * client. Any failure reaches the caller as a {@link TqException}: unexpected runtime exceptions
 * (for example from a user sampler) are wrapped with {@link ErrorCode#INTERNAL} or {@link
 * ErrorCode#INVALID_ARGUMENT}, and the controller keeps serving.
 *
 * <h2>Cost</h2>
 *
 * <p>A fetch costs O(batch x fields) plus the sampler's own work: ready sets per (task, field set)
 * are maintained incrementally by notifications, consumption, resets and clears, and the sampler
 * sees them as a lazy ascending list. A notification costs O(indexes x (fields + ready sets)).
 * Force fetch, status queries and statistics are O(partition).
 *
 * <pre>{@code
 * Controller controller = new Controller(ControllerOptions.defaults());
 * BatchMeta slots = controller.getMetadata(GetMetadataRequest.insert("train", fields, 32));
 * // ... storage stores the data, then notifies:
 * controller.updateProductionStatus(ProductionUpdate.of("train", slots.globalIndexes(), schema));
 * BatchMeta batch = controller.getMetadata(GetMetadataRequest.fetch("train", fields, "actor", 8));
 * }</pre>
 */
public final class Controller implements ControllerApi {
  private static final System.Logger LOG = System.getLogger(Controller.class.getName());

  /** Serves every fetch that carries a token budget. */
  private static final Sampler TOKEN_BUDGET_SAMPLER = new TokenBudgetSampler();

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition stateChanged = lock.newCondition();
  private final ControllerOptions config;
  private final Clock clock;

  // Guarded by lock.
  private final ControllerTables tables;
  private final Map<String, Partition> partitions;
  private Sampler sampler;
  private String controllerId;

  // Written by whoever starts the process's metrics endpoint, read by any request thread.
  private volatile String metricsEndpoint;

  /**
   * Creates a controller with the system clock and the sequential sampler.
   *
   * @param config the settings
   */
  public Controller(ControllerOptions config) {
    this(config, new SequentialSampler(), Clock.SYSTEM);
  }

  /**
   * Creates a controller.
   *
   * @param config the settings
   * @param sampler the sampler; the controller calls it under its lock
   * @param clock the time source
   */
  public Controller(ControllerOptions config, Sampler sampler, Clock clock) {
    this.config = Objects.requireNonNull(config, "config");
    this.sampler = Objects.requireNonNull(sampler, "sampler");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.tables = new ControllerTables(config, clock);
    this.partitions = tables.partitions;
    this.controllerId =
        "TQ_CONTROLLER_" + String.format("%08x", ThreadLocalRandom.current().nextInt());
  }

  /**
   * The settings this controller runs with.
   *
   * @return the configuration
   */
  public ControllerOptions config() {
    return config;
  }

  /**
   * The controller's id; restored from checkpoints.
   *
   * @return the id
   */
  public String controllerId() {
    return locked(() -> controllerId);
  }

  // ---- partitions ---------------------------------------------------------------------------

  /**
   * Creates a partition and reserves its pre-allocated indexes.
   *
   * @param partitionId a non-empty name
   * @return true if created, false if it already existed
   */
  public boolean createPartition(String partitionId) {
    Names.checkPartitionId(partitionId);
    return locked(
        () -> {
          if (partitions.containsKey(partitionId)) {
            return false;
          }
          tables.createPartition(partitionId);
          return true;
        });
  }

  /**
   * All partition ids in creation order.
   *
   * @return the ids
   */
  public List<String> listPartitions() {
    return locked(() -> List.copyOf(partitions.keySet()));
  }

  /**
   * Every index the partition owns, active and pre-allocated.
   *
   * @param partitionId the partition
   * @return the indexes ascending; empty for an unknown partition
   */
  public IndexSet getPartitionIndexRange(String partitionId) {
    Names.checkPartitionId(partitionId);
    return locked(() -> tables.allocator.indexesOf(partitionId));
  }

  /**
   * A deep copy of one partition's state.
   *
   * @param partitionId the partition
   * @return the state, or empty if unknown
   */
  public Optional<PartitionState> partitionSnapshot(String partitionId) {
    return locked(() -> Optional.ofNullable(partitions.get(partitionId)).map(Partition::snapshot));
  }

  // ---- production ---------------------------------------------------------------------------

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
  public void updateProductionStatus(ProductionUpdate update) {
    Objects.requireNonNull(update, "update");
    locked(
        () -> {
          int[] indexes = new int[update.indexes().size()];
          for (int i = 0; i < indexes.length; i++) {
            indexes[i] = (int) (long) update.indexes().get(i);
            tables.requireGeneration(
                update.partitionId(), indexes[i], update.generations().get(i), "written");
          }
          Partition partition = tables.requirePartition(update.partitionId());
          for (int i = 0; i < indexes.length; i++) {
            if (!partition.owns(indexes[i])) {
              throw new TqException(
                  ErrorCode.INVALID_ARGUMENT,
                  "index=" + indexes[i] + " is not owned by partition=" + update.partitionId());
            }
          }
          Map<Integer, Map<String, Object>> backend = new LinkedHashMap<>();
          update.backendMeta().forEach((k, v) -> backend.put((int) (long) k, v));
          partition.updateProduction(indexes, update.fields(), backend);
          stateChanged.signalAll();
          return null;
        });
  }

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
  public void checkPut(
      String partitionId, Map<String, FieldSchema> fields, long[] indexes, long[] generations) {
    Names.checkPartitionId(partitionId);
    Objects.requireNonNull(fields, "fields");
    Names.checkFieldNames(fields.keySet());
    if (indexes.length != generations.length) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          generations.length + " generations for " + indexes.length + " global indexes");
    }
    locked(
        () -> {
          for (int i = 0; i < indexes.length; i++) {
            int index = IndexAllocator.checkIndex(indexes[i]);
            tables.requireGeneration(partitionId, index, generations[i], "written");
          }
          Partition partition = tables.partition(partitionId);
          if (partition == null) {
            if (indexes.length > 0) {
              tables.requirePartition(partitionId);
            }
            return null;
          }
          for (long index : indexes) {
            if (!partition.owns((int) index)) {
              throw new TqException(
                  ErrorCode.INVALID_ARGUMENT,
                  "index=" + index + " is not owned by partition=" + partitionId);
            }
          }
          partition.checkSchema(fields, indexes.length);
          return null;
        });
  }

  /**
   * The production status of a partition for some fields.
   *
   * @param partitionId the partition
   * @param fields the fields, in the column order wanted
   * @return the status; empty for an unknown partition, an empty field list or any unregistered
   *     field
   */
  public Optional<ProductionStatus> getProductionStatus(String partitionId, List<String> fields) {
    Names.checkPartitionId(partitionId);
    Objects.requireNonNull(fields, "fields");
    Names.checkFieldNames(fields);
    return locked(
        () -> {
          Partition partition = partitions.get(partitionId);
          if (partition == null || fields.isEmpty()) {
            return Optional.empty();
          }
          IndexSet members = partition.members();
          List<IndexSet> columns = new ArrayList<>();
          for (String name : fields) {
            FieldColumn column = partition.field(name);
            if (column == null) {
              return Optional.empty();
            }
            columns.add(IndexSet.copyOf(column.produced));
          }
          return Optional.of(new ProductionStatus(partitionId, fields, members, columns));
        });
  }

  /**
   * The samples ready for a task on some fields: active, produced for every field, unconsumed.
   * Registers the task.
   *
   * @param partitionId the partition
   * @param fields at least one field
   * @param taskName the task
   * @return the ready indexes; empty for an unknown partition or unregistered field
   */
  public IndexSet scanReady(String partitionId, List<String> fields, String taskName) {
    if (fields == null || fields.isEmpty() || taskName == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "scan needs fields and a task: fields=" + fields + " task=" + taskName);
    }
    Names.checkPartitionId(partitionId);
    Names.checkFieldNames(fields);
    Names.checkTaskName(taskName);
    return locked(
        () -> {
          Partition partition = partitions.get(partitionId);
          if (partition == null) {
            return IndexSet.empty();
          }
          ReadySet ready = partition.readySet(taskName, Partition.sortedFields(fields));
          return IndexSet.of(ready.view().stream().mapToLong(Long::longValue).toArray());
        });
  }

  // ---- consumption --------------------------------------------------------------------------

  /**
   * The consumption status of a partition for a task; registers the task.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @return the status, or empty for an unknown partition
   */
  public Optional<ConsumptionStatus> getConsumptionStatus(String partitionId, String taskName) {
    Names.checkPartitionId(partitionId);
    Names.checkTaskName(taskName);
    return locked(
        () -> {
          Partition partition = partitions.get(partitionId);
          if (partition == null) {
            return Optional.empty();
          }
          IndexSet members = partition.members();
          BitSet consumed = (BitSet) partition.task(taskName).clone();
          consumed.and(members.toBitSet());
          return Optional.of(
              new ConsumptionStatus(partitionId, taskName, members, IndexSet.copyOf(consumed)));
        });
  }

  /**
   * Marks samples unconsumed again so they can be fetched anew.
   *
   * @param partitionId the partition; unknown is a no-op
   * @param taskName the task, or null for every task; an unknown task is a no-op and is not
   *     registered
   * @return whether some sample was marked consumed (by the task, or by any task for null) and now
   *     is not
   */
  public boolean resetConsumption(String partitionId, String taskName) {
    Names.checkPartitionId(partitionId);
    if (taskName != null) {
      Names.checkTaskName(taskName);
    }
    return locked(
        () -> {
          Partition partition = partitions.get(partitionId);
          if (partition == null || (taskName != null && !partition.hasTask(taskName))) {
            return false;
          }
          boolean reset = partition.resetConsumption(taskName);
          stateChanged.signalAll();
          return reset;
        });
  }

  // ---- getMetadata --------------------------------------------------------------------------

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
  public BatchMeta getMetadata(GetMetadataRequest request) {
    Objects.requireNonNull(request, "request");
    return switch (request.mode()) {
      case INSERT -> locked(() -> tables.insert(request));
      case FORCE_FETCH ->
          locked(() -> tables.forceFetch(request.partitionId(), request.fields(), false));
      case FETCH -> fetch(request);
    };
  }

  /**
   * The force-fetch metadata of a partition over all its registered fields.
   *
   * @param partitionId the partition
   * @return the metadata, or empty for an unknown partition
   */
  public Optional<BatchMeta> getPartitionMeta(String partitionId) {
    Names.checkPartitionId(partitionId);
    return locked(
        () -> {
          Partition partition = partitions.get(partitionId);
          return partition == null
              ? Optional.empty()
              : Optional.of(tables.forceFetch(partitionId, partition.fieldNames(), true));
        });
  }

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
  public BatchMeta getSampleMeta(String partitionId, List<Long> indexes, List<String> fields) {
    if (indexes == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "indexes must not be null: partition_id=" + partitionId);
    }
    return locked(() -> tables.sampleMeta(partitionId, indexes, fields));
  }

  private BatchMeta fetch(GetMetadataRequest request) {
    long timeoutNs =
        (request.timeout() != null ? request.timeout() : config.fetchTimeout()).toNanos();
    List<String> sortedFields = Partition.sortedFields(request.fields());
    long checkIntervalNs = config.checkInterval().toNanos();
    lock.lock();
    try {
      long deadline = clock.nanoTime() + timeoutNs;
      while (true) {
        FetchOutcome outcome = tryFetchLocked(request, sortedFields);
        if (outcome.meta() != null) {
          return outcome.meta();
        }
        if (config.pollingMode()) {
          return BatchMeta.empty();
        }
        long remaining = deadline - clock.nanoTime();
        if (remaining <= 0) {
          throw new DeadlineExceededException(
              "Timeout while waiting for sufficient data: partition="
                  + request.partitionId()
                  + " task="
                  + request.taskName()
                  + " fields="
                  + request.fields()
                  + " after "
                  + Duration.ofNanos(timeoutNs)
                  + ". Required: "
                  + (request.tokenBudget() != null
                      ? "token_budget=" + request.tokenBudget()
                      : request.batchSize())
                  + ", Available: "
                  + outcome.available()
                  + (outcome.declined()
                      ? " (the sampler "
                          + samplerFor(request).name()
                          + " served no batch from them)"
                      : ""));
        }
        // Woken by every state change; the check interval bounds the sleep for samplers whose
        // answer changes with time although nothing in the controller does.
        stateChanged.awaitNanos(Math.min(remaining, checkIntervalNs));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TqException(
          ErrorCode.ILLEGAL_STATE, "interrupted while waiting for data: " + request, e);
    } catch (TqException e) {
      throw e;
    } catch (RuntimeException e) {
      throw wrap(e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * The result of one fetch attempt: a batch, or none and the number of ready samples.
   *
   * @param meta the batch, or null when the fetch cannot be served now
   * @param available the number of ready samples
   * @param declined whether enough samples were ready but the sampler returned nothing
   */
  private record FetchOutcome(BatchMeta meta, int available, boolean declined) {}

  private FetchOutcome tryFetchLocked(GetMetadataRequest request, List<String> sortedFields) {
    Partition partition = partitions.get(request.partitionId());
    if (partition == null) {
      return new FetchOutcome(null, 0, false);
    }
    ReadySet ready = partition.readySet(request.taskName(), sortedFields);
    Sampler chosen = samplerFor(request);
    SamplingConfig samplingConfig = request.samplingConfig();
    if (request.tokenBudget() != null) {
      Map<String, Object> options = new LinkedHashMap<>(samplingConfig.options());
      options.put(TokenBudgetSampler.TOKEN_BUDGET_OPTION, request.tokenBudget());
      samplingConfig =
          new SamplingConfig(samplingConfig.dpRank(), samplingConfig.batchIndex(), options);
    }
    boolean cached =
        chosen.hasCachedResult(request.partitionId(), request.taskName(), samplingConfig);
    if (!cached && ready.size() < minimumReady(request)) {
      return new FetchOutcome(null, ready.size(), false);
    }
    SampleResult result =
        chosen.sample(
            new SamplingRequest(
                ready.view(),
                request.batchSize() == null
                    ? GetMetadataRequest.MAX_BATCH_SIZE
                    : request.batchSize(),
                request.partitionId(),
                request.taskName(),
                samplingConfig,
                index -> {
                  Map<String, Object> tags = partition.tags(IndexAllocator.checkIndex(index));
                  return tags == null ? Map.of() : tags;
                },
                index -> partition.insertPosition(IndexAllocator.checkIndex(index))));
    if (result.isEmpty()) {
      // "Cannot serve now", as when too few samples are ready: polling answers an empty batch, a
      // blocking fetch waits for a change that may let the sampler serve (a group completing).
      return new FetchOutcome(null, ready.size(), true);
    }
    checkMembers(partition, result.sampled(), "sampled");
    checkMembers(partition, result.consumed(), "consumed");
    List<Long> sampled = result.sampled();
    List<Long> consumed = result.consumed();
    if (partition.hasClearing()) {
      // A sampler's cached answer may name samples whose clear began since: never hand them out.
      sampled = withoutClearing(partition, sampled);
      consumed = withoutClearing(partition, consumed);
      if (sampled.isEmpty()) {
        return new FetchOutcome(null, ready.size(), true);
      }
    }
    partition.markConsumed(request.taskName(), consumed);
    long[] indexes = sampled.stream().mapToLong(Long::longValue).toArray();
    BatchMeta.Builder builder = tables.rows(partition, indexes, request.fields()).allProduced();
    ControllerTables.addSchemas(builder, partition, request.fields(), indexes);
    return new FetchOutcome(builder.build(), ready.size(), false);
  }

  /** The sampler of a fetch: the configured one, or the token-budget sampler for a budget. */
  private Sampler samplerFor(GetMetadataRequest request) {
    return request.tokenBudget() == null ? sampler : TOKEN_BUDGET_SAMPLER;
  }

  /**
   * The ready samples a fetch needs before its sampler is asked: its batch size, or one for a
   * token-budget fetch (whose sampler decides how many make a batch).
   */
  private static int minimumReady(GetMetadataRequest request) {
    return request.tokenBudget() != null ? 1 : request.batchSize();
  }

  private static List<Long> withoutClearing(Partition partition, List<Long> indexes) {
    List<Long> kept = new ArrayList<>(indexes.size());
    for (Long index : indexes) {
      if (!partition.isClearing((int) (long) index)) {
        kept.add(index);
      }
    }
    return kept;
  }

  private void checkMembers(Partition partition, List<Long> indexes, String what) {
    for (long index : indexes) {
      if (index < 0 || index > IndexAllocator.MAX_INDEX || !partition.isActive((int) index)) {
        throw new TqException(
            ErrorCode.ILLEGAL_STATE,
            "sampler "
                + sampler.name()
                + " "
                + what
                + " index="
                + index
                + " which is not an active sample of partition="
                + partition.id);
      }
    }
  }

  // ---- tags ---------------------------------------------------------------------------------

  /**
   * Writes tags (custom metadata) atomically, merging or replacing per sample.
   *
   * @param update the tags to write; unknown partitions and inactive indexes are skipped
   * @return the number of samples whose tags were written
   */
  public int setTags(TagUpdate update) {
    Objects.requireNonNull(update, "update");
    return locked(
        () -> {
          int written = 0;
          for (Map.Entry<String, Map<Long, Map<String, Object>>> e : update.tags().entrySet()) {
            Partition partition = partitions.get(e.getKey());
            if (partition == null) {
              LOG.log(
                  System.Logger.Level.DEBUG, "tags for unknown partition {0} skipped", e.getKey());
              continue;
            }
            for (Map.Entry<Long, Map<String, Object>> r : e.getValue().entrySet()) {
              int index = (int) (long) r.getKey();
              if (!partition.isActive(index)) {
                continue;
              }
              Map<String, Object> record =
                  update.mode() == TagUpdate.Mode.MERGE
                      ? MetaValues.merge(partition.tags(index), r.getValue())
                      : r.getValue();
              partition.putTags(index, record);
              written++;
            }
          }
          return written;
        });
  }

  /**
   * The tags of some samples of a partition.
   *
   * @param partitionId the partition
   * @param indexes the samples
   * @return only the samples that have tags, in request order; empty for an unknown partition
   * @throws TqException {@code INVALID_ARGUMENT} when {@code indexes} is null
   */
  public Map<Long, Map<String, Object>> getTags(String partitionId, List<Long> indexes) {
    return perSample(partitionId, indexes, Partition::tags);
  }

  /**
   * The backend metadata of some samples, restricted to some fields.
   *
   * @param partitionId the partition
   * @param indexes the samples
   * @param fields the fields to keep, or null for every field
   * @return only the samples that have backend metadata; empty for an unknown partition
   * @throws TqException {@code INVALID_ARGUMENT} when {@code indexes} is null
   */
  public Map<Long, Map<String, Object>> getBackendMeta(
      String partitionId, List<Long> indexes, List<String> fields) {
    if (fields != null) {
      Names.checkFieldNames(fields);
    }
    return perSample(
        partitionId,
        indexes,
        (partition, index) -> {
          Map<String, Object> meta = partition.backendMeta(index);
          if (meta == null) {
            return null;
          }
          Map<String, Object> filtered = new LinkedHashMap<>();
          meta.forEach(
              (f, v) -> {
                if (fields == null || fields.contains(f)) {
                  filtered.put(f, v);
                }
              });
          return filtered;
        });
  }

  /**
   * One record per sample that has one, read under the lock.
   *
   * @param record the sample's record in its partition, or null when it has none
   * @return the records by global index, in request order; empty for an unknown partition
   */
  private Map<Long, Map<String, Object>> perSample(
      String partitionId,
      List<Long> indexes,
      BiFunction<Partition, Integer, Map<String, Object>> record) {
    // Checked before the lock: a null argument is the caller's error, not a broken invariant.
    Names.checkPartitionId(partitionId);
    if (indexes == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "indexes must not be null: partition_id=" + partitionId);
    }
    return locked(
        () -> {
          Map<Long, Map<String, Object>> out = new LinkedHashMap<>();
          Partition partition = partitions.get(partitionId);
          if (partition != null) {
            for (long index : indexes) {
              Map<String, Object> value = record.apply(partition, IndexAllocator.checkIndex(index));
              if (value != null) {
                out.put(index, value);
              }
            }
          }
          return out;
        });
  }

  // ---- clearing -----------------------------------------------------------------------------

  /**
   * Clears a whole partition: its samples, status and keys; releases every index it owns to the
   * pool and drops the sampler's cache of it. Unknown partitions are ignored (idempotent).
   *
   * @param partitionId the partition
   * @return true if the partition existed
   */
  public boolean clearPartition(String partitionId) {
    Names.checkPartitionId(partitionId);
    return locked(
        () -> {
          if (!tables.clearPartition(partitionId)) {
            return false;
          }
          sampler.clearCache(partitionId);
          stateChanged.signalAll();
          return true;
        });
  }

  /**
   * Marks samples as being cleared, the first step of a clear: from now on no fetch returns them
   * (they leave the ready sets, a sampler's cached answer is filtered, a force fetch omits them),
   * while their metadata stays for the removal of their data; {@link #clearSamples} then frees
   * them. Pairs that name no active sample at its current generation are ignored (idempotent).
   *
   * @param request the (index, partition) pairs
   * @return the number of samples newly marked
   */
  public int markClearing(ClearSamplesRequest request) {
    Objects.requireNonNull(request, "request");
    return locked(() -> tables.markClearing(request));
  }

  /**
   * Clears individual samples and releases their indexes to the pool. Only active samples of
   * existing partitions are cleared; everything else is ignored, so repeating a request is safe.
   *
   * @param request the (index, partition) pairs
   * @return the number of samples cleared
   */
  public int clearSamples(ClearSamplesRequest request) {
    Objects.requireNonNull(request, "request");
    return locked(
        () -> {
          int cleared = tables.clearSamples(request);
          if (cleared > 0) {
            stateChanged.signalAll();
          }
          return cleared;
        });
  }

  // ---- keys ---------------------------------------------------------------------------------

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
  public BatchMeta resolveKeys(String partitionId, List<String> keys, boolean create) {
    checkKeys(partitionId, keys);
    return locked(() -> tables.resolveKeys(partitionId, keys, create));
  }

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
  public KeyResolution resolveKeysForPut(
      String partitionId, List<String> keys, Map<String, FieldSchema> fields, int sampleCount) {
    Objects.requireNonNull(fields, "fields");
    checkKeys(partitionId, keys);
    Names.checkFieldNames(fields.keySet());
    return locked(
        () -> {
          Partition partition = tables.partition(partitionId);
          if (partition != null && !fields.isEmpty()) {
            partition.checkSchema(fields, sampleCount);
          }
          List<Long> created = new ArrayList<>();
          BatchMeta meta = tables.resolveKeys(partitionId, keys, true, created::add);
          return new KeyResolution(meta, created);
        });
  }

  private static void checkKeys(String partitionId, List<String> keys) {
    Names.checkPartitionId(partitionId);
    Names.checkKeys(keys);
  }

  /**
   * The keys of some samples.
   *
   * @param partitionId the partition
   * @param indexes the samples
   * @return the key of each sample in order, null where a sample has no key; empty for an unknown
   *     partition
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a null or empty list
   */
  public List<String> resolveIndexes(String partitionId, List<Long> indexes) {
    Names.checkPartitionId(partitionId);
    if (indexes == null || indexes.isEmpty()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "global indexes must be a non-empty list: " + indexes);
    }
    return locked(() -> tables.resolveIndexes(partitionId, indexes));
  }

  /**
   * The keys and tags of one or all partitions.
   *
   * @param partitionId a partition, or null for all
   * @return the listing; empty with an explanatory message for an unknown partition
   */
  public KvListing listKeys(String partitionId) {
    if (partitionId != null) {
      Names.checkPartitionId(partitionId);
    }
    return locked(() -> tables.listKeys(partitionId));
  }

  // ---- statistics, sampler, checkpoint -------------------------------------------------------

  /**
   * Statistics of one partition.
   *
   * @param partitionId the partition
   * @return the statistics, or empty if unknown
   */
  public Optional<PartitionStatistics> partitionStatistics(String partitionId) {
    Names.checkPartitionId(partitionId);
    return locked(
        () -> Optional.ofNullable(partitions.get(partitionId)).map(Partition::statistics));
  }

  /**
   * Statistics of every partition and the allocator, taken atomically.
   *
   * @return the statistics
   */
  public ControllerStatistics statistics() {
    return locked(tables::statistics);
  }

  /**
   * Replaces the sampler; the old sampler's cache is discarded and waiting fetches re-check.
   *
   * @param newSampler the sampler
   */
  public void registerSampler(Sampler newSampler) {
    Objects.requireNonNull(newSampler, "sampler");
    locked(
        () -> {
          sampler = newSampler;
          stateChanged.signalAll();
          return null;
        });
  }

  /**
   * A complete copy of the controller's state, for a checkpoint.
   *
   * @return the state
   */
  @Override
  public ControllerState snapshotState() {
    return locked(
        () ->
            new ControllerState(
                controllerId,
                tables.snapshotPartitions(),
                tables.allocator.snapshot(),
                sampler.name(),
                sampler.saveState()));
  }

  /**
   * Replaces all state with a snapshot: partitions created since disappear, the controller id and
   * the sampler's state are restored. Waiting fetches re-check.
   *
   * @param state a snapshot from {@link #snapshotState()}
   * @throws TqException {@link ErrorCode#INVALID_CONFIGURATION} when the state belongs to another
   *     sampler type; nothing changes then
   */
  @Override
  public void restoreState(ControllerState state) {
    Objects.requireNonNull(state, "state");
    locked(
        () -> {
          if (!sampler.name().equals(state.samplerType())) {
            throw new TqException(
                ErrorCode.INVALID_CONFIGURATION,
                "checkpoint of sampler '"
                    + state.samplerType()
                    + "' cannot be loaded into '"
                    + sampler.name()
                    + "'");
          }
          if (state.samplerState() instanceof SamplerState samplerState) {
            sampler.loadState(samplerState);
          }
          tables.restore(state.partitions(), state.allocator());
          controllerId = state.controllerId();
          stateChanged.signalAll();
          return null;
        });
  }

  /**
   * Records where this controller's process serves its Prometheus endpoint; {@link
   * #metricsEndpoint()} answers it to every client from then on.
   *
   * @param address {@code host:port} that other processes can reach, or null when the endpoint
   *     stopped
   */
  public void publishMetricsEndpoint(String address) {
    this.metricsEndpoint = address;
  }

  @Override
  public Optional<String> metricsEndpoint() {
    return Optional.ofNullable(metricsEndpoint);
  }

  // ---- plumbing -----------------------------------------------------------------------------

  private <T> T locked(Supplier<T> body) {
    lock.lock();
    try {
      return body.get();
    } catch (TqException e) {
      throw e;
    } catch (RuntimeException e) {
      throw wrap(e);
    } finally {
      lock.unlock();
    }
  }

  private static TqException wrap(RuntimeException e) {
    ErrorCode code =
        e instanceof IllegalArgumentException ? ErrorCode.INVALID_ARGUMENT : ErrorCode.INTERNAL;
    return new TqException(code, e.getClass().getSimpleName() + ": " + e.getMessage(), e);
  }

  /** The number of fetches currently waiting for data (for tests and diagnostics). */
  int waitingFetches() {
    lock.lock();
    try {
      return lock.getWaitQueueLength(stateChanged);
    } finally {
      lock.unlock();
    }
  }

  /** Runs invariant checks over the whole state (tests only); throws AssertionError on failure. */
  void checkInvariants() {
    locked(
        () -> {
          tables.checkInvariants();
          return null;
        });
  }
}
