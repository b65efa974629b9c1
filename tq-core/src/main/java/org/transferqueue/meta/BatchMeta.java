package org.transferqueue.meta;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;

/**
 * A columnar descriptor of a batch of samples: global indexes and their generations, partitions,
 * field schema, per-sample production status, batch-level extra info, per-sample tags (custom
 * metadata) and per-sample, per-field backend metadata. A batch may span several partitions.
 *
 * <p>A sample is its global index together with its <b>generation</b>: the controller recycles an
 * index once its sample is cleared and counts one generation more each time, so metadata obtained
 * before a clear names the old sample, and storage refuses it ({@link ErrorCode#STALE_METADATA})
 * instead of serving or overwriting the sample that reuses the index. Metadata from the controller
 * always carries generations; metadata built by hand may leave them {@link #UNKNOWN_GENERATION
 * unknown}, which storage does not check.
 *
 * <p>All per-sample columns are aligned by position. Instances are immutable and thread-safe: every
 * operation that "changes" a batch returns a new value and leaves this one untouched, and user maps
 * are deep-copied into unmodifiable form (see the package comment for the allowed value types).
 * Instances are built with {@link #builder()}:
 *
 * <pre>{@code
 * BatchMeta meta = BatchMeta.builder()
 *     .globalIndexes(List.of(0L, 1L, 2L))
 *     .partitionId("train_0")
 *     .field("input_ids", FieldSchema.regular(DType.INT64, 512))
 *     .build();
 * }</pre>
 */
public final class BatchMeta {
  /**
   * The generation of a sample whose generation the metadata does not know (metadata built by
   * hand): storage accepts it for whatever sample holds the index now.
   */
  public static final long UNKNOWN_GENERATION = -1;

  private static final BatchMeta EMPTY =
      new BatchMeta(
          new long[0],
          new long[0],
          List.of(),
          emptySchema(),
          new boolean[0],
          Map.of(),
          List.of(),
          List.of());

  private final long[] globalIndexes;
  private final long[] generations;
  private final List<String> partitionIds;
  private final SortedMap<String, FieldSchema> fieldSchema;
  private final boolean[] productionStatus;
  private final Map<String, Object> extraInfo;
  private final List<Map<String, Object>> tags;
  private final List<Map<String, Object>> backendMeta;

  /** Takes ownership of already validated, frozen columns; callers never pass shared arrays. */
  BatchMeta(
      long[] globalIndexes,
      long[] generations,
      List<String> partitionIds,
      SortedMap<String, FieldSchema> fieldSchema,
      boolean[] productionStatus,
      Map<String, Object> extraInfo,
      List<Map<String, Object>> tags,
      List<Map<String, Object>> backendMeta) {
    this.globalIndexes = globalIndexes;
    this.generations = generations;
    this.partitionIds = partitionIds;
    this.fieldSchema = fieldSchema;
    this.productionStatus = productionStatus;
    this.extraInfo = extraInfo;
    this.tags = tags;
    this.backendMeta = backendMeta;
  }

  /**
   * Starts building a batch.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The empty batch: no samples, no fields, not ready.
   *
   * @return the empty batch
   */
  public static BatchMeta empty() {
    return EMPTY;
  }

  /**
   * An empty batch that carries extra info.
   *
   * @param extraInfo batch-level metadata, deep-copied; null for none
   * @return the empty batch
   */
  public static BatchMeta empty(Map<String, ?> extraInfo) {
    return EMPTY.withExtraInfo(extraInfo);
  }

  /**
   * The number of samples.
   *
   * @return the size, 0 or more
   */
  public int size() {
    return globalIndexes.length;
  }

  /**
   * Whether the batch has no samples.
   *
   * @return true when {@link #size()} is 0
   */
  public boolean isEmpty() {
    return globalIndexes.length == 0;
  }

  /**
   * The global indexes in batch order; duplicates are possible.
   *
   * @return an unmodifiable view
   */
  public List<Long> globalIndexes() {
    return BatchMetaRows.view(globalIndexes.length, i -> globalIndexes[i]);
  }

