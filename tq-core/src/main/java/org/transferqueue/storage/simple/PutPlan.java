package org.transferqueue.storage.simple;

import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.storage.FieldSchemas;
import org.transferqueue.storage.PartitionGroup;
import org.transferqueue.tensor.Batch;

/**
 * A SimpleStorage put after the checks every manager makes before it sends a byte: the batch has
 * one row per sample, no global index repeats, the data's schema fits the metadata's, and the rows
 * are grouped by partition. The embedded {@link SimpleStorageManager} and the manager over remote
 * units build their puts from it, so both reject the same puts with the same errors.
 *
 * <pre>{@code
 * PutPlan plan = PutPlan.of(batch, meta);
 * if (plan.isEmpty()) return new PutResult(plan.schema(), List.of());
 * for (int p = 0; p < plan.partitions().size(); p++)
 *   for (RoutingGroup group : plan.route(p, units.size())) send(group);
 * }</pre>
 *
 * @param globalIndexes the samples' global indexes in batch order (caller must not modify)
 * @param generations their generations, aligned (caller must not modify)
 * @param schema the data's schema; null for a put whose data parser decides the schema later
 * @param partitions the rows of each partition, in order of first appearance
 */
public record PutPlan(
    long[] globalIndexes,
    long[] generations,
    SortedMap<String, FieldSchema> schema,
    List<PartitionGroup> partitions) {

  /**
   * Checks a put and plans it.
   *
   * @param batch the data
   * @param meta the samples' metadata
   * @return the plan; {@link #isEmpty()} for an empty batch, whose schema is empty
   * @throws org.transferqueue.TqException {@code SHAPE_MISMATCH} for a size mismatch, {@code
   *     DUPLICATE_KEY} for a repeated global index; {@code SCHEMA_CONFLICT} for data that does not
   *     fit the metadata
   */
  public static PutPlan of(Batch batch, BatchMeta meta) {
    return plan(batch, meta, true);
  }

  /**
   * Checks a put whose data a data parser turns into cells, and plans it: as {@link #of} without
   * the schema checks, which wait for the parsed data.
   *
   * @param batch the data, before parsing
   * @param meta the samples' metadata
   * @return the plan, with a null schema unless it {@link #isEmpty()}
   * @throws org.transferqueue.TqException {@code SHAPE_MISMATCH} for a size mismatch, {@code
   *     DUPLICATE_KEY} for a repeated global index
   */
  public static PutPlan unparsed(Batch batch, BatchMeta meta) {
    return plan(batch, meta, false);
  }

  private static PutPlan plan(Batch batch, BatchMeta meta, boolean withSchema) {
    FieldSchemas.requireMatchingSize(batch, meta);
    if (meta.isEmpty()) {
      return new PutPlan(new long[0], new long[0], new TreeMap<>(), List.of());
    }
    long[] gis = meta.globalIndexArray();
    FieldSchemas.requireDistinctIndexes(gis);
    SortedMap<String, FieldSchema> schema = null;
    if (withSchema) {
      schema = FieldSchemas.extract(batch);
      FieldSchemas.requireCompatible(meta, schema);
    }
    return new PutPlan(gis, meta.generationArray(), schema, PartitionGroup.of(meta));
  }

  /**
   * Whether the put carries no sample.
   *
   * @return true for an empty batch
   */
  public boolean isEmpty() {
    return globalIndexes.length == 0;
  }

  /**
   * The rows of one partition, grouped by the unit they live on ({@link UnitRouter}).
   *
   * @param partition the index of the partition in {@link #partitions()}
   * @param unitCount the number of units, at least 1
   * @return the groups, ordered by unit position; their positions are batch positions
   */
  public List<RoutingGroup> route(int partition, int unitCount) {
    return UnitRouter.route(globalIndexes, partitions.get(partition).positions(), unitCount);
  }
}
