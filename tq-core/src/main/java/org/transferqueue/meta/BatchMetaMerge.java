package org.transferqueue.meta;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/** The multi-batch operations of {@link BatchMeta}: union of columns and concatenation of rows. */
final class BatchMetaMerge {
  private BatchMetaMerge() {}

  static BatchMeta union(BatchMeta left, BatchMeta right) {
    if (right == null || right.isEmpty()) {
      return left;
    }
    if (left.isEmpty()) {
      return right;
    }
    if (!Arrays.equals(left.indexArray(), right.indexArray())) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "global_indexes do not match: " + left.globalIndexes() + " vs " + right.globalIndexes());
    }
    if (!left.partitionIds().equals(right.partitionIds())) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "partition_ids do not match: " + left.partitionIds() + " vs " + right.partitionIds());
    }
    int n = left.size();
    long[] generations = new long[n];
    for (int i = 0; i < n; i++) {
      long a = left.generationsArray()[i];
      long b = right.generationsArray()[i];
      if (a != b && a != BatchMeta.UNKNOWN_GENERATION && b != BatchMeta.UNKNOWN_GENERATION) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "generations do not match for global index "
                + left.globalIndex(i)
                + " at position "
                + i
                + ": "
                + a
                + " vs "
                + b
                + " (the batches name different samples)");
      }
      generations[i] = a == BatchMeta.UNKNOWN_GENERATION ? b : a;
    }
    TreeMap<String, FieldSchema> schema = new TreeMap<>(left.fieldSchema());
    schema.putAll(right.fieldSchema());
    boolean[] status = new boolean[n];
    ArrayList<Map<String, Object>> tags = new ArrayList<>(n);
    ArrayList<Map<String, Object>> backend = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      status[i] = left.statusArray()[i] && right.statusArray()[i];
      tags.add(MetaValues.merge(left.tags(i), right.tags(i)));
      backend.add(MetaValues.merge(left.backendMeta(i), right.backendMeta(i)));
    }
    return new BatchMeta(
        left.indexArray(),
        generations,
        left.partitionIds(),
        Collections.unmodifiableSortedMap(schema),
        status,
        MetaValues.merge(left.extraInfo(), right.extraInfo()),
        Collections.unmodifiableList(tags),
        Collections.unmodifiableList(backend));
  }

  static BatchMeta concat(List<BatchMeta> batches, boolean validate) {
    List<BatchMeta> members = batches.stream().filter(b -> b != null && !b.isEmpty()).toList();
    if (members.isEmpty()) {
      return BatchMeta.empty();
    }
    if (validate) {
      validate(members);
    }
    int total = members.stream().mapToInt(BatchMeta::size).sum();
    long[] gis = new long[total];
    long[] generations = new long[total];
    boolean[] status = new boolean[total];
    ArrayList<String> pids = new ArrayList<>(total);
    ArrayList<Map<String, Object>> tags = new ArrayList<>(total);
    ArrayList<Map<String, Object>> backend = new ArrayList<>(total);
    ArrayList<Map<String, Object>> infos = new ArrayList<>(members.size());
    int at = 0;
    for (BatchMeta m : members) {
      System.arraycopy(m.indexArray(), 0, gis, at, m.size());
      System.arraycopy(m.generationsArray(), 0, generations, at, m.size());
      System.arraycopy(m.statusArray(), 0, status, at, m.size());
      at += m.size();
      pids.addAll(m.partitionIds());
      tags.addAll(m.tags());
      backend.addAll(m.backendMeta());
      infos.add(m.extraInfo());
    }
    TreeMap<String, FieldSchema> schema = new TreeMap<>();
    for (Map.Entry<String, FieldSchema> e : members.getFirst().fieldSchema().entrySet()) {
      schema.put(e.getKey(), mergeField(e.getKey(), e.getValue(), members));
    }
    return new BatchMeta(
        gis,
        generations,
        Collections.unmodifiableList(pids),
        Collections.unmodifiableSortedMap(schema),
        status,
        MetaValues.unionExtraInfo(infos),
        Collections.unmodifiableList(tags),
        Collections.unmodifiableList(backend));
  }

  private static void validate(List<BatchMeta> members) {
    BatchMeta first = members.getFirst();
    List<String> names = first.fieldNames();
    for (int i = 1; i < members.size(); i++) {
      BatchMeta m = members.get(i);
      if (!m.fieldNames().equals(names)) {
        TreeSet<String> extra = new TreeSet<>(m.fieldNames());
        names.forEach(extra::remove);
        TreeSet<String> missing = new TreeSet<>(names);
        m.fieldNames().forEach(missing::remove);
        throw new TqException(
            ErrorCode.SCHEMA_CONFLICT,
            "field_names mismatch at chunk[" + i + "]: extra " + extra + ", missing " + missing);
      }
      for (String name : names) {
        if (!Objects.equals(first.field(name).dtype(), m.field(name).dtype())) {
          throw new TqException(
              ErrorCode.SCHEMA_CONFLICT,
              "dtype mismatch in concat for field '"
                  + name
                  + "' at chunk["
                  + i
                  + "]: "
                  + first.field(name).dtype()
                  + " vs "
                  + m.field(name).dtype());
        }
      }
    }
  }

  /**
   * Merges one field over all members: nested when any member is nested or regular members disagree
   * on the shape; a member without the field (only possible without validation) contributes unknown
   * (null) shapes.
   */
  private static FieldSchema mergeField(String name, FieldSchema first, List<BatchMeta> members) {
    if (first.dtype() == null) {
      return first;
    }
    boolean nested = false;
    for (BatchMeta m : members) {
      FieldSchema s = m.fieldSchema().get(name);
      if (s != null && (s.nested() || s.isRegular() && !s.shape().equals(first.shape()))) {
        nested = true;
        break;
      }
    }
    if (!nested) {
      return first;
    }
    ArrayList<List<Long>> shapes = new ArrayList<>();
    for (BatchMeta m : members) {
      FieldSchema s = m.fieldSchema().get(name);
      for (int i = 0; i < m.size(); i++) {
        shapes.add(s == null ? null : s.shapeAt(i));
      }
    }
    return FieldSchema.nestedOf(first.dtype(), shapes);
  }
}
