package org.transferqueue.meta;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.transferqueue.Distinct;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The key-value interface's descriptor of a batch: user keys, one tag map per key, the partition,
 * the fields and batch-level extra info.
 *
 * <p>Immutable and thread-safe: keys, fields, tags and extra info are deep-copied into unmodifiable
 * form by the canonical constructor, and every operation returns a new value.
 *
 * @param keys the sample keys, unique
 * @param tags one tag map per key, aligned with {@code keys}
 * @param partitionId the partition, or null when not known
 * @param fields the field names, unique; null when not specified
 * @param extraInfo batch-level metadata; null is read as empty
 * @param globalIndexes the global index of each key's sample when the descriptor was made, aligned
 *     with {@code keys} (-1 where not known; null: all unknown)
 * @param generations the generation of each key's sample when the descriptor was made, aligned with
 *     {@code keys} ({@link BatchMeta#UNKNOWN_GENERATION} where not known; null: all unknown): a
 *     read through the descriptor of a key that was cleared and created again since (it names
 *     another sample now) is refused with {@link ErrorCode#STALE_METADATA}
 */
public record KvBatchMeta(
    List<String> keys,
    List<Map<String, Object>> tags,
    String partitionId,
    List<String> fields,
    Map<String, Object> extraInfo,
    List<Long> globalIndexes,
    List<Long> generations) {

  private static final KvBatchMeta EMPTY =
      new KvBatchMeta(List.of(), List.of(), null, null, null, null, null);

  /**
   * Validates and copies the components.
   *
   * @throws TqException {@link ErrorCode#SHAPE_MISMATCH} when keys and tags differ in length;
   *     {@link ErrorCode#DUPLICATE_KEY} on duplicated keys or fields; {@link
   *     ErrorCode#INVALID_ARGUMENT} on a null key or a value that is not JSON-compatible
   */
  public KvBatchMeta {
    keys = keys == null ? List.of() : List.copyOf(keys);
    List<? extends Map<String, ?>> rawTags = tags == null ? List.of() : tags;
    if (keys.size() != rawTags.size()) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "keys and tags must have same length: "
              + keys.size()
              + " keys, "
              + rawTags.size()
              + " tags");
    }
    Set<String> duplicates = duplicates(keys);
    if (!duplicates.isEmpty()) {
      throw new TqException(ErrorCode.DUPLICATE_KEY, "Got duplicated keys: " + duplicates);
    }
    if (fields != null) {
      fields = List.copyOf(fields);
      Set<String> duplicateFields = duplicates(fields);
      if (!duplicateFields.isEmpty()) {
        throw new TqException(ErrorCode.DUPLICATE_KEY, "Got duplicated fields: " + duplicateFields);
      }
    }
    tags = MetaValues.freezeRows(rawTags);
    extraInfo = MetaValues.freezeMap(extraInfo);
    globalIndexes = sampleColumn(globalIndexes, keys.size(), "global indexes");
    generations = sampleColumn(generations, keys.size(), "generations");
  }

  /**
   * A descriptor whose keys' generations are not known (built by hand): reads resolve each key to
   * whatever sample it names now.
   *
   * @param keys the sample keys, unique
   * @param tags one tag map per key
   * @param partitionId the partition, or null when not known
   * @param fields the field names, unique; null when not specified
   * @param extraInfo batch-level metadata; null is read as empty
   */
  public KvBatchMeta(
      List<String> keys,
      List<Map<String, Object>> tags,
      String partitionId,
      List<String> fields,
      Map<String, Object> extraInfo) {
    this(keys, tags, partitionId, fields, extraInfo, null, null);
  }

  /** A per-key column of sample identity: -1 (unknown) or a value of at least 0. */
  private static List<Long> sampleColumn(List<Long> column, int size, String what) {
    if (column == null) {
      return Collections.nCopies(size, BatchMeta.UNKNOWN_GENERATION);
    }
    if (column.size() != size) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "keys and " + what + " must have same length: " + size + " keys, " + column.size());
    }
    for (Long value : column) {
      if (value == null || value < -1) {
        throw new TqException(ErrorCode.INVALID_ARGUMENT, "invalid " + what + " entry " + value);
      }
    }
    return List.copyOf(column);
  }

  /**
   * Whether the descriptor names key {@code i}'s sample (index and generation).
   *
   * @param i the key's position
   * @return false when either is unknown
   */
  public boolean knowsSample(int i) {
    return globalIndexes.get(i) >= 0 && generations.get(i) >= 0;
  }

  /**
   * The descriptor of keys written or resolved together with their samples: the keys' generations
   * come from the samples' metadata.
   *
   * @param keys the keys, in the order of {@code samples}' rows
   * @param samples the keys' samples, one row per key
   * @param fields the field names, or null
   * @return the descriptor, with {@code samples}' tags and partition
   */
  public static KvBatchMeta of(List<String> keys, BatchMeta samples, List<String> fields) {
    long[] generations = samples.generationArray();
    List<Long> boxed = new ArrayList<>(generations.length);
    for (long generation : generations) {
      boxed.add(generation);
    }
    String partition = samples.isEmpty() ? null : samples.partitionId(0);
    return new KvBatchMeta(
        keys, samples.tags(), partition, fields, null, samples.globalIndexes(), boxed);
  }

  /**
   * A descriptor without extra info.
   *
   * @param keys the sample keys
   * @param tags one tag map per key
   * @param partitionId the partition
   * @param fields the field names, or null
   * @return the descriptor
   */
  public static KvBatchMeta of(
      List<String> keys, List<Map<String, Object>> tags, String partitionId, List<String> fields) {
    return new KvBatchMeta(keys, tags, partitionId, fields, null);
  }

  /**
   * The empty descriptor: no keys, no partition, no fields.
   *
   * @return the empty descriptor
   */
  public static KvBatchMeta empty() {
    return EMPTY;
  }

  /**
   * The number of keys.
   *
   * @return the size
   */
  public int size() {
    return keys.size();
  }

  /**
   * Whether there are no keys.
   *
   * @return true when empty
   */
  public boolean isEmpty() {
    return keys.isEmpty();
  }

  /**
   * This descriptor with other fields.
   *
   * @param newFields the field names, unique; null for unspecified
   * @return a new descriptor
   */
  public KvBatchMeta withFields(List<String> newFields) {
    return new KvBatchMeta(
        keys, tags, partitionId, newFields, extraInfo, globalIndexes, generations);
  }

  /**
   * This descriptor with other tags.
   *
   * @param newTags one map per key
   * @return a new descriptor
   */
  public KvBatchMeta withTags(List<? extends Map<String, ?>> newTags) {
    return new KvBatchMeta(
        keys, copyRows(newTags), partitionId, fields, extraInfo, globalIndexes, generations);
  }

  /**
   * The rows of the given keys, in the requested order.
   *
   * @param selected keys of this descriptor, unique
   * @return a new descriptor with the same partition, fields and extra info
   * @throws TqException {@link ErrorCode#DUPLICATE_KEY} on duplicates in {@code selected}; {@link
   *     ErrorCode#UNKNOWN_KEY} naming every key that is not in this descriptor
   */
  public KvBatchMeta selectKeys(List<String> selected) {
    Set<String> duplicates = duplicates(selected);
    if (!duplicates.isEmpty()) {
      throw new TqException(ErrorCode.DUPLICATE_KEY, "Contain duplicate keys: " + duplicates);
    }
    Map<String, Integer> position = new HashMap<>();
    for (int i = 0; i < keys.size(); i++) {
      position.put(keys.get(i), i);
    }
    List<String> missing = selected.stream().filter(k -> !position.containsKey(k)).toList();
    if (!missing.isEmpty()) {
      throw new TqException(
          ErrorCode.UNKNOWN_KEY, "Keys " + missing + " not found in current batch");
    }
    return rows(selected.stream().mapToInt(position::get).toArray());
  }

  /**
   * This descriptor with its rows permuted: row {@code i} of the result is row {@code positions[i]}
   * of this one.
   *
   * @param positions a permutation of {@code 0..size-1}
   * @return a new descriptor
   * @throws TqException {@link ErrorCode#SHAPE_MISMATCH} when the length does not match the size;
   *     {@link ErrorCode#DUPLICATE_KEY} on duplicate indexes; {@link ErrorCode#INVALID_ARGUMENT} on
   *     a position out of range (negative positions do not wrap)
   */
  public KvBatchMeta reorder(int... positions) {
    BatchMetaRows.checkPermutation(positions, size());
    return rows(positions);
  }

  /**
   * Splits into {@code n} contiguous chunks, larger ones first; each keeps the partition, fields
   * and extra info. Trailing chunks are empty when {@code n > size}.
   *
   * @param n the number of chunks, at least 1
   * @return the chunks
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when {@code n < 1}
   */
  public List<KvBatchMeta> chunk(int n) {
    ArrayList<KvBatchMeta> chunks = new ArrayList<>(Math.max(n, 0));
    for (int[] range : BatchMetaRows.chunkRanges(size(), n)) {
      int[] positions = new int[range[1] - range[0]];
      for (int i = 0; i < positions.length; i++) {
        positions[i] = range[0] + i;
      }
      chunks.add(rows(positions));
    }
    return Collections.unmodifiableList(chunks);
  }

  /**
   * Appends descriptors of one partition.
   *
   * <p>Empty members are skipped; with none left the result is empty. The result takes the first
   * member's partition and fields. A member with non-null fields must have the first member's field
   * set (a null first set counts as empty); every member must have the first member's partition;
   * keys must stay unique; extra info is unioned, rejecting conflicting values.
   *
   * @param members the descriptors in order
   * @return the concatenation
   * @throws TqException {@link ErrorCode#SCHEMA_CONFLICT} on differing fields; {@link
   *     ErrorCode#INVALID_ARGUMENT} on differing partitions or conflicting extra info; {@link
   *     ErrorCode#DUPLICATE_KEY} on a key present in two members
   */
  public static KvBatchMeta concat(List<KvBatchMeta> members) {
    List<KvBatchMeta> nonEmpty = members.stream().filter(m -> m != null && !m.isEmpty()).toList();
    if (nonEmpty.isEmpty()) {
      return EMPTY;
    }
    KvBatchMeta first = nonEmpty.getFirst();
    Set<String> firstFields = first.fields == null ? Set.of() : new HashSet<>(first.fields);
    ArrayList<String> allKeys = new ArrayList<>();
    ArrayList<Long> allIndexes = new ArrayList<>();
    ArrayList<Long> allGenerations = new ArrayList<>();
    ArrayList<Map<String, Object>> allTags = new ArrayList<>();
    ArrayList<Map<String, Object>> infos = new ArrayList<>();
    for (KvBatchMeta m : nonEmpty) {
      if (m.fields != null && !new HashSet<>(m.fields).equals(firstFields)) {
        throw new TqException(
            ErrorCode.SCHEMA_CONFLICT,
            "Field names do not match for concatenation: " + first.fields + " vs " + m.fields);
      }
      if (!Objects.equals(m.partitionId, first.partitionId)) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "Partition do not match for concatenation: "
                + first.partitionId
                + " vs "
                + m.partitionId);
      }
      allKeys.addAll(m.keys);
      allIndexes.addAll(m.globalIndexes);
      allGenerations.addAll(m.generations);
      allTags.addAll(m.tags);
      infos.add(m.extraInfo);
    }
    return new KvBatchMeta(
        allKeys,
        allTags,
        first.partitionId,
        first.fields,
        MetaValues.unionExtraInfo(infos),
        allIndexes,
        allGenerations);
  }

  private KvBatchMeta rows(int[] positions) {
    ArrayList<String> k = new ArrayList<>(positions.length);
    ArrayList<Map<String, Object>> t = new ArrayList<>(positions.length);
    ArrayList<Long> x = new ArrayList<>(positions.length);
    ArrayList<Long> g = new ArrayList<>(positions.length);
    for (int p : positions) {
      k.add(keys.get(p));
      t.add(tags.get(p));
      x.add(globalIndexes.get(p));
      g.add(generations.get(p));
    }
    return new KvBatchMeta(k, t, partitionId, fields, extraInfo, x, g);
  }

  /**
   * Whether the values are non-null and distinct, checked on one sorted copy: the common case costs
   * no hash entry per value. Any other case is described by {@link #duplicates}.
   */
  static boolean distinctNonNull(List<?> values) {
    Object[] sorted = values.toArray();
    for (Object value : sorted) {
      if (!(value instanceof String)) {
        return false;
      }
    }
    return Distinct.firstRepeated(sorted) == null;
  }

  private static List<Map<String, Object>> copyRows(List<? extends Map<String, ?>> rows) {
    return rows == null ? null : MetaValues.freezeRows(rows);
  }

  private static Set<String> duplicates(List<String> values) {
    if (distinctNonNull(values)) {
      return Set.of();
    }
    Set<String> seen = new HashSet<>();
    Set<String> duplicates = new LinkedHashSet<>();
    for (String v : values) {
      if (v == null) {
        throw new TqException(ErrorCode.INVALID_ARGUMENT, "null key or field name in " + values);
      }
      if (!seen.add(v)) {
        duplicates.add(v);
      }
    }
    return duplicates;
  }
}
