package org.transferqueue.storage;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;

/**
 * Builds and sends the production updates of a put, one per {@link PartitionGroup}, for every
 * storage manager. Stateless and thread-safe.
 *
 * <pre>{@code
 * for (PartitionGroup group : PartitionGroup.of(meta)) {
 *   ProductionUpdates.publish(notifier, ProductionUpdates.of(meta, group, schema, List.of()));
 * }
 * }</pre>
 */
public final class ProductionUpdates {
  private ProductionUpdates() {}

  /**
   * The update of one partition group: its samples in batch order, with the matching per-sample
   * shapes and backend metadata.
   *
   * @param meta the put's metadata
   * @param group the partition group, from {@link PartitionGroup#of}
   * @param schema the schema extracted from the put's data; nested fields' per-sample shapes in
   *     batch order
   * @param backendMeta per sample in batch order, the backend's metadata per field; or empty
   * @return the update
   * @throws TqException with {@code INVALID_ARGUMENT} when a list is not aligned with {@code meta}
   */
  public static ProductionUpdate of(
      BatchMeta meta,
      PartitionGroup group,
      Map<String, FieldSchema> schema,
      List<Map<String, Object>> backendMeta) {
    int size = meta.size();
    if (!backendMeta.isEmpty() && backendMeta.size() != size) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "Length of custom_backend_meta ("
              + backendMeta.size()
              + ") does not match expected ("
              + size
              + ")");
    }
    boolean whole = group.size() == size;
    List<Long> gis = new ArrayList<>(group.size());
    List<Long> generations = new ArrayList<>(group.size());
    Map<Long, Map<String, Object>> metas = new LinkedHashMap<>();
    for (int row : group.positions()) {
      long gi = meta.globalIndex(row);
      gis.add(gi);
      generations.add(meta.generation(row));
      Map<String, Object> perField = backendMeta.isEmpty() ? null : backendMeta.get(row);
      if (perField != null && !perField.isEmpty()) {
        metas.put(gi, perField);
      }
    }
    SortedMap<String, FieldSchema> partSchema = new TreeMap<>();
    for (Map.Entry<String, FieldSchema> e : schema.entrySet()) {
      partSchema.put(e.getKey(), whole ? e.getValue() : select(e.getValue(), group.positions()));
    }
    return new ProductionUpdate(group.partitionId(), gis, partSchema, metas, generations);
  }

  private static FieldSchema select(FieldSchema schema, int[] rows) {
    List<List<Long>> shapes = schema.perSampleShapes();
    if (shapes == null) {
      return schema;
    }
    List<List<Long>> selected = new ArrayList<>(rows.length);
    for (int row : rows) {
      selected.add(shapes.get(row));
    }
    return new FieldSchema(
        schema.dtype(), schema.shape(), schema.nested(), schema.nonTensor(), selected);
  }

  /**
   * Sends one update and turns a rejection into a typed put failure.
   *
   * @param notifier where to send
   * @param update the update
   * @throws StorageException with {@code NOTIFICATION_FAILED}, naming the partition, with the
   *     notifier's exception as cause
   * @throws TqException the notifier's own {@code STALE_METADATA} error, unchanged, when a sample's
   *     generation is out of date (the put's metadata predates a clear)
   */
  public static void publish(ProductionNotifier notifier, ProductionUpdate update) {
    try {
      notifier.notifyProduced(update);
    } catch (TqException e) {
      if (e.code() == ErrorCode.STALE_METADATA) {
        throw e; // the put's own metadata is out of date: the notification itself worked
      }
      throw rejected(update, e);
    } catch (RuntimeException e) {
      throw rejected(update, e);
    }
  }

  private static StorageException rejected(ProductionUpdate update, RuntimeException e) {
    return new StorageException(
        ErrorCode.NOTIFICATION_FAILED,
        "controller did not accept the production update of partition '"
            + update.partitionId()
            + "' ("
            + update.indexes().size()
            + " samples, fields "
            + update.fields().keySet()
            + "): "
            + e.getMessage(),
        e);
  }

  /**
   * Notifies the controller of every partition of a put, in order. When partition {@code k} is
   * rejected, {@code rollBackFrom} is called with {@code k} so that storage takes back the data of
   * partitions {@code k} onwards; the partitions accepted before it stay stored and are named in
   * the error.
   *
   * @param notifier where to send
   * @param meta the put's metadata
   * @param partitions the put's partition groups, in the order to notify
   * @param schema the schema of the put's data
   * @param rollBackFrom takes back the data of partitions from the given position on
   * @throws StorageException with {@code NOTIFICATION_FAILED} after the rollback
   */
  public static void publishAll(
      ProductionNotifier notifier,
      BatchMeta meta,
      List<PartitionGroup> partitions,
      Map<String, FieldSchema> schema,
      java.util.function.IntConsumer rollBackFrom) {
    int accepted = 0;
    try {
      for (; accepted < partitions.size(); accepted++) {
        publish(notifier, of(meta, partitions.get(accepted), schema, List.of()));
      }
    } catch (RuntimeException e) {
      try {
        rollBackFrom.accept(accepted);
      } catch (RuntimeException rollback) {
        e.addSuppressed(rollback);
      }
      if (accepted == 0) {
        throw e;
      }
      List<String> kept =
          partitions.subList(0, accepted).stream().map(PartitionGroup::partitionId).toList();
      throw new StorageException(
          ErrorCode.NOTIFICATION_FAILED,
          e.getMessage() + "; partitions accepted before it stay stored: " + kept,
          e);
    }
  }
}
