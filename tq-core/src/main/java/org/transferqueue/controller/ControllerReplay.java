package org.transferqueue.controller;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.tensor.DType;

/**
 * Applies the records of {@link ControllerRecords} to a controller's tables, in journal order, on
 * top of the checkpoint they follow. Each record is applied through the same table operations the
 * live controller ran, and every outcome the record carries (indexes allocated, samples created, a
 * fetch's samples) is compared with the one replay computes: a difference means the journal does
 * not belong on top of this state, and recovery refuses with {@code CORRUPT_DATA} naming the record
 * instead of serving a state that differs from the acknowledged one.
 *
 * <p>A fetch is replayed by asking the sampler again (so that a caching sampler rebuilds its cache)
 * and then marking consumed exactly what the record says; a sampler that answers differently (one
 * that draws at random) still gets the recorded consumption, and a warning says its own state is
 * only as recent as the last checkpoint.
 *
 * <p>Not thread-safe: the controller runs it under its lock before it serves.
 */
final class ControllerReplay {
  private static final System.Logger LOG = System.getLogger(ControllerReplay.class.getName());

  private final ControllerTables tables;
  private final SamplingStep sampling;
  private final Sampler sampler;
  private final Consumer<String> controllerId;
  private final Consumer<ControllerState> restore;
  private boolean warnedSampler;

  ControllerReplay(
      ControllerTables tables,
      SamplingStep sampling,
      Sampler sampler,
      Consumer<String> controllerId,
      Consumer<ControllerState> restore) {
    this.tables = tables;
    this.sampling = sampling;
    this.sampler = sampler;
    this.controllerId = controllerId;
    this.restore = restore;
  }

  /**
   * Applies one record.
   *
   * @param lsn the record's LSN, for messages
   * @param type its type
   * @param header its header bytes
   * @param source names the journal in messages
   * @throws TqException {@code CORRUPT_DATA} naming the record when it is malformed, of an unknown
   *     type, or its outcome differs from the replayed one
   */
  void apply(long lsn, short type, byte[] header, String source) {
    String where = source + " record lsn=" + lsn + " type=" + type;
    try {
      if (type == ControllerRecords.RESTORE) {
        restore.accept(ControllerStateCodec.decode(header, where));
        return;
      }
      Body r = new Body(where, decode(header, where));
      switch (type) {
        case ControllerRecords.IDENTITY -> controllerId.accept(r.string("controller_id"));
        case ControllerRecords.CREATE_PARTITION -> createPartition(r);
        case ControllerRecords.INSERT -> insert(r);
        case ControllerRecords.PRODUCTION -> tables.updateProduction(production(r));
        case ControllerRecords.FETCH -> fetch(r);
        case ControllerRecords.TASK ->
            tables.requirePartition(r.string("partition")).task(r.string("task"));
        case ControllerRecords.RESET_CONSUMPTION ->
            tables.resetConsumption(r.string("partition"), r.nullableString("task"));
        case ControllerRecords.TAGS -> tables.setTags(tags(r));
        case ControllerRecords.MARK_CLEARING -> tables.markClearing(clear(r));
        case ControllerRecords.CLEAR_SAMPLES -> tables.clearSamples(clear(r));
        case ControllerRecords.CLEAR_PARTITION -> {
          String partitionId = r.string("partition");
          tables.clearPartition(partitionId);
          sampler.clearCache(partitionId);
        }
        case ControllerRecords.KEYS -> keys(r);
        default -> throw r.corrupt("type", type);
      }
    } catch (TqException e) {
      if (e.code() == ErrorCode.CORRUPT_DATA) {
        throw e;
      }
      throw new TqException(
          ErrorCode.CORRUPT_DATA,
          where + " cannot be applied to the recovered state: " + e.getMessage(),
          e);
    } catch (RuntimeException e) {
      throw new TqException(ErrorCode.CORRUPT_DATA, where + " is malformed: " + e, e);
    }
  }

  private static Map<String, Object> decode(byte[] header, String where) {
    Object value = ValueDecoder.decode(MemorySegment.ofArray(header), List.of(), where);
    if (!(value instanceof Map<?, ?> map)) {
      throw new TqException(ErrorCode.CORRUPT_DATA, where + " is not a map");
    }
    Map<String, Object> out = new LinkedHashMap<>();
    map.forEach((k, v) -> out.put(String.valueOf(k), v));
    return out;
  }

