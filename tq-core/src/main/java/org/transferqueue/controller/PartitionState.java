package org.transferqueue.controller;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.sampler.InsertPosition;

/**
 * A deep, immutable copy of one partition's state, for checkpoints, diagnostics and tests.
 *
 * @param partitionId the partition name
 * @param createdAtMillis creation time, milliseconds since the epoch
 * @param fields every registered field in registration order, with production and schema
 * @param consumption every registered task in registration order, with the samples it consumed
 * @param active the samples that exist in the partition
 * @param preAllocated the reserved but not yet activated indexes
 * @param backendMeta per sample, per field backend metadata
 * @param tags per sample user metadata (only samples that have tags)
 * @param keys key to global index, in registration order
 * @param insertPositions per sample the insert that created it (only samples an insert created)
 * @param clearing the active samples whose clear has begun ({@link ControllerApi#markClearing}): no
 *     fetch hands them out until they are cleared
 */
public record PartitionState(
    String partitionId,
    long createdAtMillis,
    List<FieldState> fields,
    Map<String, IndexSet> consumption,
    IndexSet active,
    IndexSet preAllocated,
    Map<Long, Map<String, Object>> backendMeta,
    Map<Long, Map<String, Object>> tags,
    Map<String, Long> keys,
    Map<Long, InsertPosition> insertPositions,
    IndexSet clearing) {
  /** Validates and copies the arguments. */
  public PartitionState {
    Objects.requireNonNull(partitionId, "partitionId");
    Objects.requireNonNull(active, "active");
    Objects.requireNonNull(preAllocated, "preAllocated");
    fields = List.copyOf(fields);
    consumption = Collections.unmodifiableMap(new LinkedHashMap<>(consumption));
    backendMeta = Map.copyOf(backendMeta);
    tags = Map.copyOf(tags);
    keys = Collections.unmodifiableMap(new LinkedHashMap<>(keys));
    insertPositions = Map.copyOf(insertPositions);
    Objects.requireNonNull(clearing, "clearing");
  }

  /**
   * The field with the given name.
   *
   * @param name a field name
   * @return the field state, or null if the field is not registered
   */
  public FieldState field(String name) {
    for (FieldState field : fields) {
      if (field.name().equals(name)) {
        return field;
      }
    }
    return null;
  }
}
