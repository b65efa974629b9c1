package org.transferqueue.meta;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The cells of one partition that a put has written: what storage reports and what the controller
 * applies, in-process and on the wire ({@code NOTIFY_DATA_UPDATE}). One record from the storage
 * manager that builds it to the controller that applies it; nothing converts it on the way.
 *
 * <p>{@link #generations()} is aligned with {@link #indexes()} (the put's batch order, restricted
 * to this partition). The per-sample shapes of a nested field are positional in the same order:
 * entry {@code i} is the shape of sample {@code indexes().get(i)}. The controller applies an update
 * atomically: either every (sample, field) pair becomes produced or, on a rejection, none does.
 * Names, index ranges and schemas are checked by the controller that applies it. Immutable and
 * thread-safe.
 *
 * @param partitionId the partition every sample belongs to
 * @param indexes the global indexes written, in batch order; may be empty (then only the fields are
 *     registered)
 * @param fields the schema of every field written, extracted from the written data (not from the
 *     request's metadata), in the order given
 * @param backendMeta the backend's metadata per field (for example a packed size), keyed by global
 *     index; only samples that have some are listed
 * @param generations the generation of each written sample (from the put's metadata), aligned with
 *     {@code indexes}; {@link BatchMeta#UNKNOWN_GENERATION} where the writer's metadata did not
 *     know it. The controller rejects the whole update with {@link ErrorCode#STALE_METADATA} when a
 *     known one is not the index's current generation
 */
public record ProductionUpdate(
    String partitionId,
    List<Long> indexes,
    Map<String, FieldSchema> fields,
    Map<Long, Map<String, Object>> backendMeta,
    List<Long> generations) {

  /**
   * Validates and copies the components.
   *
   * @throws TqException with {@code INVALID_ARGUMENT} for a missing partition, index list, field
   *     schema or index, or a generation list or per-sample shapes not aligned with the indexes
   */
  public ProductionUpdate {
    if (partitionId == null) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "partition_id must not be null");
    }
    if (indexes == null || fields == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "indexes and fields must not be null: indexes=" + indexes + " fields=" + fields);
    }
    List<Long> copy = new ArrayList<>(indexes.size());
    for (Long index : indexes) {
      if (index == null) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "global index=null in partition '" + partitionId + "'");
      }
      copy.add(index);
    }
    indexes = Collections.unmodifiableList(copy);
    int size = indexes.size();
    generations = MetaValues.alignedGenerations(generations, size, "ProductionUpdate");
    LinkedHashMap<String, FieldSchema> schema = new LinkedHashMap<>();
    fields.forEach(
        (name, entry) -> {
          if (entry == null) {
            throw new TqException(
                ErrorCode.INVALID_ARGUMENT, "field '" + name + "' has schema " + entry);
          }
          List<List<Long>> shapes = entry.perSampleShapes();
          if (shapes != null && shapes.size() != size) {
            throw new TqException(
                ErrorCode.INVALID_ARGUMENT,
                "per_sample_shapes length ("
                    + shapes.size()
                    + ") does not match number of global_indexes ("
                    + size
                    + ") for field '"
                    + name
                    + "'");
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
   * An update whose samples' generations are not known (written through metadata built by hand):
   * the controller does not check them.
   *
   * @param partitionId the partition
   * @param indexes the global indexes written
   * @param fields the schema of every field written
   * @param backendMeta per-sample, per-field backend metadata keyed by global index; or empty
   */
  public ProductionUpdate(
      String partitionId,
      List<Long> indexes,
      Map<String, FieldSchema> fields,
      Map<Long, Map<String, Object>> backendMeta) {
    this(partitionId, indexes, fields, backendMeta, null);
  }

  /**
   * An update without backend metadata whose generations are not known.
   *
   * @param partitionId the partition
   * @param indexes the samples written
   * @param fields the schema of every field written
   * @return the update
   */
  public static ProductionUpdate of(
      String partitionId, List<Long> indexes, Map<String, FieldSchema> fields) {
    return new ProductionUpdate(partitionId, indexes, fields, Map.of());
  }
}
