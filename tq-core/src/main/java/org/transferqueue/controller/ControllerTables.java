package org.transferqueue.controller;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.LongConsumer;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.MetaValues;
import org.transferqueue.meta.ProductionUpdate;

/**
 * The controller's tables: every partition and the global index allocator, with every query and
 * update of them (production and consumption status, tags, backend metadata, keys, inserts, clears,
 * statistics, snapshots) and the assembly of {@link BatchMeta} replies. {@link Controller}
 * validates a request's arguments, takes its lock and calls one method here; {@link SamplingStep}
 * serves fetches from the ready sets.
 *
 * <p>Not thread-safe: owned by {@link Controller}, which calls it only under its lock. Operations
 * validate before they change anything, so a rejected request leaves the tables as they were.
 */
final class ControllerTables {
  private static final System.Logger LOG = System.getLogger(Controller.class.getName());

  private final ControllerOptions config;
  private final Clock clock;
  private final IndexAllocator allocator = new IndexAllocator();
  private final LinkedHashMap<String, Partition> partitions = new LinkedHashMap<>();

  ControllerTables(ControllerOptions config, Clock clock) {
    this.config = config;
    this.clock = clock;
  }

  Partition partition(String partitionId) {
    return partitions.get(partitionId);
  }

  /** All partition ids in creation order. */
  List<String> partitionIds() {
    return List.copyOf(partitions.keySet());
  }

  /** Every index a partition owns, active and pre-allocated; empty for an unknown partition. */
  IndexSet indexesOf(String partitionId) {
    return allocator.indexesOf(partitionId);
  }

  /** A deep copy of one partition's state, or empty if unknown. */
  Optional<PartitionState> partitionSnapshot(String partitionId) {
    return Optional.ofNullable(partitions.get(partitionId)).map(Partition::snapshot);
  }

  /** Statistics of one partition, or empty if unknown. */
  Optional<PartitionStatistics> partitionStatistics(String partitionId) {
    return Optional.ofNullable(partitions.get(partitionId)).map(Partition::statistics);
  }

  /** Creates a partition unless it exists; true if created. */
  boolean createIfAbsent(String partitionId) {
    if (partitions.containsKey(partitionId)) {
      return false;
    }
    createPartition(partitionId);
    return true;
  }

  Partition createPartition(String partitionId) {
    return createPartition(partitionId, clock.epochMillis(), config.preallocSampleNum());
  }

  /**
   * Creates a partition as it was created once (journal replay): with its creation time and the
   * number of indexes it reserved then, whatever the clock and the configuration say now.
   */
  Partition createPartition(String partitionId, long createdAtMillis, int preallocSampleNum) {
    int[] reserved =
        preallocSampleNum > 0 ? allocator.allocate(partitionId, preallocSampleNum) : new int[0];
    Partition partition = new Partition(partitionId, createdAtMillis);
    partition.registerPreAllocated(reserved);
    partitions.put(partitionId, partition);
    return partition;
  }

  /**
   * Reserves the samples of an insert: pre-allocated indexes first (smallest first), then the
   * allocator's (freed ones first, then a fresh range), and records them, in that row order, as one
   * insert of the partition ({@link Partition#recordInsert}). An insert's indexes need not be
   * adjacent: prompt groups are cut from its rows, not from its indexes, so the allocation order is
   * the same whatever the sampler.
   */
  BatchMeta insert(GetMetadataRequest request) {
    Partition partition = partitions.get(request.partitionId());
    if (partition == null) {
      partition = createPartition(request.partitionId());
    }
    int batchSize = request.batchSize();
    int fromPool = batchSize - Math.min(batchSize, partition.preAllocatedCount());
    int[] fresh = fromPool > 0 ? allocator.allocate(request.partitionId(), fromPool) : new int[0];
    int[] activated = partition.activatePreAllocated(batchSize);
    partition.activate(fresh);
    long[] indexes = new long[batchSize];
    for (int i = 0; i < activated.length; i++) {
      indexes[i] = activated[i];
    }
    for (int i = 0; i < fresh.length; i++) {
      indexes[activated.length + i] = fresh[i];
    }
    partition.recordInsert(indexes);
    BatchMeta.Builder builder = rows(partition, indexes, request.fields());
    for (String name : request.fields()) {
      FieldColumn column = partition.field(name);
      FieldSchema schema = column == null ? null : column.export(indexes);
      builder.field(name, schema == null ? FieldSchema.placeholder() : schema);
    }
    return builder.build();
  }

