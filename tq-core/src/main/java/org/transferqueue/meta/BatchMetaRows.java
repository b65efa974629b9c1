package org.transferqueue.meta;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntFunction;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Row and column restructuring of {@link BatchMeta} and the column checks it shares with its
 * builder.
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
    long[] generations = new long[n];
    boolean[] status = new boolean[n];
    ArrayList<String> pids = new ArrayList<>(n);
    ArrayList<Map<String, Object>> newTags = new ArrayList<>(n);
    ArrayList<Map<String, Object>> newBackend = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int p = positions[i];
      gis[i] = meta.indexArray()[p];
      generations[i] = meta.generationsArray()[p];
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
        generations,
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
      if (row.isEmpty()) {
        rows.add(Map.of()); // what filtering an empty row gives, without a map or a lambda
        continue;
      }
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
        meta.generationsArray(),
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

  /** An unmodifiable list view of {@code size} elements computed on access. */
  static <T> List<T> view(int size, IntFunction<T> element) {
    return new AbstractList<>() {
      @Override
      public T get(int i) {
        return element.apply(i);
      }

      @Override
      public int size() {
        return size;
      }
    };
  }

  /** The samples at checked positions, in the given order; see {@link BatchMeta#selectSamples}. */
  static BatchMeta select(BatchMeta meta, int[] positions) {
    for (int p : positions) {
      if (p < 0 || p >= meta.size()) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "sample position " + p + " must be in range [0, " + meta.size() + ")");
      }
    }
    return rows(meta, positions);
  }

  /** One sample as a batch; see {@link BatchMeta#get}. */
  static BatchMeta get(BatchMeta meta, int position) {
    int p = position < 0 ? position + meta.size() : position;
    if (p < 0 || p >= meta.size()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "sample position " + position + " out of range for size " + meta.size());
    }
    return rows(meta, new int[] {p});
  }

  /** A Python-style slice; see {@link BatchMeta#slice}. */
  static BatchMeta slice(BatchMeta meta, int start, int stop, int step) {
    if (step == 0) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "slice step must not be 0");
    }
    int n = meta.size();
    int lo = step > 0 ? 0 : -1;
    int hi = step > 0 ? n : n - 1;
    int s = Math.clamp(start < 0 ? (long) start + n : start, lo, hi);
    int e = Math.clamp(stop < 0 ? (long) stop + n : stop, lo, hi);
    ArrayList<Integer> positions = new ArrayList<>();
    for (int i = s; step > 0 ? i < e : i > e; i += step) {
      positions.add(i);
    }
    return rows(meta, positions.stream().mapToInt(Integer::intValue).toArray());
  }

  /** {@code n} contiguous chunks; see {@link BatchMeta#chunk}. */
  static List<BatchMeta> chunk(BatchMeta meta, int n) {
    int[][] ranges = chunkRanges(meta.size(), n);
    ArrayList<BatchMeta> chunks = new ArrayList<>(n);
    for (int[] range : ranges) {
      int[] positions = new int[range[1] - range[0]];
      Arrays.setAll(positions, i -> range[0] + i);
      chunks.add(rows(meta, positions));
    }
    return Collections.unmodifiableList(chunks);
  }

  /**
   * One chunk per partition, in order of first appearance; see {@link BatchMeta#chunkByPartition}.
   */
  static List<BatchMeta> chunkByPartition(BatchMeta meta) {
    LinkedHashMap<String, List<Integer>> byPartition = new LinkedHashMap<>();
    for (int i = 0; i < meta.size(); i++) {
      byPartition.computeIfAbsent(meta.partitionId(i), k -> new ArrayList<>()).add(i);
    }
    ArrayList<BatchMeta> chunks = new ArrayList<>(byPartition.size());
    for (List<Integer> positions : byPartition.values()) {
      chunks.add(rows(meta, positions.stream().mapToInt(Integer::intValue).toArray()));
    }
    return Collections.unmodifiableList(chunks);
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

  /**
   * A checked copy of a generation column.
   *
   * @throws TqException {@code SHAPE_MISMATCH} for another length than {@code n}, {@code
   *     INVALID_ARGUMENT} for a generation below {@link BatchMeta#UNKNOWN_GENERATION}
   */
  static long[] checkGenerations(long[] generations, int n) {
    checkColumn("generations", generations.length, n);
    for (int i = 0; i < n; i++) {
      if (generations[i] < BatchMeta.UNKNOWN_GENERATION) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "generation at position " + i + " is " + generations[i] + " (must be >= -1)");
      }
    }
    return generations.clone();
  }

  static void checkColumn(String what, int length, int n) {
    if (length != n) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH, what + " length " + length + " must match the batch size " + n);
    }
  }

  static void checkPerSample(String field, FieldSchema schema, int size) {
    if (schema.perSampleShapes() != null && schema.perSampleShapes().size() != size) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "per-sample shapes of field '"
              + field
              + "' have length "
              + schema.perSampleShapes().size()
              + ", batch size is "
              + size);
    }
  }
}