  /**
   * The global index of one sample.
   *
   * @param position 0-based position in this batch
   * @return the global index
   */
  public long globalIndex(int position) {
    return globalIndexes[position];
  }

  /**
   * The global indexes as a fresh array.
   *
   * @return a copy the caller owns
   */
  public long[] globalIndexArray() {
    return globalIndexes.clone();
  }

  /**
   * The generation of one sample: how many times its global index had been cleared before this
   * sample was created.
   *
   * @param position 0-based position in this batch
   * @return the generation, or {@link #UNKNOWN_GENERATION}
   */
  public long generation(int position) {
    return generations[position];
  }

  /**
   * The generations of the samples, in batch order, aligned with the global indexes.
   *
   * @return a copy the caller owns; {@link #UNKNOWN_GENERATION} where unknown
   */
  public long[] generationArray() {
    return generations.clone();
  }

  /**
   * The partition of each sample, in batch order.
   *
   * @return an unmodifiable list
   */
  public List<String> partitionIds() {
    return partitionIds;
  }

  /**
   * The partition of one sample.
   *
   * @param position 0-based position in this batch
   * @return the partition id
   */
  public String partitionId(int position) {
    return partitionIds.get(position);
  }

  /**
   * The field schema, by field name in sorted order.
   *
   * @return an unmodifiable map
   */
  public SortedMap<String, FieldSchema> fieldSchema() {
    return fieldSchema;
  }

  /**
   * The schema of one field.
   *
   * @param field the field name
   * @return the entry
   * @throws TqException {@link ErrorCode#UNKNOWN_FIELD} when the field is not in this batch
   */
  public FieldSchema field(String field) {
    FieldSchema entry = fieldSchema.get(field);
    if (entry == null) {
      throw new TqException(
          ErrorCode.UNKNOWN_FIELD,
          "field '" + field + "' not found in field schema " + fieldSchema.keySet());
    }
    return entry;
  }

  /**
   * The field names, sorted alphabetically.
   *
   * @return an unmodifiable list
   */
  public List<String> fieldNames() {
    return List.copyOf(fieldSchema.keySet());
  }

  /**
   * Each sample's production status for the fields of this batch.
   *
   * @return an unmodifiable list, true = produced
   */
  public List<Boolean> productionStatus() {
    return BatchMetaRows.view(productionStatus.length, i -> productionStatus[i]);
  }

  /**
   * Whether one sample is produced for every field of this batch.
   *
   * @param position 0-based position in this batch
   * @return the production status
   */
  public boolean isProduced(int position) {
    Objects.checkIndex(position, productionStatus.length);
    return productionStatus[position];
  }

  /**
   * Whether the batch is non-empty and every sample is produced.
   *
   * @return true when ready
   */
  public boolean isReady() {
    if (productionStatus.length == 0) {
      return false;
    }
    for (boolean produced : productionStatus) {
      if (!produced) {
        return false;
      }
    }
    return true;
  }

  /**
   * Batch-level metadata; never stored by the controller.
   *
   * @return an unmodifiable map
   */
  public Map<String, Object> extraInfo() {
    return extraInfo;
  }

  /**
   * Per-sample tags (custom metadata), aligned with the global indexes.
   *
   * @return an unmodifiable list of unmodifiable maps
   */
  public List<Map<String, Object>> tags() {
    return tags;
  }

  /**
   * The tags of one sample.
   *
   * @param position 0-based position in this batch
   * @return an unmodifiable map, empty when the sample has none
   */
  public Map<String, Object> tags(int position) {
    return tags.get(position);
  }

  /**
   * Per-sample backend metadata: for each sample, field name to an opaque value written by the
   * storage backend. Keys starting with {@code _} are backend-wide entries kept by {@link
   * #selectFields}.
   *
   * @return an unmodifiable list of unmodifiable maps
   */
  public List<Map<String, Object>> backendMeta() {
    return backendMeta;
  }

