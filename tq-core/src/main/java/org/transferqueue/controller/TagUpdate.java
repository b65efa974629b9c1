package org.transferqueue.controller;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.meta.MetaValues;

/**
 * A write of per-sample tags (custom metadata), possibly spanning partitions.
 *
 * <p>With {@link Mode#MERGE} the given keys overwrite and the other stored keys stay, so two
 * writers that touch different keys never lose each other's tags; {@link Mode#REPLACE} replaces the
 * whole record. Either way the write happens atomically under the controller lock. Indexes that are
 * not active members of the named partition, and unknown partitions, are skipped.
 *
 * @param tags partition id (a {@linkplain Names#checkPartitionId valid} one) to (global index to
 *     tag record)
 * @param mode merge or replace
 */
public record TagUpdate(Map<String, Map<Long, Map<String, Object>>> tags, Mode mode) {
  /** How a record combines with the stored one. */
  public enum Mode {
    /** Incoming keys overwrite; other stored keys are kept. */
    MERGE,
    /** The incoming record replaces the stored one. */
    REPLACE
  }

  /** Validates and deep-copies the arguments. */
  public TagUpdate {
    Objects.requireNonNull(mode, "mode");
    LinkedHashMap<String, Map<Long, Map<String, Object>>> copy = new LinkedHashMap<>();
    Objects.requireNonNull(tags, "tags")
        .forEach(
            (partition, records) -> {
              Names.checkPartitionId(partition);
              LinkedHashMap<Long, Map<String, Object>> perIndex = new LinkedHashMap<>();
              records.forEach(
                  (index, record) ->
                      perIndex.put(
                          (long) IndexAllocator.checkIndex(Objects.requireNonNull(index, "index")),
                          MetaValues.freezeMap(record)));
              copy.put(partition, Collections.unmodifiableMap(perIndex));
            });
    tags = Collections.unmodifiableMap(copy);
  }

  /**
   * A merge of tags into one partition.
   *
   * @param partitionId the partition
   * @param records global index to the keys to set
   * @return the update
   */
  public static TagUpdate merge(String partitionId, Map<Long, Map<String, Object>> records) {
    return new TagUpdate(Map.of(partitionId, records), Mode.MERGE);
  }

  /**
   * A replacement of tags in one partition.
   *
   * @param partitionId the partition
   * @param records global index to the new record
   * @return the update
   */
  public static TagUpdate replace(String partitionId, Map<Long, Map<String, Object>> records) {
    return new TagUpdate(Map.of(partitionId, records), Mode.REPLACE);
  }
}
