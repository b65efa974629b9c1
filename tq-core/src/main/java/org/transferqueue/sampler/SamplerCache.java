package org.transferqueue.sampler;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The cache shared by the built-in caching samplers: one {@link SampleResult} per (partition, task,
 * data-parallel rank, batch index). A null batch index is a valid key.
 *
 * <p>Thread-safe: every method synchronises on the cache. Entries are removed only by {@link
 * #clearPartition} or by loading a state.
 */
final class SamplerCache {
  /** Cache key; {@code batchIndex} may be null. */
  record Key(String partitionId, String taskName, int dpRank, Integer batchIndex) {}

  private final Map<Key, SampleResult> entries = new HashMap<>();

  synchronized Optional<SampleResult> get(Key key) {
    return Optional.ofNullable(entries.get(key));
  }

  synchronized boolean contains(Key key) {
    return entries.containsKey(key);
  }

  synchronized void putIfAbsent(Key key, SampleResult result) {
    entries.putIfAbsent(key, result);
  }

  synchronized void clearPartition(String partitionId) {
    entries.keySet().removeIf(k -> k.partitionId().equals(partitionId));
  }

  synchronized int size() {
    return entries.size();
  }

  /** JSON-compatible entries for a checkpoint, tagged with kind {@code result}. */
  synchronized List<Map<String, Object>> save() {
    List<Map<String, Object>> out = new ArrayList<>(entries.size());
    entries.forEach(
        (k, v) -> {
          Map<String, Object> e = new LinkedHashMap<>();
          e.put("kind", "result");
          e.put("partition_id", k.partitionId());
          e.put("task_name", k.taskName());
          e.put("dp_rank", k.dpRank());
          e.put("batch_index", k.batchIndex());
          e.put("sampled", v.sampled());
          e.put("consumed", v.consumed());
          out.add(e);
        });
    return out;
  }

  /** Replaces the entries with the {@code result} entries of a saved state. */
  synchronized void load(List<Map<String, Object>> saved) {
    entries.clear();
    for (Map<String, Object> e : saved) {
      if ("result".equals(e.get("kind"))) {
        Key key =
            new Key(
                string(e, "partition_id"),
                string(e, "task_name"),
                integer(e, "dp_rank"),
                e.get("batch_index") == null ? null : integer(e, "batch_index"));
        entries.put(key, new SampleResult(longs(e, "sampled"), longs(e, "consumed")));
      }
    }
  }

  static String string(Map<String, Object> e, String name) {
    if (e.get(name) instanceof String s) {
      return s;
    }
    throw corrupt(name, e);
  }

  static int integer(Map<String, Object> e, String name) {
    if (e.get(name) instanceof Number n && n.longValue() == n.intValue()) {
      return n.intValue();
    }
    throw corrupt(name, e);
  }

  static List<Long> longs(Map<String, Object> e, String name) {
    return longs(e.get(name), name, e);
  }

  static List<Long> longs(Object value, String name, Map<String, Object> e) {
    if (!(value instanceof List<?> list)) {
      throw corrupt(name, e);
    }
    List<Long> out = new ArrayList<>(list.size());
    for (Object o : list) {
      if (!(o instanceof Number n)) {
        throw corrupt(name, e);
      }
      out.add(n.longValue());
    }
    return out;
  }

  static TqException corrupt(String name, Map<String, Object> entry) {
    return new TqException(
        ErrorCode.CORRUPT_DATA, "sampler state entry has an invalid '" + name + "': " + entry);
  }
}
