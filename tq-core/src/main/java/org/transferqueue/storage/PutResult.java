package org.transferqueue.storage;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;

/**
 * What a completed put stored: the schema extracted from the data and the backend's per-sample
 * metadata, both as the controller accepted them. Immutable.
 *
 * @param fieldSchema the schema of the written fields, in the put's batch order for nested fields
 * @param backendMeta per sample of the put (batch order), the backend's metadata per field; empty
 *     when the backend records none
 */
public record PutResult(
    SortedMap<String, FieldSchema> fieldSchema, List<Map<String, Object>> backendMeta) {

  /** Copies the components. */
  public PutResult {
    fieldSchema = Collections.unmodifiableSortedMap(new TreeMap<>(fieldSchema));
    backendMeta = List.copyOf(backendMeta);
  }

  /**
   * The request's metadata updated with what was stored: the written fields' schema added and all
   * samples marked produced, plus the backend metadata per (sample, field).
   *
   * @param meta the metadata the put was made with
   * @return the updated metadata
   */
  public BatchMeta applyTo(BatchMeta meta) {
    BatchMeta updated = meta.addFields(fieldSchema, true);
    for (int i = 0; i < backendMeta.size(); i++) {
      Map<String, Object> row = backendMeta.get(i);
      if (row.isEmpty()) {
        continue; // no entry set nor iterator for a sample without backend metadata
      }
      for (Map.Entry<String, Object> e : row.entrySet()) {
        updated = updated.withBackendMeta(i, e.getKey(), e.getValue());
      }
    }
    return updated;
  }
}
