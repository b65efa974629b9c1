package org.transferqueue.storage;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;

/**
 * The cells of one partition that a put has written: the body of the controller's data-update
 * notification.
 *
 * <p>All per-sample lists are aligned with {@link #globalIndexes()} (the put's batch order,
 * restricted to this partition). In {@link #fieldSchema()} a nested field's per-sample shapes are
 * positional in the same order, so entry {@code i} is the shape of sample {@code
 * globalIndexes().get(i)}. Immutable and thread-safe.
 *
 * @param partitionId the partition every sample belongs to
 * @param globalIndexes the written samples, in batch order
 * @param fieldSchema the schema extracted from the written data (not from the request's metadata),
 *     by field name
 * @param backendMeta per sample, the backend's metadata per field (for example a packed size);
 *     either empty when the backend records none, or one map per sample
 * @param generations the generation of each written sample (from the put's metadata), aligned with
 *     the global indexes; {@link BatchMeta#UNKNOWN_GENERATION} where the metadata did not know it
 */
public record ProductionUpdate(
    String partitionId,
    List<Long> globalIndexes,
    SortedMap<String, FieldSchema> fieldSchema,
    List<Map<String, Object>> backendMeta,
    List<Long> generations) {

  /**
   * Validates and copies the components.
   *
   * @throws TqException with {@code INVALID_ARGUMENT} when a list is not aligned with the global
   *     indexes
   */
  public ProductionUpdate {
    Objects.requireNonNull(partitionId, "partitionId");
    globalIndexes = List.copyOf(globalIndexes);
    fieldSchema = Collections.unmodifiableSortedMap(new TreeMap<>(fieldSchema));
    backendMeta = List.copyOf(backendMeta);
    int size = globalIndexes.size();
    generations =
        generations == null
            ? Collections.nCopies(size, BatchMeta.UNKNOWN_GENERATION)
            : List.copyOf(generations);
    if (generations.size() != size) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "generations has "
              + generations.size()
              + " entries, globalIndexes has "
              + size
              + " (partition '"
              + partitionId
              + "')");
    }
    if (!backendMeta.isEmpty() && backendMeta.size() != size) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "backendMeta has "
              + backendMeta.size()
              + " entries, globalIndexes has "
              + size
              + " (partition '"
              + partitionId
              + "')");
    }
    for (Map.Entry<String, FieldSchema> e : fieldSchema.entrySet()) {
      List<List<Long>> shapes = e.getValue().perSampleShapes();
      if (shapes != null && shapes.size() != size) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "per_sample_shapes length ("
                + shapes.size()
                + ") does not match number of global_indexes ("
                + size
                + ") for field '"
                + e.getKey()
                + "'");
      }
    }
  }

  /**
   * An update whose samples' generations are not known (written through metadata built by hand).
   *
   * @param partitionId the partition every sample belongs to
   * @param globalIndexes the written samples, in batch order
   * @param fieldSchema the schema extracted from the written data
   * @param backendMeta per sample, the backend's metadata per field; or empty
   */
  public ProductionUpdate(
      String partitionId,
      List<Long> globalIndexes,
      SortedMap<String, FieldSchema> fieldSchema,
      List<Map<String, Object>> backendMeta) {
    this(partitionId, globalIndexes, fieldSchema, backendMeta, null);
  }
}
