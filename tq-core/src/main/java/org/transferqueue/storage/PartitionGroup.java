package org.transferqueue.storage;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.meta.BatchMeta;

/**
 * The samples of a batch that belong to one partition: their positions in the batch, ascending.
 *
 * <p>A batch may span partitions; storage managers store and notify per partition group so that
 * every notification names the right partition. Immutable (the positions array must not be
 * modified).
 *
 * @param partitionId the partition
 * @param positions batch positions of its samples, ascending
 */
public record PartitionGroup(String partitionId, int[] positions) {

  /** Rejects nulls. */
  public PartitionGroup {
    Objects.requireNonNull(partitionId, "partitionId");
    Objects.requireNonNull(positions, "positions");
  }

  /**
   * Splits a batch by partition.
   *
   * @param meta the batch's metadata
   * @return one group per partition, in order of first appearance; a single group holding every
   *     position when the batch has one partition; empty for an empty batch
   */
  public static List<PartitionGroup> of(BatchMeta meta) {
    int size = meta.size();
    if (size == 0) {
      return List.of();
    }
    String first = meta.partitionId(0);
    int same = 1;
    while (same < size && meta.partitionId(same).equals(first)) {
      same++;
    }
    if (same == size) {
      int[] all = new int[size];
      Arrays.setAll(all, p -> p);
      return List.of(new PartitionGroup(first, all));
    }
    Map<String, List<Integer>> byPartition = new LinkedHashMap<>();
    for (int i = 0; i < meta.size(); i++) {
      byPartition.computeIfAbsent(meta.partitionId(i), p -> new ArrayList<>()).add(i);
    }
    List<PartitionGroup> groups = new ArrayList<>(byPartition.size());
    byPartition.forEach(
        (partition, rows) ->
            groups.add(
                new PartitionGroup(
                    partition, rows.stream().mapToInt(Integer::intValue).toArray())));
    return groups;
  }

  /**
   * The number of samples in the group.
   *
   * @return the position count
   */
  public int size() {
    return positions.length;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PartitionGroup g
        && g.partitionId.equals(partitionId)
        && Arrays.equals(g.positions, positions);
  }

  @Override
  public int hashCode() {
    return 31 * partitionId.hashCode() + Arrays.hashCode(positions);
  }

  @Override
  public String toString() {
    return "PartitionGroup[partitionId="
        + partitionId
        + ", positions="
        + Arrays.toString(positions)
        + "]";
  }
}