  BatchMeta forceFetch(String partitionId, List<String> fields, boolean includeClearing) {
    Partition partition = requirePartition(partitionId);
    long[] members = partition.members().toArray();
    if (!includeClearing && partition.hasClearing()) {
      members =
          Arrays.stream(members).filter(index -> !partition.isClearing((int) index)).toArray();
    }
    return describe(partition, members, fields);
  }

  /** As {@link #forceFetch} without the clearing samples, or empty for an unknown partition. */
  Optional<BatchMeta> forceFetchIfPresent(String partitionId, List<String> fields) {
    return partitions.containsKey(partitionId)
        ? Optional.of(forceFetch(partitionId, fields, false))
        : Optional.empty();
  }

  /**
   * The current metadata of those of {@code indexes} that are active samples of the partition, in
   * request order; the others are left out.
   */
  BatchMeta sampleMeta(String partitionId, List<Long> indexes, List<String> fields) {
    Partition partition = partitions.get(partitionId);
    if (partition == null) {
      return BatchMeta.empty();
    }
    long[] found = new long[indexes.size()];
    int n = 0;
    for (Long index : indexes) {
      if (index != null
          && index >= 0
          && index <= IndexAllocator.MAX_INDEX
          && partition.isActive((int) (long) index)) {
        found[n++] = index;
      }
    }
    return describe(
        partition, Arrays.copyOf(found, n), fields == null ? partition.fieldNames() : fields);
  }

  /** The metadata of samples of a partition: the registered ones of {@code fields} and status. */
  private BatchMeta describe(Partition partition, long[] indexes, List<String> fields) {
    List<String> registered = new ArrayList<>();
    for (String name : fields) {
      if (partition.field(name) != null && !registered.contains(name)) {
        registered.add(name);
      }
    }
    List<Boolean> status = new ArrayList<>(indexes.length);
    for (long index : indexes) {
      status.add(partition.isProduced((int) index, registered));
    }
    BatchMeta.Builder builder = rows(partition, indexes, fields).productionStatus(status);
    addSchemas(builder, partition, registered, indexes);
    return builder.build();
  }

  /** Index, generation, partition, tag and backend-metadata columns of a batch. */
  BatchMeta.Builder rows(Partition partition, long[] indexes, List<String> fields) {
    List<Map<String, Object>> tags = new ArrayList<>(indexes.length);
    List<Map<String, Object>> backend = new ArrayList<>(indexes.length);
    Set<String> wanted = new HashSet<>(fields);
    for (long index : indexes) {
      Map<String, Object> t = partition.tags((int) index);
      tags.add(t == null ? Map.of() : t);
      Map<String, Object> b = partition.backendMeta((int) index);
      if (b == null) {
        backend.add(Map.of());
      } else {
        Map<String, Object> filtered = new LinkedHashMap<>();
        b.forEach(
            (field, value) -> {
              if (wanted.contains(field)) {
                filtered.put(field, value);
              }
            });
        backend.add(filtered);
      }
    }
    return BatchMeta.builder()
        .globalIndexes(indexes)
        .generations(allocator.generations(indexes))
        .partitionId(partition.id)
        .tags(tags)
        .backendMeta(backend);
  }

  static void addSchemas(
      BatchMeta.Builder builder, Partition partition, List<String> fields, long[] indexes) {
    for (String name : fields) {
      FieldColumn column = partition.field(name);
      FieldSchema schema = column == null ? null : column.export(indexes);
      if (schema != null) {
        builder.field(name, schema);
      }
    }
  }

  BatchMeta resolveKeys(String partitionId, List<String> keys, boolean create) {
    return resolveKeys(partitionId, keys, create, null);
  }

