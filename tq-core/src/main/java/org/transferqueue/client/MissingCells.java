package org.transferqueue.client;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;

/**
 * Gives a read of cells the storage does not hold one error, whatever the backend: {@code
 * UNKNOWN_FIELD} when a requested field is not a field of a sample's partition (the controller has
 * no column of it there: no sample of the partition was ever produced for it), {@code NOT_FOUND}
 * when every field is one of the partition's but some cell is absent (never written, cleared, or
 * the sample does not exist).
 *
 * <p>The backends cannot tell these apart alike: a storage unit knows the fields it ever held, of
 * every partition, while a key-value store holds each cell as an independent object and knows no
 * fields at all. The controller's partition schema is the one authority, so the read path asks it,
 * and only after the storage failed: a successful read costs nothing.
 *
 * <p>Stateless and thread-safe.
 */
final class MissingCells {
  private MissingCells() {}

  /**
   * The error a failed read of {@code meta} should raise.
   *
   * @param meta the metadata whose cells were read
   * @param failure the storage's {@code NOT_FOUND} or {@code UNKNOWN_FIELD} failure
   * @param client answers partition and production queries (a controller failure here is added to
   *     {@code failure} as suppressed, and {@code failure} is returned)
   * @return {@code failure} itself when it is already a {@code NOT_FOUND} {@link StorageException}
   *     and that is the right code, else a {@link StorageException} with the right code, naming the
   *     fields and partitions, with {@code failure} as its cause
   */
  static TqException classify(BatchMeta meta, TqException failure, MetaClient client) {
    List<String> fields = meta.fieldNames();
    Set<String> partitions = new LinkedHashSet<>(meta.partitionIds());
    try {
      List<String> known = client.getPartitionList();
      for (String partition : partitions) {
        if (!known.contains(partition)) {
          continue; // its samples do not exist: their cells are missing, not their fields
        }
        if (client.getProductionStatus(partition, fields).isPresent()) {
          continue;
        }
        List<String> unknown = new ArrayList<>();
        for (String field : fields) {
          if (client.getProductionStatus(partition, List.of(field)).isEmpty()) {
            unknown.add(field);
          }
        }
        return unknownField(partition, unknown, failure);
      }
    } catch (TqException e) {
      failure.addSuppressed(e);
      return failure;
    }
    if (failure instanceof StorageException && failure.code() == ErrorCode.NOT_FOUND) {
      return failure;
    }
    return new StorageException(
        ErrorCode.NOT_FOUND,
        "cells of fields "
            + fields
            + " not found for samples of partitions "
            + partitions
            + ": "
            + failure.getMessage(),
        failure);
  }

  private static TqException unknownField(
      String partition, List<String> unknown, TqException failure) {
    return new StorageException(
        ErrorCode.UNKNOWN_FIELD,
        "fields "
            + unknown
            + " not found in partition '"
            + partition
            + "' (no sample of it was produced for them): "
            + failure.getMessage(),
        failure);
  }
}
