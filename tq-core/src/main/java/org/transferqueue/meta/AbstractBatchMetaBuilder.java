package org.transferqueue.meta;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The skeleton of {@link BatchMeta.Builder}: the builder's inputs, its setters and the validation
 * of {@link #build()}. Package-private so that the public type stays {@code BatchMeta.Builder}; its
 * public members are the builder's API.
 *
 * <p>Not thread-safe. Inputs are copied at {@link #build()}, so the builder may be reused.
 */
abstract sealed class AbstractBatchMetaBuilder permits BatchMeta.Builder {
  private long[] globalIndexes = new long[0];
  private long[] generations;
  private List<String> partitionIds;
  private String commonPartitionId;
  private final TreeMap<String, FieldSchema> fieldSchema = new TreeMap<>();
  private List<Boolean> productionStatus;
  private boolean allProduced;
  private Map<String, ?> extraInfo;
  private List<? extends Map<String, ?>> tags;
  private List<? extends Map<String, ?>> backendMeta;

  /**
   * Sets the global indexes.
   *
   * @param indexes the indexes in batch order
   * @return this builder
   */
  public BatchMeta.Builder globalIndexes(List<Long> indexes) {
    long[] copy = new long[indexes.size()];
    for (int i = 0; i < copy.length; i++) {
      Long gi = indexes.get(i);
      if (gi == null) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "global index at position " + i + " is null");
      }
      copy[i] = gi;
    }
    this.globalIndexes = copy;
    return self();
  }

  /**
   * Sets the global indexes.
   *
   * @param indexes the indexes in batch order
   * @return this builder
   */
  public BatchMeta.Builder globalIndexes(long... indexes) {
    this.globalIndexes = indexes.clone();
    return self();
  }

  /**
   * Sets the generation of each sample (see {@link BatchMeta#generation}); without it every
   * generation is {@link BatchMeta#UNKNOWN_GENERATION}.
   *
   * @param generations one generation per global index, each at least 0 or {@link
   *     BatchMeta#UNKNOWN_GENERATION}
   * @return this builder
   */
  public BatchMeta.Builder generations(long... generations) {
    this.generations = generations.clone();
    return self();
  }

  /**
   * Sets the partition of each sample.
   *
   * @param ids one partition id per global index
   * @return this builder
   */
  public BatchMeta.Builder partitionIds(List<String> ids) {
    this.partitionIds = Objects.requireNonNull(ids, "ids");
    this.commonPartitionId = null;
    return self();
  }

  /**
   * Puts every sample in one partition.
   *
   * @param id the partition id
   * @return this builder
   */
  public BatchMeta.Builder partitionId(String id) {
    this.commonPartitionId = Objects.requireNonNull(id, "id");
    this.partitionIds = null;
    return self();
  }

  /**
   * Adds or replaces one field's schema.
   *
   * @param name the field name
   * @param schema the entry
   * @return this builder
   */
  public BatchMeta.Builder field(String name, FieldSchema schema) {
    fieldSchema.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(schema, name));
    return self();
  }

  /**
   * Adds or replaces several fields' schema.
   *
   * @param schema entries by field name
   * @return this builder
   */
  public BatchMeta.Builder fieldSchema(Map<String, FieldSchema> schema) {
    schema.forEach(this::field);
    return self();
  }

  /**
   * Sets the production status; without it every sample is not produced.
   *
   * @param status one flag per sample
   * @return this builder
   */
  public BatchMeta.Builder productionStatus(List<Boolean> status) {
    this.productionStatus = Objects.requireNonNull(status, "status");
    this.allProduced = false;
    return self();
  }

  /**
   * Marks every sample produced.
   *
   * @return this builder
   */
  public BatchMeta.Builder allProduced() {
    this.productionStatus = null;
    this.allProduced = true;
    return self();
  }

  /**
   * Sets the batch-level extra info.
   *
   * @param info JSON-compatible entries
   * @return this builder
   */
  public BatchMeta.Builder extraInfo(Map<String, ?> info) {
    this.extraInfo = info;
    return self();
  }

  /**
   * Sets the per-sample tags; null or empty gives every sample empty tags.
   *
   * @param rows one map per sample
   * @return this builder
   */
  public BatchMeta.Builder tags(List<? extends Map<String, ?>> rows) {
    this.tags = rows;
    return self();
  }

  /**
   * Sets the per-sample backend metadata; null or empty gives every sample an empty map.
   *
   * @param rows one map (field name to opaque value) per sample
   * @return this builder
   */
  public BatchMeta.Builder backendMeta(List<? extends Map<String, ?>> rows) {
    this.backendMeta = rows;
    return self();
  }

  /**
   * Validates and builds the batch.
   *
   * @return the batch
   * @throws TqException {@link ErrorCode#SHAPE_MISMATCH} when a per-sample column's length differs
   *     from the number of global indexes; {@link ErrorCode#INVALID_ARGUMENT} on a null index or
   *     partition id, or a metadata value that is not JSON-compatible
   */
  public BatchMeta build() {
    int n = globalIndexes.length;
    long[] gis = globalIndexes.clone();
    for (int i = 0; i < n; i++) {
      if (gis[i] < 0) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "global index at position " + i + " is " + gis[i]);
      }
    }
    long[] gens;
    if (generations == null) {
      gens = new long[n];
      Arrays.fill(gens, BatchMeta.UNKNOWN_GENERATION);
    } else {
      gens = BatchMetaRows.checkGenerations(generations, n);
    }
    List<String> pids = partitionIds(commonPartitionId, partitionIds, n);
    for (Map.Entry<String, FieldSchema> e : fieldSchema.entrySet()) {
      BatchMetaRows.checkPerSample(e.getKey(), e.getValue(), n);
    }
    boolean[] status = new boolean[n];
    if (allProduced) {
      Arrays.fill(status, true);
    } else if (productionStatus != null) {
      BatchMetaRows.checkColumn("production status", productionStatus.size(), n);
      for (int i = 0; i < n; i++) {
        status[i] = Boolean.TRUE.equals(productionStatus.get(i));
      }
    }
    return new BatchMeta(
        gis,
        gens,
        pids,
        Collections.unmodifiableSortedMap(new TreeMap<>(fieldSchema)),
        status,
        MetaValues.freezeMap(extraInfo),
        rowsOrEmpty("tags", tags, n),
        rowsOrEmpty("backend metadata", backendMeta, n));
  }

  /** The partition column: one id for all, or one per sample. */
  private static List<String> partitionIds(
      String commonPartitionId, List<String> partitionIds, int n) {
    if (commonPartitionId != null) {
      return Collections.nCopies(n, commonPartitionId);
    }
    List<String> ids = partitionIds == null ? List.of() : partitionIds;
    if (ids.size() != n) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "Length mismatch: " + n + " global indexes but " + ids.size() + " partition ids");
    }
    for (int i = 0; i < n; i++) {
      if (ids.get(i) == null) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "partition id at position " + i + " is null");
      }
    }
    return List.copyOf(ids);
  }

  private static List<Map<String, Object>> rowsOrEmpty(
      String what, List<? extends Map<String, ?>> rows, int n) {
    if (rows == null || rows.isEmpty()) {
      return Collections.nCopies(n, Map.of());
    }
    BatchMetaRows.checkColumn(what, rows.size(), n);
    return MetaValues.freezeRows(rows);
  }

  private BatchMeta.Builder self() {
    return (BatchMeta.Builder) this;
  }
}