  /**
   * As {@link #resolveKeys(String, List, boolean)}, also reporting the global indexes of the
   * samples it created.
   *
   * @param created receives the created samples' global indexes in request order; may be null
   */
  BatchMeta resolveKeys(
      String partitionId, List<String> keys, boolean create, LongConsumer created) {
    Partition partition = partitions.get(partitionId);
    if (partition == null) {
      if (!create) {
        return BatchMeta.empty();
      }
      partition = createPartition(partitionId);
    }
    // Positions in keys of the keys without a sample, then the index of every key's sample.
    int[] missing = new int[keys.size()];
    int n = 0;
    for (int i = 0; i < keys.size(); i++) {
      if (partition.indexOfKey(keys.get(i)) == null) {
        missing[n++] = i;
      }
    }
    if (create && n > 0) {
      int fromPool = n - Math.min(n, partition.preAllocatedCount());
      int[] fresh = fromPool > 0 ? allocator.allocate(partitionId, fromPool) : new int[0];
      int[] activated = partition.activatePreAllocated(n);
      partition.activate(fresh);
      long[] inserted = new long[n];
      for (int i = 0; i < n; i++) {
        int index = i < activated.length ? activated[i] : fresh[i - activated.length];
        inserted[i] = index;
        partition.putKey(keys.get(missing[i]), index);
        if (created != null) {
          created.accept(index);
        }
      }
      partition.recordInsert(inserted);
    }
    long[] indexes = new long[keys.size()];
    int found = 0;
    for (String key : keys) {
      Integer index = partition.indexOfKey(key);
      if (index != null) {
        indexes[found++] = index;
      }
    }
    if (found == 0) {
      return BatchMeta.empty();
    }
    if (found < indexes.length) {
      indexes = Arrays.copyOf(indexes, found);
    }
    List<String> common = new ArrayList<>();
    for (String name : partition.fieldNames()) {
      if (partition.isProduced((int) indexes[0], List.of(name))) {
        boolean all = true;
        for (long index : indexes) {
          all &= partition.field(name).produced.get((int) index);
        }
        if (all) {
          common.add(name);
        }
      }
    }
    BatchMeta.Builder builder = rows(partition, indexes, common);
    if (!common.isEmpty()) {
      builder.allProduced();
    }
    addSchemas(builder, partition, common, indexes);
    return builder.build();
  }

  /**
   * Applies a storage notification: every generation current, every index owned by the partition,
   * the schema checked by the partition before anything changes.
   */
  void updateProduction(ProductionUpdate update) {
    int[] indexes = new int[update.indexes().size()];
    for (int i = 0; i < indexes.length; i++) {
      indexes[i] = IndexAllocator.checkIndex(update.indexes().get(i));
      requireGeneration(update.partitionId(), indexes[i], update.generations().get(i), "written");
    }
    Partition partition = requirePartition(update.partitionId());
    for (int index : indexes) {
      requireOwned(partition, index);
    }
    Map<Integer, Map<String, Object>> backend = new LinkedHashMap<>();
    update.backendMeta().forEach((k, v) -> backend.put(IndexAllocator.checkIndex(k), v));
    partition.updateProduction(indexes, update.fields(), backend);
  }

  /** Checks, changing nothing, that {@link #updateProduction} would accept a put. */
  void checkPut(
      String partitionId, Map<String, FieldSchema> fields, long[] indexes, long[] generations) {
    for (int i = 0; i < indexes.length; i++) {
      int index = IndexAllocator.checkIndex(indexes[i]);
      requireGeneration(partitionId, index, generations[i], "written");
    }
    Partition partition = partitions.get(partitionId);
    if (partition == null) {
      if (indexes.length > 0) {
        requirePartition(partitionId);
      }
      return;
    }
    for (long index : indexes) {
      requireOwned(partition, (int) index);
    }
    partition.checkSchema(fields, indexes.length);
  }

