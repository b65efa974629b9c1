package org.transferqueue.client;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.storage.PartitionGroup;

/**
 * Holds a client's metadata against the controller's current state of the same samples: fills in
 * the generations that metadata built by hand leaves unknown, and tells, after storage refused or
 * could not serve a request, whether the metadata names samples that were cleared since ({@code
 * STALE_METADATA}) or samples whose fields were rewritten with other shapes (then it gives the
 * current metadata, to read again).
 *
 * <p>Each question costs one controller call per partition of the metadata, and is asked only where
 * the answer is needed: a request through metadata from the controller, which always carries
 * generations, that storage served costs nothing. Stateless and thread-safe.
 */
final class CurrentMetadata {
  private CurrentMetadata() {}

  /**
   * {@code meta} with every unknown generation replaced by the current generation of its sample; an
   * index that is no active sample of its partition keeps the unknown generation.
   *
   * @param meta the metadata
   * @param controller answers the current metadata of samples
   * @return {@code meta} itself when it knows every generation, else a copy
   */
  static BatchMeta withKnownGenerations(BatchMeta meta, ControllerApi controller) {
    long[] generations = meta.generationArray();
    boolean unknown = false;
    for (long generation : generations) {
      unknown |= generation == BatchMeta.UNKNOWN_GENERATION;
    }
    if (!unknown) {
      return meta;
    }
    for (PartitionGroup group : PartitionGroup.of(meta)) {
      Map<Long, Long> current = generationsOf(group, meta, controller);
      for (int row : group.positions()) {
        if (generations[row] == BatchMeta.UNKNOWN_GENERATION) {
          generations[row] = current.getOrDefault(meta.globalIndex(row), generations[row]);
        }
      }
    }
    return meta.withGenerations(generations);
  }

  /**
   * The positions of {@code meta} whose samples no longer exist: a sample named by its generation
   * whose index is no active sample of its partition any more, or holds another generation now (a
   * sample of unknown generation whose index is not active was never known to exist, and is not
   * stale).
   *
   * @param meta the metadata
   * @param controller answers the current metadata of samples
   * @return ascending positions; empty when every sample is current
   */
  static int[] stalePositions(BatchMeta meta, ControllerApi controller) {
    List<Integer> stale = new ArrayList<>();
    for (PartitionGroup group : PartitionGroup.of(meta)) {
      Map<Long, Long> current = generationsOf(group, meta, controller);
      for (int row : group.positions()) {
        Long now = current.get(meta.globalIndex(row));
        long generation = meta.generation(row);
        if (generation != BatchMeta.UNKNOWN_GENERATION && (now == null || now != generation)) {
          stale.add(row);
        }
      }
    }
    return stale.stream().mapToInt(Integer::intValue).sorted().toArray();
  }

  /**
   * After a read of {@code meta} failed: the current metadata of its samples, to read them again,
   * when they all still exist, every field is still one of their partitions' and some field's
   * schema changed since {@code meta} was made.
   *
   * @param meta the metadata whose read failed
   * @param failure the read's failure
   * @param controller answers the current metadata of samples
   * @return the current metadata (same samples, order and fields), or null when reading again would
   *     not help (nothing changed, or a field is missing)
   * @throws StorageException with {@code STALE_METADATA} when a sample named by a known generation
   *     was cleared since, with {@code failure} as its cause
   */
  static BatchMeta afterFailedRead(BatchMeta meta, TqException failure, ControllerApi controller) {
    List<String> fields = meta.fieldNames();
    List<PartitionGroup> groups = PartitionGroup.of(meta);
    List<BatchMeta> parts = new ArrayList<>(groups.size());
    int[] order = new int[meta.size()];
    int at = 0;
    for (PartitionGroup group : groups) {
      List<Long> indexes = new ArrayList<>(group.size());
      for (int row : group.positions()) {
        indexes.add(meta.globalIndex(row));
        order[row] = at++;
      }
      BatchMeta current = controller.getSampleMeta(group.partitionId(), indexes, fields);
      if (current.size() != indexes.size() || !matchesGenerations(meta, group, current)) {
        int[] stale = stalePositions(meta.selectSamples(group.positions()), controller);
        if (stale.length > 0) {
          throw staleRead(meta.selectSamples(group.positions()), stale, failure);
        }
        return null;
      }
      if (!current.fieldNames().equals(fields)) {
        return null; // a field the partition has no column of: the caller names it
      }
      parts.add(current);
    }
    BatchMeta current = BatchMeta.concat(parts, false).selectSamples(order);
    return current.fieldSchema().equals(meta.fieldSchema())
            && current.backendMeta().equals(meta.backendMeta())
        ? null
        : current;
  }

  private static boolean matchesGenerations(
      BatchMeta meta, PartitionGroup group, BatchMeta current) {
    int[] rows = group.positions();
    for (int j = 0; j < rows.length; j++) {
      long generation = meta.generation(rows[j]);
      if (current.globalIndex(j) != meta.globalIndex(rows[j])
          || generation != BatchMeta.UNKNOWN_GENERATION && generation != current.generation(j)) {
        return false;
      }
    }
    return true;
  }

  private static StorageException staleRead(BatchMeta meta, int[] stale, TqException failure) {
    List<String> samples = new ArrayList<>(Math.min(stale.length, 8));
    for (int k = 0; k < stale.length && k < 8; k++) {
      samples.add(meta.globalIndex(stale[k]) + "." + meta.generation(stale[k]));
    }
    return new StorageException(
        ErrorCode.STALE_METADATA,
        "stale metadata: samples "
            + samples
            + (stale.length > 8 ? " and " + (stale.length - 8) + " more" : "")
            + " (index.generation) of partition '"
            + meta.partitionId(stale[0])
            + "' were cleared since the metadata was made; fetch fresh metadata",
        failure);
  }

  /** The current generation of each of the group's samples that is active, by global index. */
  private static Map<Long, Long> generationsOf(
      PartitionGroup group, BatchMeta meta, ControllerApi controller) {
    List<Long> indexes = new ArrayList<>(group.size());
    for (int row : group.positions()) {
      indexes.add(meta.globalIndex(row));
    }
    BatchMeta current = controller.getSampleMeta(group.partitionId(), indexes, List.of());
    Map<Long, Long> generations = new HashMap<>();
    for (int i = 0; i < current.size(); i++) {
      generations.put(current.globalIndex(i), current.generation(i));
    }
    return generations;
  }
}
