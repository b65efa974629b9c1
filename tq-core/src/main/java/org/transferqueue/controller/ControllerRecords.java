package org.transferqueue.controller;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.sampler.SamplingConfig;

/**
 * The records of the controller's journal: one per acknowledged change, each the msgpack map of
 * {@link ValueEncoder} (plain values only) as the record's header, with no payload. A record holds
 * the <em>outcome</em> of its operation wherever the outcome is not a function of the state and the
 * arguments alone (a fetch's samples, which a sampler may choose at random; a partition's creation
 * time; the pre-allocation in force), and the operation's arguments where it is (a production
 * update, a tag write, a clear): replaying the records in order on top of the checkpoint they
 * follow rebuilds exactly the state the live controller had, generations and the index allocator
 * included, and replay checks every recorded outcome against the one it recomputes.
 *
 * <pre>
 *  type  name               map entries
 *     1  IDENTITY           controller_id: str, sampler: str
 *     2  CREATE_PARTITION   partition, created_at_ms, prealloc: int, reserved: [gi]
 *     3  INSERT             partition, created_at_ms: int|nil (nil: existed), prealloc, indexes: [gi]
 *     4  PRODUCTION         partition, indexes: [gi], generations: [int], fields: {name: schema},
 *                           backend_meta: {gi: map}
 *     5  FETCH              partition, task, fields: [str], batch_size: int|nil,
 *                           token_budget: int|nil, dp_rank: int|nil, batch_index: int|nil,
 *                           options: map|nil (nil: not recorded), sampled: [gi], consumed: [gi]
 *     6  TASK               partition, task                  (a task registered by a read)
 *     7  RESET_CONSUMPTION  partition, task: str|nil
 *     8  TAGS               mode: "MERGE"|"REPLACE", tags: {partition: {gi: map}}
 *     9  MARK_CLEARING      indexes: [gi], partitions: [str], generations: [int], clear_consumption
 *    10  CLEAR_SAMPLES      as MARK_CLEARING
 *    11  CLEAR_PARTITION    partition
 *    12  KEYS               partition, keys: [str], created_at_ms: int|nil, prealloc, created: [gi]
 *    13  RESTORE            the whole header is a controller state (ControllerStateCodec)
 *  schema = { dtype: str|nil, shape: [int]|nil, nested: bool, non_tensor: bool,
 *             per_sample_shapes: [[int]|nil]|nil }
 * </pre>
 *
 * Stateless.
 */
final class ControllerRecords {
  static final short IDENTITY = 1;
  static final short CREATE_PARTITION = 2;
  static final short INSERT = 3;
  static final short PRODUCTION = 4;
  static final short FETCH = 5;
  static final short TASK = 6;
  static final short RESET_CONSUMPTION = 7;
  static final short TAGS = 8;
  static final short MARK_CLEARING = 9;
  static final short CLEAR_SAMPLES = 10;
  static final short CLEAR_PARTITION = 11;
  static final short KEYS = 12;
  static final short RESTORE = 13;

  private ControllerRecords() {}

  /** One record: its type and its header bytes. */
  record Entry(short type, byte[] header) {}

