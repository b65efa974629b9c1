package org.transferqueue.storage.kv;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/** A {@link KvClient} for manager tests: keeps copies in a map and records every call. */
final class RecordingKvClient implements KvClient {
  private final BufferAllocator allocator;
  private final Map<String, Object> stored = new HashMap<>();
  Function<List<String>, List<Map<String, Object>>> metaAnswer = keys -> null;
  List<String> putKeys;
  List<Object> putValues;
  List<KvCellKind> putKinds;
  List<String> getKeys;
  List<long[]> getShapes;
  List<DType> getDtypes;
  List<Map<String, Object>> getMeta;
  List<String> clearKeys;
  List<Map<String, Object>> clearMeta;
  int calls;
  boolean closed;

  RecordingKvClient(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  @Override
  public List<Map<String, Object>> put(List<String> keys, List<?> values, List<KvCellKind> kinds) {
    calls++;
    putKeys = List.copyOf(keys);
    putValues = new ArrayList<>(values);
    putKinds = List.copyOf(kinds);
    for (int i = 0; i < keys.size(); i++) {
      Object value = values.get(i);
      Object old =
          stored.put(keys.get(i), value instanceof Tensor t ? Tensor.copyOf(allocator, t) : value);
      if (old instanceof Tensor t) {
        t.close();
      }
    }
    return metaAnswer.apply(keys);
  }

  @Override
  public void getInto(
      List<String> keys,
      List<long[]> shapes,
      List<DType> dtypes,
      List<Map<String, Object>> backendMeta,
      List<java.lang.foreign.MemorySegment> destinations,
      List<java.lang.foreign.MemorySegment> regions) {
    getIntoKeys.addAll(keys);
    getIntoRegions.addAll(regions);
    KvClient.super.getInto(keys, shapes, dtypes, backendMeta, destinations, regions);
  }

  final List<String> getIntoKeys = new java.util.ArrayList<>();
  final List<java.lang.foreign.MemorySegment> getIntoRegions = new java.util.ArrayList<>();

  @Override
  public KvValues get(
      List<String> keys,
      List<long[]> shapes,
      List<DType> dtypes,
      List<Map<String, Object>> backendMeta) {
    calls++;
    getKeys = List.copyOf(keys);
    getShapes = new ArrayList<>(shapes);
    getDtypes = new ArrayList<>(dtypes);
    getMeta = backendMeta == null ? null : new ArrayList<>(backendMeta);
    List<Object> values = new ArrayList<>();
    for (String key : keys) {
      values.add(stored.get(key));
    }
    return new KvValues(values, List.of());
  }

  @Override
  public Map<String, Integer> clear(List<String> keys, List<Map<String, Object>> backendMeta) {
    calls++;
    clearKeys = List.copyOf(keys);
    clearMeta = backendMeta == null ? null : new ArrayList<>(backendMeta);
    Map<String, Integer> failed = new LinkedHashMap<>();
    for (String key : keys) {
      if (stored.remove(key) instanceof Tensor t) {
        t.close();
      }
    }
    return failed;
  }

  @Override
  public void close() {
    closed = true;
    stored
        .values()
        .forEach(
            v -> {
              if (v instanceof Tensor t) {
                t.close();
              }
            });
    stored.clear();
  }
}
