package org.transferqueue.controller;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.sampler.InsertPosition;
import org.transferqueue.sampler.SamplerState;
import org.transferqueue.tensor.DType;

/**
 * Encodes a {@link ControllerState} as one msgpack value (the wire value encoding of {@link
 * ValueEncoder}) and decodes it back, validating every part.
 *
 * <p>The encoded value is a map:
 *
 * <pre>
 *  format          "tq-controller-state"
 *  version         2
 *  controller_id   str
 *  partitions      [ { id, created_at_ms, active: [gi], pre_allocated: [gi],
 *                      fields: [ { name, produced: [gi], kind: str|nil, dtype: str|nil,
 *                                  shape: [int]|nil, per_sample_shapes: { gi: [int] },
 *                                  jagged: [gi] } ],
 *                      consumption: { task: [gi] }, backend_meta: { gi: map },
 *                      tags: { gi: map }, keys: { key: gi },
 *                      inserts: { gi: [insert, row] }, clearing: [gi] } ]
 *                                                                   in creation order
 *  allocator       { owners: { partition: [gi] }, pool: [gi], counter: int,
 *                    generations: { gi: int } }                     indexes above generation 0
 *  sampler_type    str
 *  sampler_state   { sampler_name: str, entries: [map] } | nil
 * </pre>
 *
 * Index sets are ascending lists of global indexes. Version 1 (without {@code jagged} and {@code
 * generations}) is still read: every index is then at generation 0 and no sample counts as put
 * jagged. {@code inserts} holds the {@link org.transferqueue.sampler.InsertPosition} of every
 * sample an insert created; a partition without the entry (written before it existed) restores with
 * none. {@code clearing} lists the samples whose clear has begun ({@code MARK_CLEARING}); a
 * partition without the entry restores with none. Tag and backend-metadata values are stored as
 * they are (strings, numbers, booleans, byte strings, lists, maps; integers come back as {@code
 * Long}); tensors inside them are rejected. Stateless and thread-safe.
 */
public final class ControllerStateCodec {
  /** The value of the {@code format} entry. */
  public static final String FORMAT = "tq-controller-state";

  /** The version this codec writes. */
  public static final int VERSION = 2;

  /** The version before sample generations and per-sample column kinds, which is still read. */
  public static final int VERSION_WITHOUT_GENERATIONS = 1;

  private ControllerStateCodec() {}

