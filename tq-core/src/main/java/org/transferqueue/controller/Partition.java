package org.transferqueue.controller;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.sampler.InsertPosition;

/**
 * The status tables of one partition: membership, production per (sample, field), consumption per
 * (sample, task), field schemas, ready sets, tags, backend metadata, keys and the insert each
 * sample came from ({@link InsertPosition}, what prompt groups are made of).
 *
 * <p>Sparse by design: every table is a bitset or map keyed by global index, so nothing is sized by
 * the matrix of all indexes times all fields. Ready sets per (task, field set) are created on the
 * first fetch that needs them (one scan) and then maintained incrementally. Not thread-safe: owned
 * by {@link Controller} and used only under its lock.
 */
final class Partition {
  /** Ready sets kept per partition; the least recently used is dropped and rebuilt on demand. */
  static final int MAX_READY_SETS = 64;

  /** A (task, sorted field set) pair naming a ready set. */
  record ReadyKey(String task, List<String> fields) {}

  final String id;
  final long createdAtMillis;

  private final BitSet active = new BitSet();
  private int activeCount;
  private final BitSet preAllocated = new BitSet();
  private int preAllocatedCount;

  /**
   * Active samples whose clear has begun: no fetch hands them out (they are in no ready set and are
   * filtered from sampler answers); a subset of {@link #active}, emptied as they are cleared.
   */
  private final BitSet clearing = new BitSet();

