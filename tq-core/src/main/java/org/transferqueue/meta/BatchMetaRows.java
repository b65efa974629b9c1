package org.transferqueue.meta;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Row and column restructuring of {@link BatchMeta} and the column checks of its builder.
 *
 * <p>Stateless. Results share the immutable per-sample maps of their source; nothing is copied that
 * cannot change.
 */
final class BatchMetaRows {
  private BatchMetaRows() {}

  /** Builds a batch from trusted positions; shared immutable rows are reused, not copied. */
  static BatchMeta rows(BatchMeta meta, int[] positions) {
    int n = positions.length;
    long[] gis = new long[n];
    boolean[] status = new boolean[n];
    ArrayList<String> pids = new ArrayList<>(n);
    ArrayList<Map<String, Object>> newTags = new ArrayList<>(n);
    ArrayList<Map<String, Object>> newBackend = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int p = positions[i];
      gis[i] = meta.indexArray()[p];
      status[i] = meta.statusArray()[p];
      pids.add(meta.partitionId(p));
      newTags.add(meta.tags(p));
      newBackend.add(meta.backendMeta(p));
    }
    TreeMap<String, FieldSchema> schema = new TreeMap<>();
    for (Map.Entry<String, FieldSchema> e : meta.fieldSchema().entrySet()) {
      FieldSchema s = e.getValue();
      if (s.perSampleShapes() != null) {
        ArrayList<List<Long>> shapes = new ArrayList<>(n);
        for (int p : positions) {
          shapes.add(s.perSampleShapes().get(p));
        }
        s = s.withPerSampleShapes(shapes);
      }
      schema.put(e.getKey(), s);
    }
    return new BatchMeta(
        gis,
        Collections.unmodifiableList(pids),
        Collections.unmodifiableSortedMap(schema),
        status,
        meta.extraInfo(),
        Collections.unmodifiableList(newTags),
        Collections.unmodifiableList(newBackend));
  }

  /** See {@link BatchMeta#selectFields}. */
  static BatchMeta selectFields(BatchMeta meta, Collection<String> names) {
    Set<String> keep = new HashSet<>(names);
    TreeMap<String, FieldSchema> schema = new TreeMap<>();
    for (Map.Entry<String, FieldSchema> e : meta.fieldSchema().entrySet()) {
      if (keep.contains(e.getKey())) {
        schema.put(e.getKey(), e.getValue());
      }
    }
    ArrayList<Map<String, Object>> rows = new ArrayList<>(meta.size());
    for (Map<String, Object> row : meta.backendMeta()) {
      LinkedHashMap<String, Object> filtered = new LinkedHashMap<>();
      row.forEach(
          (k, v) -> {
            if (keep.contains(k) || k.startsWith("_")) {
              filtered.put(k, v);
            }
          });
      rows.add(filtered.isEmpty() ? Map.of() : Collections.unmodifiableMap(filtered));
    }
    return new BatchMeta(
        meta.indexArray(),
        meta.partitionIds(),
        Collections.unmodifiableSortedMap(schema),
        meta.statusArray(),
        meta.extraInfo(),
        meta.tags(),
        Collections.unmodifiableList(rows));
  }

  /**
   * The chunk boundaries shared by {@link #chunk} and {@link KvBatchMeta#chunk}.
   *
   * @param size number of rows
   * @param n number of chunks
   * @return n ranges {start, end}
   */
  static int[][] chunkRanges(int size, int n) {
    if (n < 1) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "chunk count " + n + " must be >= 1");
    }
    int base = size / n;
    int rem = size % n;
    int[][] ranges = new int[n][];
    int start = 0;
    for (int i = 0; i < n; i++) {
      int len = base + (i < rem ? 1 : 0);
      ranges[i] = new int[] {start, start + len};
      start += len;
    }
    return ranges;
  }

  /**
   * Checks that positions are a permutation of {@code 0..size-1}.
   *
   * @param positions the positions
   * @param size the batch size
   */
  static void checkPermutation(int[] positions, int size) {
    if (positions.length != size) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "reorder positions length " + positions.length + " does not match batch size " + size);
    }
    boolean[] seen = new boolean[size];
    for (int p : positions) {
      if (p < 0 || p >= size) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "reorder position " + p + " must be in range [0, " + size + ")");
      }
      if (seen[p]) {
        throw new TqException(
            ErrorCode.DUPLICATE_KEY, "reorder positions contain duplicates: " + p);
      }
      seen[p] = true;
    }
  }

  /** The partition column of a builder: one id for all, or one per sample. */
  static List<String> partitionIds(String commonPartitionId, List<String> partitionIds, int n) {
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

  static List<Map<String, Object>> rowsOrEmpty(
      String what, List<? extends Map<String, ?>> rows, int n) {
    if (rows == null || rows.isEmpty()) {
      return Collections.nCopies(n, Map.of());
    }
    checkColumn(what, rows.size(), n);
    return MetaValues.freezeRows(rows);
  }

  static void checkColumn(String what, int length, int n) {
    if (length != n) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH, what + " length " + length + " must match the batch size " + n);
    }
  }
}