  static Entry identity(String controllerId, String samplerName) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("controller_id", controllerId);
    m.put("sampler", samplerName);
    return entry(IDENTITY, m);
  }

  static Entry createPartition(Partition partition, int prealloc, IndexSet reserved) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", partition.id);
    m.put("created_at_ms", partition.createdAtMillis);
    m.put("prealloc", (long) prealloc);
    m.put("reserved", indexes(reserved.toArray()));
    return entry(CREATE_PARTITION, m);
  }

  /**
   * An insert.
   *
   * @param created the partition when the insert created it, else null
   */
  static Entry insert(String partitionId, Partition created, int prealloc, long[] indexes) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", partitionId);
    m.put("created_at_ms", created == null ? null : created.createdAtMillis);
    m.put("prealloc", (long) prealloc);
    m.put("indexes", indexes(indexes));
    return entry(INSERT, m);
  }

  /**
   * A production update; encoded before the controller applies it.
   *
   * @throws TqException {@code INVALID_ARGUMENT} when its backend metadata holds a tensor
   */
  static Entry production(ProductionUpdate update) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", update.partitionId());
    m.put("indexes", update.indexes());
    m.put("generations", update.generations());
    Map<String, Object> fields = new LinkedHashMap<>();
    update.fields().forEach((name, schema) -> fields.put(name, schema(schema)));
    m.put("fields", fields);
    m.put("backend_meta", update.backendMeta());
    return entry(PRODUCTION, m);
  }

  /** A served fetch: the request's sampling inputs and the sampler's outcome. */
  static Entry fetch(GetMetadataRequest request, List<Long> sampled, List<Long> consumed) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", request.partitionId());
    m.put("task", request.taskName());
    m.put("fields", request.fields());
    m.put("batch_size", request.batchSize() == null ? null : (long) request.batchSize());
    m.put("token_budget", request.tokenBudget());
    SamplingConfig config = request.samplingConfig();
    m.put("dp_rank", config.dpRank() == null ? null : (long) config.dpRank());
    m.put("batch_index", config.batchIndex() == null ? null : (long) config.batchIndex());
    m.put("options", plainOrNull(config.options()));
    m.put("sampled", sampled);
    m.put("consumed", consumed);
    return entry(FETCH, m);
  }

  static Entry task(String partitionId, String taskName) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", partitionId);
    m.put("task", taskName);
    return entry(TASK, m);
  }

  static Entry resetConsumption(String partitionId, String taskName) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", partitionId);
    m.put("task", taskName);
    return entry(RESET_CONSUMPTION, m);
  }

  /**
   * A tag write; encoded before the controller applies it.
   *
   * @throws TqException {@code INVALID_ARGUMENT} when a tag holds a tensor
   */
  static Entry tags(TagUpdate update) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("mode", update.mode().name());
    m.put("tags", update.tags());
    return entry(TAGS, m);
  }

  /** A mark or a clear of samples ({@link #MARK_CLEARING} or {@link #CLEAR_SAMPLES}). */
  static Entry clear(short type, ClearSamplesRequest request) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("indexes", request.indexes());
    m.put("partitions", request.partitionIds());
    m.put("generations", request.generations());
    m.put("clear_consumption", request.clearConsumption());
    return entry(type, m);
  }

  static Entry clearPartition(String partitionId) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", partitionId);
    return entry(CLEAR_PARTITION, m);
  }

  /**
   * Keys resolved with creation.
   *
   * @param created the partition when the call created it, else null
   * @param createdIndexes the samples created for missing keys, in request order
   */
  static Entry keys(
      String partitionId,
      List<String> keys,
      Partition created,
      int prealloc,
      List<Long> createdIndexes) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", partitionId);
    m.put("keys", keys);
    m.put("created_at_ms", created == null ? null : created.createdAtMillis);
    m.put("prealloc", (long) prealloc);
    m.put("created", createdIndexes);
    return entry(KEYS, m);
  }

  static Entry restore(ControllerState state) {
    return new Entry(RESTORE, ControllerStateCodec.encode(state));
  }

  private static Map<String, Object> schema(FieldSchema schema) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("dtype", schema.dtype() == null ? null : schema.dtype().torchName());
    m.put("shape", schema.shape());
    m.put("nested", schema.nested());
    m.put("non_tensor", schema.nonTensor());
    m.put("per_sample_shapes", schema.perSampleShapes());
    return m;
  }

  private static List<Long> indexes(long[] values) {
    List<Long> out = new ArrayList<>(values.length);
    for (long value : values) {
      out.add(value);
    }
    return out;
  }

  /** Sampler options as they are when they hold plain values only, else null (not recorded). */
  private static Map<String, Object> plainOrNull(Map<String, Object> options) {
    if (options.isEmpty()) {
      return options;
    }
    try {
      return ValueEncoder.encode(options).auxTensors().isEmpty() ? options : null;
    } catch (TqException e) {
      return null;
    }
  }

  private static Entry entry(short type, Map<String, Object> body) {
    EncodedValue encoded = ValueEncoder.encode(body);
    if (!encoded.auxTensors().isEmpty()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "a controller that journals its changes keeps only plain values in tags and backend"
              + " metadata; this request holds "
              + encoded.auxTensors().size()
              + " tensor(s)");
    }
    return new Entry(type, encoded.mainFrame());
  }
}