  /**
   * The backend metadata of one sample.
   *
   * @param position 0-based position in this batch
   * @return an unmodifiable map
   */
  public Map<String, Object> backendMeta(int position) {
    return backendMeta.get(position);
  }

  /**
   * The dtype of a field, once per sample.
   *
   * @param field the field name
   * @return {@link #size()} copies of the dtype (null entries for non-tensor fields)
   * @throws TqException {@link ErrorCode#UNKNOWN_FIELD} when the field is not in this batch
   */
  public List<DType> dtypes(String field) {
    return Collections.nCopies(size(), field(field).dtype());
  }

  /**
   * The shape of a field, once per sample.
   *
   * @param field the field name
   * @return the per-sample shapes of a nested field, otherwise {@link #size()} copies of its shape
   * @throws TqException {@link ErrorCode#UNKNOWN_FIELD} when the field is not in this batch
   */
  public List<List<Long>> shapes(String field) {
    FieldSchema entry = field(field);
    return entry.perSampleShapes() != null
        ? entry.perSampleShapes()
        : Collections.nCopies(size(), entry.shape());
  }

  /**
   * Read-only views of the samples.
   *
   * @return a list whose i-th element describes the i-th sample
   */
  public List<SampleView> samples() {
    return BatchMetaRows.view(globalIndexes.length, this::sample);
  }

  private SampleView sample(int i) {
    Objects.checkIndex(i, globalIndexes.length);
    LinkedHashMap<String, SampleView.Field> fields = new LinkedHashMap<>();
    for (Map.Entry<String, FieldSchema> e : fieldSchema.entrySet()) {
      FieldSchema s = e.getValue();
      fields.put(
          e.getKey(), new SampleView.Field(s.dtype(), s.shapeAt(i), s.nested(), s.nonTensor()));
    }
    return new SampleView(
        globalIndexes[i],
        partitionIds.get(i),
        productionStatus[i],
        tags.get(i),
        Collections.unmodifiableMap(fields));
  }

  // ---------------------------------------------------------------------------------------------
  // Extra info, tags, backend metadata, fields, generations: new values

  /**
   * This batch with the samples' generations replaced, for example by the current ones the
   * controller reports for metadata built by hand.
   *
   * @param newGenerations one generation per sample, each at least 0 or {@link #UNKNOWN_GENERATION}
   * @return a new batch
   * @throws TqException {@link ErrorCode#SHAPE_MISMATCH} when the length is not {@link #size()},
   *     {@link ErrorCode#INVALID_ARGUMENT} for a generation below -1
   */
  public BatchMeta withGenerations(long... newGenerations) {
    return new BatchMeta(
        globalIndexes,
        BatchMetaRows.checkGenerations(newGenerations, size()),
        partitionIds,
        fieldSchema,
        productionStatus,
        extraInfo,
        tags,
        backendMeta);
  }

  /**
   * This batch with one extra-info entry set.
   *
   * @param key the key
   * @param value a JSON-compatible value, possibly null
   * @return a new batch
   */
  public BatchMeta withExtraInfo(String key, Object value) {
    MetaValues.checkKey(key);
    LinkedHashMap<String, Object> info = new LinkedHashMap<>(extraInfo);
    info.put(key, MetaValues.freeze(value));
    return withExtraInfoUnchecked(Collections.unmodifiableMap(info));
  }

  /**
   * This batch with extra-info entries added or overwritten.
   *
   * @param entries the entries; null or empty changes nothing
   * @return a new batch, or this one when nothing changes
   */
  public BatchMeta withExtraInfo(Map<String, ?> entries) {
    if (entries == null || entries.isEmpty()) {
      return this;
    }
    return withExtraInfoUnchecked(MetaValues.merge(extraInfo, MetaValues.freezeMap(entries)));
  }

  /**
   * This batch without one extra-info entry.
   *
   * @param key the key to remove
   * @return a new batch, or this one when the key is absent
   */
  public BatchMeta withoutExtraInfo(String key) {
    if (!extraInfo.containsKey(key)) {
      return this;
    }
    LinkedHashMap<String, Object> info = new LinkedHashMap<>(extraInfo);
    info.remove(key);
    return withExtraInfoUnchecked(Collections.unmodifiableMap(info));
  }