  private static void requireOwned(Partition partition, int index) {
    if (!partition.owns(index)) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "index=" + index + " is not owned by partition=" + partition.id);
    }
  }

  /** The production status of some fields; empty for an unknown partition or field, or none. */
  Optional<ProductionStatus> productionStatus(String partitionId, List<String> fields) {
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
  }

  /** The samples ready for a task on some fields; registers the task. */
  IndexSet scanReady(String partitionId, List<String> fields, String taskName) {
    Partition partition = partitions.get(partitionId);
    if (partition == null) {
      return IndexSet.empty();
    }
    ReadySet ready = partition.readySet(taskName, Partition.sortedFields(fields));
    return IndexSet.of(ready.view().stream().mapToLong(Long::longValue).toArray());
  }

  /** The consumption status of a task, or empty for an unknown partition; registers the task. */
  Optional<ConsumptionStatus> consumptionStatus(String partitionId, String taskName) {
    Partition partition = partitions.get(partitionId);
    if (partition == null) {
      return Optional.empty();
    }
    IndexSet members = partition.members();
    BitSet consumed = (BitSet) partition.task(taskName).clone();
    consumed.and(members.toBitSet());
    return Optional.of(
        new ConsumptionStatus(partitionId, taskName, members, IndexSet.copyOf(consumed)));
  }

  /**
   * Marks samples unconsumed again; an unknown partition or task changes nothing.
   *
   * @return whether some sample was marked consumed and now is not
   */
  boolean resetConsumption(String partitionId, String taskName) {
    Partition partition = partitions.get(partitionId);
    if (partition == null || (taskName != null && !partition.hasTask(taskName))) {
      return false;
    }
    return partition.resetConsumption(taskName);
  }

  /** The force-fetch metadata of a partition over all its fields, or empty if unknown. */
  Optional<BatchMeta> partitionMeta(String partitionId) {
    Partition partition = partitions.get(partitionId);
    return partition == null
        ? Optional.empty()
        : Optional.of(forceFetch(partitionId, partition.fieldNames(), true));
  }

  /**
   * Writes tags, merging or replacing per sample; unknown partitions and inactive indexes are
   * skipped.
   *
   * @return the number of samples whose tags were written
   */
  int setTags(TagUpdate update) {
    int written = 0;
    for (Map.Entry<String, Map<Long, Map<String, Object>>> e : update.tags().entrySet()) {
      Partition partition = partitions.get(e.getKey());
      if (partition == null) {
        LOG.log(System.Logger.Level.DEBUG, "tags for unknown partition {0} skipped", e.getKey());
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
  }

  /** The tags of the samples that have any, in request order; empty for an unknown partition. */
  Map<Long, Map<String, Object>> tags(String partitionId, List<Long> indexes) {
    return perSample(partitionId, indexes, Partition::tags);
  }

  /**
   * The backend metadata of the samples that have any, restricted to {@code fields} (null for all),
   * in request order; empty for an unknown partition.
   */
  Map<Long, Map<String, Object>> backendMeta(
      String partitionId, List<Long> indexes, List<String> fields) {
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
   * One record per sample that has one.
   *
   * @param record the sample's record in its partition, or null when it has none
   * @return the records by global index, in request order; empty for an unknown partition
   */
  private Map<Long, Map<String, Object>> perSample(
      String partitionId,
      List<Long> indexes,
      BiFunction<Partition, Integer, Map<String, Object>> record) {
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
  }

  /**
   * Checks a key-value put's schema against an existing partition, then resolves its keys creating
   * missing ones, reporting the created samples.
   */
  KeyResolution resolveKeysForPut(
      String partitionId, List<String> keys, Map<String, FieldSchema> fields, int sampleCount) {
    Partition partition = partitions.get(partitionId);
    if (partition != null && !fields.isEmpty()) {
      partition.checkSchema(fields, sampleCount);
    }
    List<Long> created = new ArrayList<>();
    BatchMeta meta = resolveKeys(partitionId, keys, true, created::add);
    return new KeyResolution(meta, created);
  }

  Partition requirePartition(String partitionId) {
    Partition partition = partitions.get(partitionId);
    if (partition == null) {
      throw new TqException(ErrorCode.UNKNOWN_PARTITION, "Partition " + partitionId + " not found");
    }
    return partition;
  }

  /** Clears a whole partition and releases its indexes; false if it did not exist. */
  boolean clearPartition(String partitionId) {
    Partition partition = partitions.remove(partitionId);
    if (partition == null) {
      return false;
    }
    partition.clear(partition.active().stream().mapToInt(i -> (int) i).toArray(), true);
    allocator.releasePartition(partitionId);
    return true;
  }

  /**
   * Rejects a sample whose known generation is not its index's current one.
   *
   * @param generation the generation the caller's metadata names, or {@link
   *     BatchMeta#UNKNOWN_GENERATION} (not checked)
   * @param what what was done to the sample, for the message ({@code "written"})
   * @throws TqException with {@code STALE_METADATA} naming the index and both generations
   */
  void requireGeneration(String partitionId, int index, long generation, String what) {
    if (generation == BatchMeta.UNKNOWN_GENERATION) {
      return;
    }
    long current = allocator.generation(index);
    if (generation != current) {
      throw new TqException(
          ErrorCode.STALE_METADATA,
          "stale metadata: sample "
              + index
              + " of generation "
              + generation
              + " cannot be "
              + what
              + " in partition '"
              + partitionId
              + "': the index was cleared since and is at generation "
              + current
              + "; fetch fresh metadata");
    }
  }

  /** Clears the active samples among the pairs and releases them; returns how many. */
  int clearSamples(ClearSamplesRequest request) {
    int cleared = 0;
    for (Map.Entry<String, BitSet> e : currentSamples(request).entrySet()) {
      int[] indexes = e.getValue().stream().toArray();
      partitions.get(e.getKey()).clear(indexes, request.clearConsumption());
      allocator.releaseIndexes(e.getKey(), indexes);
      cleared += indexes.length;
    }
    return cleared;
  }

  /**
   * Marks the active samples among the pairs as being cleared, so that no fetch hands them out any
   * more; returns how many were not marked before.
   */
  int markClearing(ClearSamplesRequest request) {
    int marked = 0;
    for (Map.Entry<String, BitSet> e : currentSamples(request).entrySet()) {
      marked += partitions.get(e.getKey()).markClearing(e.getValue().stream().toArray());
    }
    return marked;
  }

  /**
   * The pairs of a request that name an active sample of an existing partition at its current
   * generation, grouped by partition; the others are ignored.
   */
  private Map<String, BitSet> currentSamples(ClearSamplesRequest request) {
    Map<String, BitSet> groups = new LinkedHashMap<>();
    for (int i = 0; i < request.indexes().size(); i++) {
      Long index = request.indexes().get(i);
      String partitionId = request.partitionIds().get(i);
      Partition partition = partitions.get(partitionId);
      long generation = request.generations().get(i);
      if (partition == null
          || index == null
          || index < 0
          || index > IndexAllocator.MAX_INDEX
          || !partition.isActive((int) (long) index)
          || generation != BatchMeta.UNKNOWN_GENERATION
              && generation != allocator.generation((int) (long) index)) {
        continue;
      }
      groups.computeIfAbsent(partitionId, k -> new BitSet()).set((int) (long) index);
    }
    return groups;
  }

  /** The key of each index, null where none; empty for an unknown partition. */
  List<String> resolveIndexes(String partitionId, List<Long> indexes) {
    Partition partition = partitions.get(partitionId);
    if (partition == null) {
      return List.of();
    }
    List<String> out = new ArrayList<>(indexes.size());
    for (Long index : indexes) {
      out.add(
          index == null || index < 0 || index > IndexAllocator.MAX_INDEX
              ? null
              : partition.keyOf((int) (long) index));
    }
    return Collections.unmodifiableList(out);
  }

  KvListing listKeys(String partitionId) {
    Map<String, Map<String, Map<String, Object>>> out = new LinkedHashMap<>();
    if (partitionId != null && !partitions.containsKey(partitionId)) {
      return new KvListing(out, "partition " + partitionId + " does not exist");
    }
    for (Partition partition : partitions.values()) {
      if (partitionId != null && !partitionId.equals(partition.id)) {
        continue;
      }
      Map<String, Map<String, Object>> keys = new LinkedHashMap<>();
      partition
          .keys()
          .forEach(
              (key, index) -> {
                Map<String, Object> tags = partition.tags(index);
                keys.put(key, tags == null ? Map.of() : tags);
              });
      out.put(partition.id, keys);
    }
    return new KvListing(out, "success");
  }

  ControllerStatistics statistics() {
    List<PartitionStatistics> list = new ArrayList<>();
    for (Partition partition : partitions.values()) {
      list.add(partition.statistics());
    }
    return new ControllerStatistics(
        list, allocator.allocatedCount(), allocator.reusableCount(), allocator.counter());
  }

  /** A copy of the index allocator's state. */
  AllocatorState allocatorSnapshot() {
    return allocator.snapshot();
  }

  List<PartitionState> snapshotPartitions() {
    List<PartitionState> list = new ArrayList<>();
    for (Partition partition : partitions.values()) {
      list.add(partition.snapshot());
    }
    return list;
  }

  /** Replaces every partition and the allocator. */
  void restore(List<PartitionState> states, AllocatorState allocatorState) {
    LinkedHashMap<String, Partition> restored = new LinkedHashMap<>();
    for (PartitionState p : states) {
      restored.put(p.partitionId(), Partition.restore(p));
    }
    partitions.clear();
    partitions.putAll(restored);
    allocator.restore(allocatorState);
  }

  void checkInvariants() {
    ControllerInvariants.check(partitions, allocator);
  }
}