  private void createPartition(Body r) {
    String partitionId = r.string("partition");
    if (tables.partition(partitionId) != null) {
      throw r.corrupt("partition (exists already)", partitionId);
    }
    tables.createPartition(partitionId, r.integer("created_at_ms"), (int) r.integer("prealloc"));
    r.expect(
        "reserved",
        r.longs("reserved"),
        tables.partition(partitionId).preAllocated().stream().boxed().toList());
  }

  private void insert(Body r) {
    String partitionId = r.string("partition");
    createIfRecorded(r, partitionId);
    List<Long> indexes = r.longs("indexes");
    BatchMeta meta =
        tables.insert(GetMetadataRequest.insert(partitionId, List.of(), indexes.size()));
    r.expect("indexes", indexes, meta.globalIndexes());
  }

  private void createIfRecorded(Body r, String partitionId) {
    Long createdAt = r.nullableInteger("created_at_ms");
    if (createdAt != null) {
      if (tables.partition(partitionId) != null) {
        throw r.corrupt("partition (exists already)", partitionId);
      }
      tables.createPartition(partitionId, createdAt, (int) r.integer("prealloc"));
    }
  }

  private void keys(Body r) {
    String partitionId = r.string("partition");
    createIfRecorded(r, partitionId);
    List<Long> created = new ArrayList<>();
    tables.resolveKeys(partitionId, r.strings("keys"), true, created::add);
    r.expect("created", r.longs("created"), created);
  }

  private void fetch(Body r) {
    String partitionId = r.string("partition");
    String task = r.string("task");
    List<String> fields = r.strings("fields");
    List<Long> sampled = r.longs("sampled");
    List<Long> consumed = r.longs("consumed");
    Partition partition = tables.requirePartition(partitionId);
    Map<String, Object> options = r.nullableMap("options");
    boolean same = false;
    if (options != null) {
      Long batchSize = r.nullableInteger("batch_size");
      Long dpRank = r.nullableInteger("dp_rank");
      Long batchIndex = r.nullableInteger("batch_index");
      GetMetadataRequest request =
          new GetMetadataRequest(
              FetchMode.FETCH,
              partitionId,
              fields,
              task,
              batchSize == null ? null : Math.toIntExact(batchSize),
              new SamplingConfig(
                  dpRank == null ? null : Math.toIntExact(dpRank),
                  batchIndex == null ? null : Math.toIntExact(batchIndex),
                  options),
              null,
              r.nullableInteger("token_budget"));
      try {
        SamplingStep.Choice choice =
            sampling.choose(request, Partition.sortedFields(fields), sampler);
        same = sampled.equals(choice.sampled()) && consumed.equals(choice.consumed());
      } catch (RuntimeException e) {
        // The sampler refused what it served live (a user sampler that changed): the recorded
        // consumption below still holds; the warning names the sampler.
        same = false;
      }
    }
    for (long index : consumed) {
      if (index < 0 || index > IndexAllocator.MAX_INDEX || !partition.isActive((int) index)) {
        throw r.corrupt("consumed", index);
      }
    }
    partition.markConsumed(task, consumed);
    if (!same && !warnedSampler) {
      warnedSampler = true;
      LOG.log(
          System.Logger.Level.WARNING,
          "replaying "
              + r.where
              + ": the sampler "
              + sampler.name()
              + " chose other samples than the journal recorded (it is not deterministic, or its"
              + " options were not recorded); consumption is recovered as recorded, the sampler's"
              + " own state only as of the last checkpoint");
    }
  }

  private static ProductionUpdate production(Body r) {
    Map<String, FieldSchema> fields = new LinkedHashMap<>();
    r.map("fields").forEach((name, schema) -> fields.put(name, schema(r, name, schema)));
    Map<Long, Map<String, Object>> backend = new LinkedHashMap<>();
    r.indexMap("backend_meta")
        .forEach((gi, meta) -> backend.put(gi, r.asMap(meta, "backend_meta")));
    return new ProductionUpdate(
        r.string("partition"), r.longs("indexes"), fields, backend, r.longs("generations"));
  }

  @SuppressWarnings("unchecked")
  private static FieldSchema schema(Body r, String name, Object value) {
    Map<String, Object> s = r.asMap(value, "fields." + name);
    Object dtype = s.get("dtype");
    Object shapes = s.get("per_sample_shapes");
    List<List<Long>> perSample = null;
    if (shapes != null) {
      perSample = new ArrayList<>();
      for (Object shape : (List<Object>) shapes) {
        perSample.add(shape == null ? null : Body.longList(shape));
      }
    }
    return new FieldSchema(
        dtype == null ? null : DType.fromName((String) dtype),
        s.get("shape") == null ? null : Body.longList(s.get("shape")),
        (Boolean) s.get("nested"),
        (Boolean) s.get("non_tensor"),
        perSample);
  }