  /**
   * Encodes a state.
   *
   * @param state the state
   * @return the msgpack bytes
   * @throws TqException with {@code INVALID_ARGUMENT} if a tag or backend-metadata value cannot be
   *     stored (for example a tensor)
   */
  public static byte[] encode(ControllerState state) {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("format", FORMAT);
    root.put("version", VERSION);
    root.put("controller_id", state.controllerId());
    List<Object> partitions = new ArrayList<>();
    for (PartitionState p : state.partitions()) {
      partitions.add(partition(p));
    }
    root.put("partitions", partitions);
    Map<String, Object> allocator = new LinkedHashMap<>();
    Map<String, Object> owners = new LinkedHashMap<>();
    state.allocator().owners().forEach((id, set) -> owners.put(id, indexes(set)));
    allocator.put("owners", owners);
    allocator.put("pool", state.allocator().pool());
    allocator.put("counter", state.allocator().counter());
    allocator.put("generations", state.allocator().generations());
    root.put("allocator", allocator);
    root.put("sampler_type", state.samplerType());
    if (state.samplerState() instanceof SamplerState s) {
      Map<String, Object> sampler = new LinkedHashMap<>();
      sampler.put("sampler_name", s.samplerName());
      sampler.put("entries", s.entries());
      root.put("sampler_state", sampler);
    } else {
      root.put("sampler_state", null);
    }
    EncodedValue encoded = ValueEncoder.encode(root);
    if (!encoded.auxTensors().isEmpty()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "controller state holds "
              + encoded.auxTensors().size()
              + " tensor(s) in tags or backend metadata; checkpoints store only plain values");
    }
    return encoded.mainFrame();
  }

  private static Map<String, Object> partition(PartitionState p) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("id", p.partitionId());
    out.put("created_at_ms", p.createdAtMillis());
    out.put("active", indexes(p.active()));
    out.put("pre_allocated", indexes(p.preAllocated()));
    List<Object> fields = new ArrayList<>();
    for (FieldState f : p.fields()) {
      Map<String, Object> field = new LinkedHashMap<>();
      field.put("name", f.name());
      field.put("produced", indexes(f.produced()));
      field.put("kind", f.kind());
      field.put("dtype", f.dtype() == null ? null : f.dtype().torchName());
      field.put("shape", f.shape());
      field.put("per_sample_shapes", f.perSampleShapes());
      field.put("jagged", indexes(f.jagged()));
      fields.add(field);
    }
    out.put("fields", fields);
    Map<String, Object> consumption = new LinkedHashMap<>();
    p.consumption().forEach((task, set) -> consumption.put(task, indexes(set)));
    out.put("consumption", consumption);
    out.put("backend_meta", p.backendMeta());
    out.put("tags", p.tags());
    out.put("keys", p.keys());
    Map<Long, Object> inserts = new LinkedHashMap<>();
    p.insertPositions().forEach((gi, at) -> inserts.put(gi, List.of(at.insert(), (long) at.row())));
    out.put("inserts", inserts);
    out.put("clearing", indexes(p.clearing()));
    return out;
  }

  private static List<Long> indexes(IndexSet set) {
    return set.stream().boxed().toList();
  }

  /**
   * Decodes and validates a state written by {@link #encode}.
   *
   * @param bytes the msgpack bytes
   * @param source names the input in error messages (for example a file)
   * @return the state
   * @throws TqException with {@code CORRUPT_DATA} naming the source and the first malformed entry,
   *     or {@code INVALID_ARGUMENT} for another format version
   */
  public static ControllerState decode(byte[] bytes, String source) {
    Object value = ValueDecoder.decode(MemorySegment.ofArray(bytes), List.of(), source);
    Reader r = new Reader(source);
    Map<String, Object> root = r.map(value, "$");
    if (!FORMAT.equals(root.get("format"))) {
      throw r.corrupt("$.format", root.get("format"));
    }
    long version = r.integer(root.get("version"), "$.version");
    if (version != VERSION && version != VERSION_WITHOUT_GENERATIONS) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          source
              + ": controller state version "
              + version
              + " is not supported ("
              + VERSION_WITHOUT_GENERATIONS
              + " or "
              + VERSION
              + ")");
    }
    boolean current = version == VERSION;
    List<PartitionState> partitions = new ArrayList<>();
    List<Object> list = r.list(root.get("partitions"), "$.partitions");
    for (int i = 0; i < list.size(); i++) {
      partitions.add(r.partition(r.map(list.get(i), "$.partitions[" + i + "]"), i, current));
    }
    Map<String, Object> alloc = r.map(root.get("allocator"), "$.allocator");
    Map<String, IndexSet> owners = new LinkedHashMap<>();
    r.map(alloc.get("owners"), "$.allocator.owners")
        .forEach((id, set) -> owners.put(id, r.indexSet(set, "$.allocator.owners." + id)));
    List<Long> pool = new ArrayList<>();
    for (Object o : r.list(alloc.get("pool"), "$.allocator.pool")) {
      pool.add(r.index(o, "$.allocator.pool"));
    }
    long counter = r.integer(alloc.get("counter"), "$.allocator.counter");
    if (counter < 0 || counter > IndexAllocator.MAX_INDEX + 1L) {
      throw r.corrupt("$.allocator.counter", counter);
    }
    Map<Long, Long> generations = new LinkedHashMap<>();
    if (current) {
      r.indexMap(alloc.get("generations"), "$.allocator.generations")
          .forEach(
              (gi, generation) -> {
                long count = r.integer(generation, "$.allocator.generations." + gi);
                if (count < 0 || gi >= counter) {
                  throw r.corrupt("$.allocator.generations." + gi, generation);
                }
                generations.put(gi, count);
              });
    }
    String samplerType = r.string(root.get("sampler_type"), "$.sampler_type");
    SamplerState samplerState = null;
    if (root.get("sampler_state") != null) {
      Map<String, Object> s = r.map(root.get("sampler_state"), "$.sampler_state");
      List<Map<String, Object>> entries = new ArrayList<>();
      for (Object e : r.list(s.get("entries"), "$.sampler_state.entries")) {
        entries.add(r.map(e, "$.sampler_state.entries[]"));
      }
      samplerState =
          new SamplerState(
              r.string(s.get("sampler_name"), "$.sampler_state.sampler_name"), entries);
    }
    try {
      return new ControllerState(
          r.string(root.get("controller_id"), "$.controller_id"),
          partitions,
          new AllocatorState(owners, pool, counter, generations),
          samplerType,
          samplerState);
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new TqException(ErrorCode.CORRUPT_DATA, source + ": invalid controller state: " + e, e);
    }
  }

  /** Typed access to the decoded tree; every failure names the path. */
  private record Reader(String source) {
    TqException corrupt(String path, Object found) {
      String shown = String.valueOf(found);
      return new TqException(
          ErrorCode.CORRUPT_DATA,
          source
              + ": invalid controller state at "
              + path
              + ": "
              + (shown.length() > 80 ? shown.substring(0, 80) + "..." : shown));
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> map(Object o, String path) {
      if (o instanceof Map<?, ?> m) {
        for (Object key : m.keySet()) {
          if (!(key instanceof String)) {
            throw corrupt(path + " (key)", key);
          }
        }
        return (Map<String, Object>) m;
      }
      throw corrupt(path, o);
    }

    @SuppressWarnings("unchecked")
    Map<Long, Object> indexMap(Object o, String path) {
      if (o instanceof Map<?, ?> m) {
        for (Object key : m.keySet()) {
          index(key, path + " (key)");
        }
        return (Map<Long, Object>) m;
      }
      throw corrupt(path, o);
    }

    @SuppressWarnings("unchecked")
    List<Object> list(Object o, String path) {
      if (o instanceof List<?> l) {
        return (List<Object>) l;
      }
      throw corrupt(path, o);
    }

    String string(Object o, String path) {
      if (o instanceof String s) {
        return s;
      }
      throw corrupt(path, o);
    }

    long integer(Object o, String path) {
      if (o instanceof Long l) {
        return l;
      }
      throw corrupt(path, o);
    }

    long index(Object o, String path) {
      long value = integer(o, path);
      if (value < 0 || value > IndexAllocator.MAX_INDEX) {
        throw corrupt(path, o);
      }
      return value;
    }

    IndexSet indexSet(Object o, String path) {
      List<Object> items = list(o, path);
      long[] values = new long[items.size()];
      for (int i = 0; i < values.length; i++) {
        values[i] = index(items.get(i), path);
      }
      return IndexSet.of(values);
    }

    List<Long> longs(Object o, String path) {
      List<Long> out = new ArrayList<>();
      for (Object item : list(o, path)) {
        out.add(integer(item, path));
      }
      return out;
    }

    @SuppressWarnings("unchecked")
    Map<Long, Map<String, Object>> perSample(Object o, String path) {
      Map<Long, Map<String, Object>> out = new LinkedHashMap<>();
      indexMap(o, path).forEach((gi, v) -> out.put(gi, map(v, path + "." + gi)));
      return out;
    }

    PartitionState partition(Map<String, Object> p, int position, boolean current) {
      String id = string(p.get("id"), "$.partitions[" + position + "].id");
      String path = "$.partitions[" + id + "]";
      List<FieldState> fields = new ArrayList<>();
      for (Object f : list(p.get("fields"), path + ".fields")) {
        Map<String, Object> field = map(f, path + ".fields[]");
        String name = string(field.get("name"), path + ".fields[].name");
        String at = path + ".fields." + name;
        Object dtype = field.get("dtype");
        Map<Long, List<Long>> shapes = new LinkedHashMap<>();
        indexMap(field.get("per_sample_shapes"), at + ".per_sample_shapes")
            .forEach((gi, s) -> shapes.put(gi, longs(s, at + ".per_sample_shapes." + gi)));
        DType type;
        try {
          type = dtype == null ? null : DType.fromName(string(dtype, at + ".dtype"));
        } catch (TqException e) {
          throw corrupt(at + ".dtype", dtype);
        }
        Object kind = field.get("kind");
        fields.add(
            new FieldState(
                name,
                indexSet(field.get("produced"), at + ".produced"),
                kind == null ? null : string(kind, at + ".kind"),
                type,
                field.get("shape") == null ? null : longs(field.get("shape"), at + ".shape"),
                shapes,
                current ? indexSet(field.get("jagged"), at + ".jagged") : IndexSet.empty()));
      }
      Map<String, IndexSet> consumption = new LinkedHashMap<>();
      String consumed = path + ".consumption";
      map(p.get("consumption"), consumed)
          .forEach((task, set) -> consumption.put(task, indexSet(set, consumed + "." + task)));
      Map<String, Long> keys = new LinkedHashMap<>();
      map(p.get("keys"), path + ".keys")
          .forEach((key, gi) -> keys.put(key, index(gi, path + ".keys." + key)));
      Map<Long, InsertPosition> inserts = new LinkedHashMap<>();
      if (p.containsKey("inserts")) {
        indexMap(p.get("inserts"), path + ".inserts")
            .forEach((gi, at) -> inserts.put(gi, insertPosition(at, path + ".inserts." + gi)));
      }
      return new PartitionState(
          id,
          integer(p.get("created_at_ms"), path + ".created_at_ms"),
          fields,
          consumption,
          indexSet(p.get("active"), path + ".active"),
          indexSet(p.get("pre_allocated"), path + ".pre_allocated"),
          perSample(p.get("backend_meta"), path + ".backend_meta"),
          perSample(p.get("tags"), path + ".tags"),
          keys,
          inserts,
          p.containsKey("clearing")
              ? indexSet(p.get("clearing"), path + ".clearing")
              : IndexSet.empty());
    }

    InsertPosition insertPosition(Object o, String path) {
      List<Long> pair = longs(o, path);
      if (pair.size() != 2
          || pair.get(0) < 0
          || pair.get(1) < 0
          || pair.get(1) > Integer.MAX_VALUE) {
        throw corrupt(path, o);
      }
      return new InsertPosition(pair.get(0), (int) (long) pair.get(1));
    }
  }
}
