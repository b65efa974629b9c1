package org.transferqueue.controller;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Hands out global indexes that are unique across all partitions, recycles released ones
 * first-in-first-out, and counts the generation of every index.
 *
 * <p>Allocation takes indexes from the front of the reusable pool, then a consecutive range from a
 * counter of never-used indexes. Releases append to the pool end in ascending order and are
 * de-duplicated, so no index can ever be owned by two partitions.
 *
 * <p><b>Generations.</b> An index names a slot; the sample that occupies it is the index together
 * with its generation, which starts at 0 and grows by one each time the index is released. Metadata
 * carries the generation of every sample, and storage refuses a read or write whose generation is
 * not the one it holds, so metadata kept from before a clear can never reach the data of the sample
 * that reuses the index. Not thread-safe: owned by the {@link Controller} and used only under its
 * lock.
 */
final class IndexAllocator {
  /** The largest global index ever handed out. */
  static final int MAX_INDEX = Integer.MAX_VALUE - 1;

  private final Map<String, BitSet> owners = new LinkedHashMap<>();
  private final ArrayDeque<Integer> pool = new ArrayDeque<>();
  // generations[i] is the generation of index i; indexes at or beyond its length are at 0.
  private long[] generations = new long[0];
  private long counter;
  private long allocatedCount;

  static int checkIndex(long index) {
    if (index < 0 || index > MAX_INDEX) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "global index=" + index + " outside [0, " + MAX_INDEX + "]");
    }
    return (int) index;
  }

  /**
   * Reserves {@code count} indexes for a partition.
   *
   * @return reused indexes in pool order followed by new ones ascending
   */
  int[] allocate(String partitionId, int count) {
    if (count <= 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "number of indexes needed must be larger than 0: count=" + count);
    }
    int fromPool = Math.min(count, pool.size());
    long fresh = count - fromPool;
    if (counter + fresh - 1 > MAX_INDEX) {
      throw new TqException(
          ErrorCode.CAPACITY_EXCEEDED,
          "global index space exhausted: counter=" + counter + " + " + fresh + " > " + MAX_INDEX);
    }
    int[] out = new int[count];
    for (int i = 0; i < fromPool; i++) {
      out[i] = pool.pollFirst();
    }
    for (int i = fromPool; i < count; i++) {
      out[i] = (int) counter++;
    }
    BitSet owned = owners.computeIfAbsent(partitionId, k -> new BitSet());
    for (int index : out) {
      owned.set(index);
    }
    allocatedCount += count;
    return out;
  }

  /** Releases every index of a partition; unknown partition gives an empty array. */
  int[] releasePartition(String partitionId) {
    BitSet owned = owners.remove(partitionId);
    if (owned == null) {
      return new int[0];
    }
    int[] released = owned.stream().toArray();
    for (int index : released) {
      retire(index);
      pool.addLast(index);
    }
    allocatedCount -= released.length;
    return released;
  }

  /**
   * Releases some indexes of a partition; all must be owned by it. An unknown partition is a no-op.
   *
   * @return the distinct released indexes, ascending
   */
  int[] releaseIndexes(String partitionId, int[] indexes) {
    BitSet owned = owners.get(partitionId);
    if (owned == null) {
      return new int[0];
    }
    int[] distinct = Arrays.stream(indexes).sorted().distinct().toArray();
    for (int index : distinct) {
      if (index < 0 || !owned.get(index)) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "some indexes to release do not belong to the specified partition: partition="
                + partitionId
                + " index="
                + index);
      }
    }
    for (int index : distinct) {
      owned.clear(index);
      retire(index);
      pool.addLast(index);
    }
    allocatedCount -= distinct.length;
    if (owned.isEmpty()) {
      owners.remove(partitionId);
    }
    return distinct;
  }

  /** Ends the life of the sample at {@code index}: the next one to use it is one generation on. */
  private void retire(int index) {
    if (index >= generations.length) {
      generations = Arrays.copyOf(generations, Math.max(index + 1, generations.length * 2));
    }
    generations[index]++;
  }

  /**
   * The current generation of an index: how many times it has been released.
   *
   * @param index a global index in {@code [0, MAX_INDEX]}
   * @return the generation, 0 for an index never released
   */
  long generation(int index) {
    return index < generations.length ? generations[index] : 0;
  }

  /**
   * The current generation of each index.
   *
   * @param indexes global indexes in {@code [0, MAX_INDEX]}
   * @return one generation per index, aligned
   */
  long[] generations(long[] indexes) {
    long[] out = new long[indexes.length];
    for (int i = 0; i < indexes.length; i++) {
      out[i] = generation((int) indexes[i]);
    }
    return out;
  }

  /** The indexes a partition owns, ascending; empty for an unknown partition. */
  IndexSet indexesOf(String partitionId) {
    BitSet owned = owners.get(partitionId);
    return owned == null ? IndexSet.empty() : IndexSet.copyOf(owned);
  }

  boolean owns(String partitionId, int index) {
    BitSet owned = owners.get(partitionId);
    return owned != null && owned.get(index);
  }

  /** Number of indexes currently owned by some partition. */
  long allocatedCount() {
    return allocatedCount;
  }

  /** Number of released indexes waiting for reuse. */
  int reusableCount() {
    return pool.size();
  }

  /** The next never-used index. */
  long counter() {
    return counter;
  }

  AllocatorState snapshot() {
    Map<String, IndexSet> owned = new LinkedHashMap<>();
    owners.forEach((id, bits) -> owned.put(id, IndexSet.copyOf(bits)));
    long[] poolCopy = pool.stream().mapToLong(Integer::longValue).toArray();
    Map<Long, Long> retired = new LinkedHashMap<>();
    for (int i = 0; i < generations.length; i++) {
      if (generations[i] != 0) {
        retired.put((long) i, generations[i]);
      }
    }
    return new AllocatorState(
        owned, List.of(Arrays.stream(poolCopy).boxed().toArray(Long[]::new)), counter, retired);
  }

  void restore(AllocatorState state) {
    owners.clear();
    pool.clear();
    allocatedCount = 0;
    state
        .owners()
        .forEach(
            (id, set) -> {
              owners.put(id, set.toBitSet());
              allocatedCount += set.size();
            });
    for (long index : state.pool()) {
      pool.addLast(checkIndex(index));
    }
    long bound = 0;
    for (long index : state.generations().keySet()) {
      bound = Math.max(bound, checkIndex(index) + 1L);
    }
    generations = new long[(int) bound];
    state
        .generations()
        .forEach((index, generation) -> generations[(int) (long) index] = generation);
    counter = state.counter();
  }
}
