package org.transferqueue.controller;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.MetaValues;

/**
 * A storage notification: the listed fields of the listed samples have been stored.
 *
 * <p>The per-sample shapes of a nested field are positional: the i-th shape belongs to the i-th
 * index. The controller applies a notification atomically: either every (sample, field) pair
 * becomes produced or, on a schema conflict, none does.
 *
 * @param partitionId the partition the samples belong to
 * @param indexes the global indexes written; may be empty (then only the fields are registered)
 * @param fields the schema of every field written, in registration order
 * @param backendMeta optional per-sample, per-field backend metadata keyed by global index
 * @param generations the generation of each written sample, aligned with {@code indexes} ({@link
 *     BatchMeta#UNKNOWN_GENERATION} where the writer's metadata did not know it); the controller
 *     rejects the whole update with {@link ErrorCode#STALE_METADATA} when a known one is not the
 *     index's current generation
 */
public record ProductionUpdate(
    String partitionId,
    List<Long> indexes,
    Map<String, FieldSchema> fields,
    Map<Long, Map<String, Object>> backendMeta,
    List<Long> generations) {

  /** Validates and copies the arguments. */
  public ProductionUpdate {
    Names.checkPartitionId(partitionId);
    if (indexes == null || fields == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "indexes and fields must not be null: indexes=" + indexes + " fields=" + fields);
    }
    List<Long> copy = new ArrayList<>(indexes.size());
    for (Long index : indexes) {
      copy.add((long) IndexAllocator.checkIndex(index == null ? -1 : index));
    }
    indexes = Collections.unmodifiableList(copy);
    generations = Generations.aligned(generations, indexes.size(), "ProductionUpdate");
    LinkedHashMap<String, FieldSchema> schema = new LinkedHashMap<>();
    fields.forEach(
        (name, entry) -> {
          Names.checkFieldName(name);
          if (entry == null) {
            throw new TqException(
                ErrorCode.INVALID_ARGUMENT, "field '" + name + "' has schema " + entry);
          }
          schema.put(name, entry);
        });
    fields = Collections.unmodifiableMap(schema);
    LinkedHashMap<Long, Map<String, Object>> backend = new LinkedHashMap<>();
    if (backendMeta != null) {
      backendMeta.forEach((index, perField) -> backend.put(index, MetaValues.freezeMap(perField)));
    }
    backendMeta = Collections.unmodifiableMap(backend);
  }

  /**
   * A notification whose samples' generations are not known (written through metadata built by
   * hand): the controller does not check them.
   *
   * @param partitionId the partition
   * @param indexes the global indexes written
   * @param fields the schema of every field written
   * @param backendMeta optional per-sample, per-field backend metadata keyed by global index
   */
  public ProductionUpdate(
      String partitionId,
      List<Long> indexes,
      Map<String, FieldSchema> fields,
      Map<Long, Map<String, Object>> backendMeta) {
    this(partitionId, indexes, fields, backendMeta, null);
  }

  /**
   * A notification without backend metadata.
   *
   * @param partitionId the partition
   * @param indexes the samples written
   * @param fields the schema of every field written
   * @return the notification
   */
  public static ProductionUpdate of(
      String partitionId, List<Long> indexes, Map<String, FieldSchema> fields) {
    return new ProductionUpdate(partitionId, indexes, fields, Map.of());
  }
}