  /**
   * This batch without any extra info.
   *
   * @return a new batch
   */
  public BatchMeta withoutExtraInfo() {
    return withExtraInfoUnchecked(Map.of());
  }

  private BatchMeta withExtraInfoUnchecked(Map<String, Object> info) {
    return new BatchMeta(
        globalIndexes,
        generations,
        partitionIds,
        fieldSchema,
        productionStatus,
        info,
        tags,
        backendMeta);
  }

  /**
   * This batch with tags merged into each sample's tags: given keys overwrite, others are kept.
   *
   * @param updates one map per sample; null changes nothing
   * @return a new batch
   * @throws TqException {@link ErrorCode#SHAPE_MISMATCH} when the list length is not {@link
   *     #size()}
   */
  public BatchMeta withTagsMerged(List<? extends Map<String, ?>> updates) {
    if (updates == null) {
      return this;
    }
    BatchMetaRows.checkColumn("tags update", updates.size(), size());
    ArrayList<Map<String, Object>> merged = new ArrayList<>(size());
    for (int i = 0; i < size(); i++) {
      merged.add(MetaValues.merge(tags.get(i), MetaValues.freezeMap(updates.get(i))));
    }
    return withRows(Collections.unmodifiableList(merged), backendMeta);
  }

  /**
   * This batch with every sample's tags replaced.
   *
   * @param replacement one map per sample
   * @return a new batch
   * @throws TqException {@link ErrorCode#SHAPE_MISMATCH} when the list length is not {@link
   *     #size()}
   */
  public BatchMeta withTags(List<? extends Map<String, ?>> replacement) {
    BatchMetaRows.checkColumn("tags", replacement.size(), size());
    return withRows(MetaValues.freezeRows(replacement), backendMeta);
  }

  /**
   * This batch with every sample's tags emptied.
   *
   * @return a new batch
   */
  public BatchMeta withoutTags() {
    return withRows(Collections.nCopies(size(), Map.of()), backendMeta);
  }

  /** This batch with new, already frozen per-sample tags and backend metadata. */
  private BatchMeta withRows(
      List<Map<String, Object>> newTags, List<Map<String, Object>> newBackendMeta) {
    return new BatchMeta(
        globalIndexes,
        generations,
        partitionIds,
        fieldSchema,
        productionStatus,
        extraInfo,
        newTags,
        newBackendMeta);
  }

  /**
   * This batch with one backend-metadata entry of one sample set.
   *
   * @param position 0-based position in this batch
   * @param key the field name (or a backend-wide key starting with {@code _})
   * @param value a JSON-compatible value
   * @return a new batch
   */
  public BatchMeta withBackendMeta(int position, String key, Object value) {
    Objects.checkIndex(position, size());
    MetaValues.checkKey(key);
    ArrayList<Map<String, Object>> rows = new ArrayList<>(backendMeta);
    LinkedHashMap<String, Object> row = new LinkedHashMap<>(rows.get(position));
    row.put(key, MetaValues.freeze(value));
    rows.set(position, Collections.unmodifiableMap(row));
    return withRows(tags, Collections.unmodifiableList(rows));
  }

