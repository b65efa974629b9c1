package org.transferqueue.storage;

import java.util.Arrays;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.tensor.Batch;

/**
 * The checks every storage manager makes on a put before writing: sizes, indexes, and the data's
 * field schema against the request's metadata. Stateless and thread-safe.
 */
public final class FieldSchemas {
  private FieldSchemas() {}

  /**
   * Extracts the schema of every field of a batch, with {@link FieldSchema#extract}.
   *
   * @param batch the data
   * @return the schema by field name; empty for a batch without fields or rows
   */
  public static SortedMap<String, FieldSchema> extract(Batch batch) {
    return new TreeMap<>(FieldSchema.extract(batch));
  }

  /**
   * Checks the data's schema against what the request's metadata already records for the same
   * fields: a tensor field stays a tensor field of the same dtype, an object field stays an object
   * field. Shapes may change (the controller then records the field as nested). Placeholders and
   * fields the metadata does not name are not checked.
   *
   * @param meta the request's metadata
   * @param data the schema extracted from the data
   * @throws StorageException with {@code SCHEMA_CONFLICT} naming the field, the recorded and the
   *     offered kind or dtype
   */
  public static void requireCompatible(BatchMeta meta, Map<String, FieldSchema> data) {
    for (Map.Entry<String, FieldSchema> e : data.entrySet()) {
      FieldSchema recorded = meta.fieldSchema().get(e.getKey());
      if (recorded == null || recorded.isPlaceholder()) {
        continue;
      }
      FieldSchema offered = e.getValue();
      if (recorded.nonTensor() != offered.nonTensor() || recorded.dtype() != offered.dtype()) {
        throw new StorageException(
            ErrorCode.SCHEMA_CONFLICT,
            "field '"
                + e.getKey()
                + "' is recorded as "
                + describe(recorded)
                + " but the put carries "
                + describe(offered));
      }
    }
  }

  private static String describe(FieldSchema schema) {
    if (schema.nonTensor()) {
      return "non-tensor values";
    }
    return schema.dtype()
        + (schema.nested() ? " nested tensors" : " tensors of shape " + schema.shape());
  }

  /**
   * Checks that a put's data and metadata describe the same number of samples.
   *
   * @param batch the data
   * @param meta the metadata
   * @throws StorageException with {@code SHAPE_MISMATCH} naming both sizes
   */
  public static void requireMatchingSize(Batch batch, BatchMeta meta) {
    if (batch.rowCount() != meta.size()) {
      throw new StorageException(
          ErrorCode.SHAPE_MISMATCH,
          "Batch size of data ("
              + batch.rowCount()
              + ") does not match expected ("
              + meta.size()
              + ")");
    }
  }

  /**
   * Checks that a put names every sample once and that indexes are not negative.
   *
   * @param globalIndexes the put's global indexes
   * @throws StorageException with {@code DUPLICATE_KEY} or {@code INVALID_ARGUMENT} naming the
   *     index
   */
  public static void requireDistinctIndexes(long[] globalIndexes) {
    long[] sorted = globalIndexes.clone();
    Arrays.sort(sorted);
    for (int i = 0; i < sorted.length; i++) {
      if (sorted[i] < 0) {
        throw new StorageException(
            ErrorCode.INVALID_ARGUMENT, "global index " + sorted[i] + " is negative");
      }
      if (i > 0 && sorted[i] == sorted[i - 1]) {
        throw new StorageException(
            ErrorCode.DUPLICATE_KEY,
            "global index " + sorted[i] + " appears more than once in one put");
      }
    }
  }
}