  private final LinkedHashMap<String, FieldColumn> fields = new LinkedHashMap<>();
  private final LinkedHashMap<String, BitSet> consumption = new LinkedHashMap<>();
  private final LinkedHashMap<ReadyKey, ReadySet> readySets =
      new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<ReadyKey, ReadySet> eldest) {
          return size() > MAX_READY_SETS;
        }
      };
  private final HashMap<Integer, Map<String, Object>> tags = new HashMap<>();
  private final HashMap<Integer, Map<String, Object>> backendMeta = new HashMap<>();
  private final LinkedHashMap<String, Integer> keyToIndex = new LinkedHashMap<>();
  private final HashMap<Integer, String> indexToKey = new HashMap<>();
  private final HashMap<Integer, InsertPosition> insertPositions = new HashMap<>();
  private long insertCount;

  Partition(String id, long createdAtMillis) {
    this.id = id;
    this.createdAtMillis = createdAtMillis;
  }

  // ---- membership -------------------------------------------------------------------------

  void registerPreAllocated(int[] indexes) {
    for (int index : indexes) {
      if (!preAllocated.get(index) && !active.get(index)) {
        preAllocated.set(index);
        preAllocatedCount++;
      }
    }
  }

  /** Activates up to {@code n} pre-allocated indexes, smallest first. */
  int[] activatePreAllocated(int n) {
    int[] out = new int[Math.min(n, preAllocatedCount)];
    int index = -1;
    for (int i = 0; i < out.length; i++) {
      index = preAllocated.nextSetBit(index + 1);
      out[i] = index;
    }
    activate(out);
    return out;
  }

  /** Makes indexes active members (removing them from the pre-allocated set). */
  void activate(int[] indexes) {
    for (int index : indexes) {
      if (preAllocated.get(index)) {
        preAllocated.clear(index);
        preAllocatedCount--;
      }
      if (!active.get(index)) {
        active.set(index);
        activeCount++;
      }
    }
  }

  boolean isActive(int index) {
    return active.get(index);
  }

  /**
   * Records the samples of one insert, in row order, as the next insert of the partition.
   *
   * @param indexes the samples the insert created, active, in the order of the insert's reply
   */
  void recordInsert(long[] indexes) {
    if (indexes.length == 0) {
      return;
    }
    long insert = insertCount++;
    for (int row = 0; row < indexes.length; row++) {
      insertPositions.put((int) indexes[row], new InsertPosition(insert, row));
    }
  }

  /** The insert a sample came from, or null for one no insert created. */
  InsertPosition insertPosition(int index) {
    return insertPositions.get(index);
  }

  boolean owns(int index) {
    return active.get(index) || preAllocated.get(index);
  }

  int activeCount() {
    return activeCount;
  }

  int preAllocatedCount() {
    return preAllocatedCount;
  }

  /** Active and pre-allocated indexes, ascending. */
  IndexSet members() {
    BitSet all = (BitSet) active.clone();
    all.or(preAllocated);
    return IndexSet.copyOf(all);
  }

  IndexSet active() {
    return IndexSet.copyOf(active);
  }

  IndexSet preAllocated() {
    return IndexSet.copyOf(preAllocated);
  }

  // ---- production -------------------------------------------------------------------------

  FieldColumn field(String name) {
    return fields.get(name);
  }

  List<String> fieldNames() {
    return List.copyOf(fields.keySet());
  }

  /**
   * Validates schemas offered for {@code indexCount} samples against the registered fields without
   * changing anything.
   *
   * @throws org.transferqueue.TqException if any field's schema conflicts
   */
  void checkSchema(Map<String, FieldSchema> schema, int indexCount) {
    for (Map.Entry<String, FieldSchema> e : schema.entrySet()) {
      FieldColumn column = fields.get(e.getKey());
      (column != null ? column : new FieldColumn(e.getKey())).check(id, e.getValue(), indexCount);
    }
  }

  /**
   * Applies a production notification atomically: validates every field first, then registers
   * columns, activates the indexes, marks production, merges schemas and backend metadata.
   *
   * @throws org.transferqueue.TqException if any field's schema conflicts; nothing changes then
   */
  void updateProduction(
      int[] indexes, Map<String, FieldSchema> schema, Map<Integer, Map<String, Object>> backend) {
    checkSchema(schema, indexes.length);
    for (String name : schema.keySet()) {
      fields.computeIfAbsent(name, FieldColumn::new);
    }
    if (indexes.length == 0) {
      return;
    }
    activate(indexes);
    for (Map.Entry<String, FieldSchema> e : schema.entrySet()) {
      fields.get(e.getKey()).apply(indexes, e.getValue());
    }
    backend.forEach(
        (index, perField) -> {
          if (active.get(index)) {
            Map<String, Object> merged =
                new LinkedHashMap<>(backendMeta.getOrDefault(index, Map.of()));
            merged.putAll(perField);
            backendMeta.put(index, merged);
          }
        });
    for (Map.Entry<ReadyKey, ReadySet> e : readySets.entrySet()) {
      if (!intersects(e.getKey().fields(), schema.keySet())) {
        continue;
      }
      BitSet consumed = consumption.get(e.getKey().task());
      for (int index : indexes) {
        if (!consumed.get(index) && producedForAll(index, e.getKey().fields())) {
          e.getValue().add(index);
        }
      }
    }
  }

  private static boolean intersects(List<String> a, Set<String> b) {
    for (String s : a) {
      if (b.contains(s)) {
        return true;
      }
    }
    return false;
  }

  private boolean producedForAll(int index, List<String> names) {
    if (!active.get(index) || clearing.get(index)) {
      return false;
    }
    for (String name : names) {
      FieldColumn column = fields.get(name);
      if (column == null || !column.produced.get(index)) {
        return false;
      }
    }
    return true;
  }

  /** True iff every field is registered and produced for {@code index}. */
  boolean isProduced(int index, List<String> names) {
    return !names.isEmpty() && producedForAll(index, names);
  }

  // ---- consumption ------------------------------------------------------------------------

  /** The consumption bitset of a task, registering the task if new. */
  BitSet task(String task) {
    return consumption.computeIfAbsent(task, k -> new BitSet());
  }

  boolean hasTask(String task) {
    return consumption.containsKey(task);
  }

  List<String> taskNames() {
    return List.copyOf(consumption.keySet());
  }

  void markConsumed(String task, List<Long> indexes) {
    BitSet consumed = task(task);
    List<ReadySet> sets = new ArrayList<>();
    readySets.forEach(
        (key, set) -> {
          if (key.task().equals(task)) {
            sets.add(set);
          }
        });
    for (long index : indexes) {
      int i = (int) index;
      consumed.set(i);
      for (ReadySet set : sets) {
        set.remove(i);
      }
    }
  }

  /**
   * Clears consumption of one task, or of all tasks when {@code task} is null.
   *
   * @return whether some flag was set before
   */
  boolean resetConsumption(String task) {
    boolean reset = false;
    for (Map.Entry<String, BitSet> e : consumption.entrySet()) {
      if (task == null || task.equals(e.getKey())) {
        reset |= e.getValue().intersects(active);
        e.getValue().clear();
      }
    }
    for (Map.Entry<ReadyKey, ReadySet> e : readySets.entrySet()) {
      if (task == null || task.equals(e.getKey().task())) {
        rebuild(e.getKey(), e.getValue());
      }
    }
    return reset;
  }

  /**
   * The ready set for (task, fields), registering the task and building the set on first use.
   *
   * @param sortedFields distinct field names in ascending order, not empty
   */
  ReadySet readySet(String task, List<String> sortedFields) {
    task(task);
    ReadyKey key = new ReadyKey(task, sortedFields);
    ReadySet set = readySets.get(key);
    if (set == null) {
      set = new ReadySet();
      rebuild(key, set);
      readySets.put(key, set);
    }
    return set;
  }

  private void rebuild(ReadyKey key, ReadySet set) {
    set.clear();
    BitSet candidates = (BitSet) active.clone();
    for (String name : key.fields()) {
      FieldColumn column = fields.get(name);
      if (column == null) {
        return;
      }
      candidates.and(column.produced);
    }
    candidates.andNot(consumption.get(key.task()));
    candidates.andNot(clearing);
    for (int i = candidates.nextSetBit(0); i >= 0; i = candidates.nextSetBit(i + 1)) {
      set.add(i);
    }
  }

  // ---- clearing ---------------------------------------------------------------------------

  /**
   * Marks active samples as being cleared: they leave every ready set and no fetch returns them
   * until {@link #clear} removes them.
   *
   * @param indexes active samples
   * @return how many were not marked before
   */
  int markClearing(int[] indexes) {
    int marked = 0;
    for (int index : indexes) {
      if (active.get(index) && !clearing.get(index)) {
        clearing.set(index);
        marked++;
        for (ReadySet set : readySets.values()) {
          set.remove(index);
        }
      }
    }
    return marked;
  }

  /** Whether the clear of an active sample has begun. */
  boolean isClearing(int index) {
    return clearing.get(index);
  }

  /** Whether some sample's clear has begun. */
  boolean hasClearing() {
    return !clearing.isEmpty();
  }

  /** Clears active samples: production, consumption (optionally), schemas, tags, keys. */
  void clear(int[] indexes, boolean clearConsumption) {
    for (FieldColumn column : fields.values()) {
      column.remove(indexes);
    }
    for (int index : indexes) {
      if (clearConsumption) {
        for (BitSet consumed : consumption.values()) {
          consumed.clear(index);
        }
      }
      if (active.get(index)) {
        active.clear(index);
        activeCount--;
      }
      clearing.clear(index);
      tags.remove(index);
      backendMeta.remove(index);
      insertPositions.remove(index);
      String key = indexToKey.remove(index);
      if (key != null) {
        keyToIndex.remove(key);
      }
      for (ReadySet set : readySets.values()) {
        set.remove(index);
      }
    }
  }

  // ---- tags, backend metadata, keys -------------------------------------------------------

  Map<String, Object> tags(int index) {
    return tags.get(index);
  }

  void putTags(int index, Map<String, Object> record) {
    tags.put(index, record);
  }

  Map<String, Object> backendMeta(int index) {
    return backendMeta.get(index);
  }

  Integer indexOfKey(String key) {
    return keyToIndex.get(key);
  }

  String keyOf(int index) {
    return indexToKey.get(index);
  }

  void putKey(String key, int index) {
    keyToIndex.put(key, index);
    indexToKey.put(index, key);
  }

  Map<String, Integer> keys() {
    return keyToIndex;
  }

  // ---- statistics and snapshots -----------------------------------------------------------

  PartitionStatistics statistics() {
    BitSet any = new BitSet();
    Map<String, Integer> perField = new LinkedHashMap<>();
    for (FieldColumn column : fields.values()) {
      any.or(column.produced);
      perField.put(column.name, column.producedCount);
    }
    Map<String, Integer> perTask = new LinkedHashMap<>();
    consumption.forEach(
        (task, bits) -> {
          BitSet members = (BitSet) bits.clone();
          members.and(active);
          perTask.put(task, members.cardinality());
        });
    return new PartitionStatistics(
        id,
        createdAtMillis,
        activeCount,
        preAllocatedCount,
        fields.size(),
        taskNames(),
        any.cardinality(),
        perField,
        perTask);
  }

  PartitionState snapshot() {
    List<FieldState> fieldStates = new ArrayList<>();
    for (FieldColumn column : fields.values()) {
      fieldStates.add(column.snapshot());
    }
    Map<String, IndexSet> consumed = new LinkedHashMap<>();
    consumption.forEach((task, bits) -> consumed.put(task, IndexSet.copyOf(bits)));
    Map<Long, Map<String, Object>> backend = new HashMap<>();
    backendMeta.forEach((k, v) -> backend.put((long) k, Map.copyOf(v)));
    Map<Long, Map<String, Object>> tagCopy = new HashMap<>();
    tags.forEach((k, v) -> tagCopy.put((long) k, v));
    Map<String, Long> keyCopy = new LinkedHashMap<>();
    keyToIndex.forEach((k, v) -> keyCopy.put(k, (long) v));
    Map<Long, InsertPosition> positionCopy = new HashMap<>();
    insertPositions.forEach((k, v) -> positionCopy.put((long) k, v));
    return new PartitionState(
        id,
        createdAtMillis,
        fieldStates,
        consumed,
        IndexSet.copyOf(active),
        IndexSet.copyOf(preAllocated),
        backend,
        tagCopy,
        keyCopy,
        positionCopy,
        IndexSet.copyOf(clearing));
  }

  static Partition restore(PartitionState state) {
    Partition p = new Partition(state.partitionId(), state.createdAtMillis());
    p.active.or(state.active().toBitSet());
    p.activeCount = state.active().size();
    p.preAllocated.or(state.preAllocated().toBitSet());
    p.preAllocatedCount = state.preAllocated().size();
    for (FieldState field : state.fields()) {
      p.fields.put(field.name(), FieldColumn.restore(field));
    }
    state.consumption().forEach((task, set) -> p.consumption.put(task, set.toBitSet()));
    state.backendMeta().forEach((k, v) -> p.backendMeta.put((int) (long) k, v));
    state.tags().forEach((k, v) -> p.tags.put((int) (long) k, v));
    state.keys().forEach((k, v) -> p.putKey(k, (int) (long) v));
    p.clearing.or(state.clearing().toBitSet());
    p.clearing.and(p.active);
    state
        .insertPositions()
        .forEach(
            (k, v) -> {
              p.insertPositions.put((int) (long) k, v);
              p.insertCount = Math.max(p.insertCount, v.insert() + 1);
            });
    return p;
  }

  /** Sorted distinct copy of field names. */
  static List<String> sortedFields(List<String> names) {
    return List.copyOf(new TreeSet<>(names));
  }

  /**
   * Verifies the invariants of spec section 2.12 that concern one partition, and that every ready
   * set equals a fresh scan.
   *
   * @throws IllegalStateException naming the first broken invariant
   */
  void checkInvariants() {
    require(!active.intersects(preAllocated), "active and pre-allocated overlap");
    require(active.cardinality() == activeCount, "active count");
    require(preAllocated.cardinality() == preAllocatedCount, "pre-allocated count");
    BitSet strayClearing = (BitSet) clearing.clone();
    strayClearing.andNot(active);
    require(strayClearing.isEmpty(), "clearing marks on inactive " + strayClearing);
    for (FieldColumn column : fields.values()) {
      BitSet outside = (BitSet) column.produced.clone();
      outside.andNot(active);
      require(outside.isEmpty(), "field " + column.name + " produced for inactive " + outside);
      require(
          column.produced.cardinality() == column.producedCount, "produced count " + column.name);
      require(column.hasSchema() == (column.kind() != null), "schema presence " + column.name);
    }
    for (Map.Entry<String, Integer> e : keyToIndex.entrySet()) {
      require(e.getKey().equals(indexToKey.get(e.getValue())), "key maps not inverse at " + e);
      require(active.get(e.getValue()), "key " + e.getKey() + " maps to inactive index");
    }
    require(keyToIndex.size() == indexToKey.size(), "key map sizes");
    for (Integer index : tags.keySet()) {
      require(active.get(index), "tags on inactive index " + index);
    }
    for (Integer index : backendMeta.keySet()) {
      require(active.get(index), "backend metadata on inactive index " + index);
    }
    for (Map.Entry<Integer, InsertPosition> e : insertPositions.entrySet()) {
      require(active.get(e.getKey()), "insert position on inactive index " + e.getKey());
      require(e.getValue().insert() < insertCount, "insert position " + e + " not yet recorded");
    }
    for (Map.Entry<ReadyKey, ReadySet> e : readySets.entrySet()) {
      ReadySet fresh = new ReadySet();
      rebuild(e.getKey(), fresh);
      require(fresh.size() == e.getValue().size(), "ready set size " + e.getKey());
      for (int i = 0; i < fresh.size(); i++) {
        require(fresh.view().get(i).equals(e.getValue().view().get(i)), "ready set " + e.getKey());
      }
    }
  }

  private void require(boolean condition, String what) {
    if (!condition) {
      throw new IllegalStateException("partition " + id + ": " + what);
    }
  }
}