  /**
   * This batch with the fields of written data added or overwritten, their schema extracted by
   * {@link FieldSchema#extract(Batch)}.
   *
   * @param data the data written for these samples, row i for sample i; only inspected
   * @param setAllReady whether every sample becomes produced
   * @return a new batch; this one when {@code data} has no rows
   * @throws TqException {@link ErrorCode#SHAPE_MISMATCH} when the data's row count differs from
   *     {@link #size()}
   */
  public BatchMeta addFields(Batch data, boolean setAllReady) {
    if (data.rowCount() == 0) {
      return this;
    }
    if (data.rowCount() != size()) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "batch size mismatch: data has "
              + data.rowCount()
              + " rows, metadata "
              + size()
              + " samples");
    }
    return addFields(FieldSchema.extract(data), setAllReady);
  }

  /**
   * This batch with fields added or overwritten, for example after a put wrote them.
   *
   * @param fields schema entries by field name; nested entries list one shape per sample
   * @param setAllReady whether every sample becomes produced
   * @return a new batch; this one when {@code fields} is empty
   * @throws TqException {@link ErrorCode#SHAPE_MISMATCH} when a per-sample list has the wrong
   *     length
   */
  public BatchMeta addFields(Map<String, FieldSchema> fields, boolean setAllReady) {
    if (fields.isEmpty()) {
      return this;
    }
    TreeMap<String, FieldSchema> schema = new TreeMap<>(fieldSchema);
    for (Map.Entry<String, FieldSchema> e : fields.entrySet()) {
      BatchMetaRows.checkPerSample(e.getKey(), e.getValue(), size());
      schema.put(Objects.requireNonNull(e.getKey(), "field name"), e.getValue());
    }
    boolean[] status = productionStatus;
    if (setAllReady) {
      status = new boolean[size()];
      Arrays.fill(status, true);
    }
    return new BatchMeta(
        globalIndexes,
        generations,
        partitionIds,
        Collections.unmodifiableSortedMap(schema),
        status,
        extraInfo,
        tags,
        backendMeta);
  }

  // ---------------------------------------------------------------------------------------------
  // Selection and restructuring

  /**
   * The samples at the given positions, in the given order; duplicates repeat a sample.
   *
   * @param positions 0-based positions into this batch
   * @return a new batch that keeps every field (an empty selection keeps the schema too)
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when a position is outside {@code [0,
   *     size)}
   */
  public BatchMeta selectSamples(int... positions) {
    return BatchMetaRows.select(this, positions);
  }

  /**
   * The samples at the given positions; see {@link #selectSamples(int...)}.
   *
   * @param positions 0-based positions into this batch
   * @return a new batch
   */
  public BatchMeta selectSamples(List<Integer> positions) {
    return selectSamples(positions.stream().mapToInt(Integer::intValue).toArray());
  }

  /**
   * This batch restricted to some fields; unknown names are ignored.
   *
   * <p>Backend metadata rows keep the entries of the selected fields and every entry whose key
   * starts with {@code _}. Production status is kept unchanged.
   *
   * @param names the field names to keep
   * @return a new batch
   */
  public BatchMeta selectFields(Collection<String> names) {
    return BatchMetaRows.selectFields(this, names);
  }

  /**
   * One sample as a batch.
   *
   * @param position 0-based position; negative values count from the end
   * @return a one-sample batch
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when the position is out of range
   */
  public BatchMeta get(int position) {
    return BatchMetaRows.get(this, position);
  }

  /**
   * A slice with the semantics of a Python slice {@code [start:stop:step]}: negative bounds count
   * from the end and bounds are clamped.
   *
   * @param start first position (inclusive)
   * @param stop end position (exclusive)
   * @param step the stride, not 0
   * @return a new batch
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when {@code step} is 0
   */
  public BatchMeta slice(int start, int stop, int step) {
    return BatchMetaRows.slice(this, start, stop, step);
  }

  /**
   * Splits the batch into {@code n} contiguous chunks; the first {@code size % n} chunks hold one
   * sample more than the others. When {@code n > size} the trailing chunks are empty.
   *
   * @param n the number of chunks, at least 1
   * @return the chunks in order
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when {@code n < 1}
   */
  public List<BatchMeta> chunk(int n) {
    return BatchMetaRows.chunk(this, n);
  }

  /**
   * Splits the batch by partition: one chunk per distinct partition id, in order of first
   * appearance, each keeping the original relative order.
   *
   * @return the chunks
   */
  public List<BatchMeta> chunkByPartition() {
    return BatchMetaRows.chunkByPartition(this);
  }

  /**
   * This batch with its samples permuted: sample {@code i} of the result is sample {@code
   * positions[i]} of this batch.
   *
   * @param positions a permutation of {@code 0..size-1}
   * @return a new batch
   * @throws TqException {@link ErrorCode#SHAPE_MISMATCH} when the length differs from the size;
   *     {@link ErrorCode#DUPLICATE_KEY} on a repeated position; {@link ErrorCode#INVALID_ARGUMENT}
   *     on a position out of range
   */
  public BatchMeta reorder(int... positions) {
    BatchMetaRows.checkPermutation(positions, size());
    return BatchMetaRows.rows(this, positions.clone());
  }

  /**
   * Merges the fields of another batch over the same samples.
   *
   * <p>When either side is empty the other is returned. Otherwise the global indexes and partitions
   * must be identical; the schema of {@code other} wins on name clashes; production status is the
   * element-wise AND; extra info, tags and backend metadata are merged per key with {@code other}
   * winning.
   *
   * @param other the other batch; null counts as empty
   * @return the merged batch
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when the samples differ
   */
  public BatchMeta union(BatchMeta other) {
    return BatchMetaMerge.union(this, other);
  }

  /**
   * Appends batches, validating their fields; see {@link #concat(List, boolean)}.
   *
   * @param batches the batches in order
   * @return the concatenation
   */
  public static BatchMeta concat(List<BatchMeta> batches) {
    return concat(batches, true);
  }

  /**
   * Appends the rows of several batches.
   *
   * <p>Null and empty members are skipped; with none left the result is empty. With {@code
   * validate}, every member must have the first member's field names and dtypes. The result's
   * fields are the first member's; a field is nested when any member has it nested or when regular
   * members disagree on its shape, and then it lists each sample's shape. Extra info is the union
   * of all members; a key with differing values (or types, as {@code 1} and {@code 1.0}) is
   * rejected.
   *
   * @param batches the batches in order
   * @param validate whether to check field names and dtypes
   * @return the concatenation
   * @throws TqException {@link ErrorCode#SCHEMA_CONFLICT} on mismatching fields or dtypes; {@link
   *     ErrorCode#INVALID_ARGUMENT} on conflicting extra info
   */
  public static BatchMeta concat(List<BatchMeta> batches, boolean validate) {
    return BatchMetaMerge.concat(batches, validate);
  }

  // ---------------------------------------------------------------------------------------------
  // Package internals used by BatchMetaMerge

  long[] indexArray() {
    return globalIndexes;
  }

  long[] generationsArray() {
    return generations;
  }

  boolean[] statusArray() {
    return productionStatus;
  }

  private static SortedMap<String, FieldSchema> emptySchema() {
    return Collections.unmodifiableSortedMap(new TreeMap<>());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BatchMeta b
        && Arrays.equals(globalIndexes, b.globalIndexes)
        && Arrays.equals(generations, b.generations)
        && partitionIds.equals(b.partitionIds)
        && fieldSchema.equals(b.fieldSchema)
        && Arrays.equals(productionStatus, b.productionStatus)
        && extraInfo.equals(b.extraInfo)
        && tags.equals(b.tags)
        && backendMeta.equals(b.backendMeta);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        Arrays.hashCode(globalIndexes),
        Arrays.hashCode(generations),
        partitionIds,
        fieldSchema,
        Arrays.hashCode(productionStatus),
        extraInfo,
        tags,
        backendMeta);
  }

  @Override
  public String toString() {
    return "BatchMeta[size="
        + size()
        + ", globalIndexes="
        + Arrays.toString(globalIndexes)
        + ", generations="
        + Arrays.toString(generations)
        + ", partitionIds="
        + partitionIds
        + ", fields="
        + fieldSchema
        + ", ready="
        + isReady()
        + ", extraInfo="
        + extraInfo
        + "]";
  }

  /**
   * Builds a {@link BatchMeta}; validates everything once in {@link #build()}.
   *
   * <p>Not thread-safe. Inputs are copied at {@link #build()}, so the builder may be reused.
   */
  public static final class Builder extends AbstractBatchMetaBuilder {
    private Builder() {}
  }
}