  private static TagUpdate tags(Body r) {
    Map<String, Map<Long, Map<String, Object>>> tags = new LinkedHashMap<>();
    r.map("tags")
        .forEach(
            (partition, records) -> {
              Map<Long, Map<String, Object>> perIndex = new LinkedHashMap<>();
              r.asIndexMap(records, "tags." + partition)
                  .forEach((gi, record) -> perIndex.put(gi, r.asMap(record, "tags")));
              tags.put(partition, perIndex);
            });
    return new TagUpdate(tags, TagUpdate.Mode.valueOf(r.string("mode")));
  }

  private static ClearSamplesRequest clear(Body r) {
    return new ClearSamplesRequest(
        r.longs("indexes"),
        r.strings("partitions"),
        (Boolean) r.value("clear_consumption"),
        r.longs("generations"));
  }

  /** Typed access to a decoded record; every failure names the record and the entry. */
  private record Body(String where, Map<String, Object> m) {
    TqException corrupt(String entry, Object found) {
      String shown = String.valueOf(found);
      return new TqException(
          ErrorCode.CORRUPT_DATA,
          where
              + ": invalid entry "
              + entry
              + ": "
              + (shown.length() > 80 ? shown.substring(0, 80) + "..." : shown));
    }

    /** Checks a recorded outcome against the replayed one. */
    void expect(String entry, List<Long> recorded, List<Long> replayed) {
      if (!recorded.equals(replayed)) {
        throw new TqException(
            ErrorCode.CORRUPT_DATA,
            where
                + ": replay diverged from the journal: "
                + entry
                + " recorded "
                + abbreviate(recorded)
                + ", replayed "
                + abbreviate(replayed));
      }
    }

    private static String abbreviate(List<Long> values) {
      String shown = values.toString();
      return shown.length() > 120 ? shown.substring(0, 120) + "..." : shown;
    }

    Object value(String entry) {
      if (!m.containsKey(entry)) {
        throw corrupt(entry + " (missing)", null);
      }
      return m.get(entry);
    }

    String string(String entry) {
      if (value(entry) instanceof String s) {
        return s;
      }
      throw corrupt(entry, m.get(entry));
    }

    String nullableString(String entry) {
      return value(entry) == null ? null : string(entry);
    }

    long integer(String entry) {
      if (value(entry) instanceof Long l) {
        return l;
      }
      throw corrupt(entry, m.get(entry));
    }

    Long nullableInteger(String entry) {
      return value(entry) == null ? null : integer(entry);
    }

    List<Long> longs(String entry) {
      try {
        return longList(value(entry));
      } catch (RuntimeException e) {
        throw corrupt(entry, m.get(entry));
      }
    }

    List<String> strings(String entry) {
      if (value(entry) instanceof List<?> list) {
        List<String> out = new ArrayList<>(list.size());
        for (Object o : list) {
          if (!(o instanceof String s)) {
            throw corrupt(entry, list);
          }
          out.add(s);
        }
        return out;
      }
      throw corrupt(entry, m.get(entry));
    }

    Map<String, Object> map(String entry) {
      return asMap(value(entry), entry);
    }

    Map<String, Object> nullableMap(String entry) {
      return value(entry) == null ? null : map(entry);
    }

    Map<Long, Object> indexMap(String entry) {
      return asIndexMap(value(entry), entry);
    }

    Map<String, Object> asMap(Object value, String entry) {
      if (value instanceof Map<?, ?> map) {
        Map<String, Object> out = new LinkedHashMap<>();
        map.forEach(
            (k, v) -> {
              if (!(k instanceof String key)) {
                throw corrupt(entry + " (key)", k);
              }
              out.put(key, v);
            });
        return out;
      }
      throw corrupt(entry, value);
    }

    Map<Long, Object> asIndexMap(Object value, String entry) {
      if (value instanceof Map<?, ?> map) {
        Map<Long, Object> out = new LinkedHashMap<>();
        map.forEach(
            (k, v) -> {
              if (!(k instanceof Long key)) {
                throw corrupt(entry + " (key)", k);
              }
              out.put(key, v);
            });
        return out;
      }
      throw corrupt(entry, value);
    }

    static List<Long> longList(Object value) {
      List<?> list = (List<?>) value;
      List<Long> out = new ArrayList<>(list.size());
      for (Object o : list) {
        out.add((Long) o);
      }
      return out;
    }
  }
}
