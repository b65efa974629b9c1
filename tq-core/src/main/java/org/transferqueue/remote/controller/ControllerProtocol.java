package org.transferqueue.remote.controller;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.ToLongBiFunction;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.ConsumptionStatus;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.ControllerStatistics;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.IndexSet;
import org.transferqueue.controller.KeyResolution;
import org.transferqueue.controller.KvListing;
import org.transferqueue.controller.PartitionStatistics;
import org.transferqueue.controller.ProductionStatus;
import org.transferqueue.controller.TagUpdate;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.metrics.ControllerOp;
import org.transferqueue.remote.MessageType;
import org.transferqueue.remote.MetaCodec;
import org.transferqueue.remote.MetaReader;
import org.transferqueue.remote.MetaWriter;

/**
 * The protocol table of the controller service (message types 100-199): every operation of {@link
 * org.transferqueue.controller.ControllerApi} as one typed entry that names its message type, its
 * request (one msgpack array of the operation's arguments, written and read by one codec), its
 * reply (the msgpack of the result: nil for "absent" and for operations without a result, in {@link
 * MetaCodec} layout) and how the server measures it. {@link RemoteController} encodes requests and
 * decodes replies with these entries, {@link ControllerServer} decodes requests and encodes replies
 * with the same ones, so the arity and the field order of a message are written once. Errors travel
 * as transport error replies carrying the controller's {@link ErrorCode}.
 *
 * <p>Adding a message is one entry here (and in {@link #OPS}), one handler in {@link
 * ControllerServer} (the server refuses to start without one), one method in {@link
 * RemoteController} and its row in docs/PROTOCOL.md §7.
 */
public final class ControllerProtocol {
  private ControllerProtocol() {}

  // ---- request records: the arguments of one message, in wire order ----

  /** The arguments of a message without arguments. */
  static final Args<Void> NONE = new Args<>(0, (w, q) -> {}, in -> null);

  /** {@code [partitionId]} (nil allowed where the operation allows it). */
  static final Args<String> PARTITION =
      new Args<>(1, MetaWriter::string, in -> in.string("partitionId"));

  /** {@code [partitionId, fields]}. */
  record PartitionFields(String partitionId, List<String> fields) {
    static final Args<PartitionFields> ARGS =
        new Args<>(
            2,
            (w, q) -> w.string(q.partitionId).strings(q.fields),
            in -> new PartitionFields(in.string("partitionId"), in.strings("fields")));
  }

  /** {@code [partitionId, taskName]}. */
  record PartitionTask(String partitionId, String taskName) {
    static final Args<PartitionTask> ARGS =
        new Args<>(
            2,
            (w, q) -> w.string(q.partitionId).string(q.taskName),
            in -> new PartitionTask(in.string("partitionId"), in.string("taskName")));
  }

  /** {@code [partitionId, fields, taskName]}. */
  record ScanReady(String partitionId, List<String> fields, String taskName) {
    static final Args<ScanReady> ARGS =
        new Args<>(
            3,
            (w, q) -> w.string(q.partitionId).strings(q.fields).string(q.taskName),
            in ->
                new ScanReady(
                    in.string("partitionId"), in.strings("fields"), in.string("taskName")));
  }

  /** {@code [partitionId, indexes]}. */
  record PartitionIndexes(String partitionId, List<Long> indexes) {
    static final Args<PartitionIndexes> ARGS =
        new Args<>(
            2,
            (w, q) -> w.string(q.partitionId).longs(q.indexes),
            in -> new PartitionIndexes(in.string("partitionId"), in.longs("indexes")));
  }

  /** {@code [partitionId, indexes, fields]}. */
  record PartitionIndexesFields(String partitionId, List<Long> indexes, List<String> fields) {
    static final Args<PartitionIndexesFields> ARGS =
        new Args<>(
            3,
            (w, q) -> w.string(q.partitionId).longs(q.indexes).strings(q.fields),
            in ->
                new PartitionIndexesFields(
                    in.string("partitionId"), in.longs("indexes"), in.strings("fields")));
  }

  /** {@code [partitionId, fields, indexes, generations]}. */
  record CheckPut(
      String partitionId, Map<String, FieldSchema> fields, long[] indexes, long[] generations) {
    static final Args<CheckPut> ARGS =
        new Args<>(
            4,
            (w, q) ->
                w.string(q.partitionId)
                    .fieldSchemas(q.fields)
                    .longs(q.indexes)
                    .longs(q.generations),
            in ->
                new CheckPut(
                    in.string("partitionId"),
                    in.fieldSchemas("fields"),
                    in.longArray("indexes"),
                    in.longArray("generations")));
  }

  /** {@code [partitionId, keys, create]}. */
  record ResolveKeys(String partitionId, List<String> keys, boolean create) {
    static final Args<ResolveKeys> ARGS =
        new Args<>(
            3,
            (w, q) -> w.string(q.partitionId).strings(q.keys).bool(q.create),
            in -> new ResolveKeys(in.string("partitionId"), in.strings("keys"), in.bool("create")));
  }

  /** {@code [partitionId, keys, fields, sampleCount]}. */
  record ResolveKeysForPut(
      String partitionId, List<String> keys, Map<String, FieldSchema> fields, int sampleCount) {
    static final Args<ResolveKeysForPut> ARGS =
        new Args<>(
            4,
            (w, q) ->
                w.string(q.partitionId)
                    .strings(q.keys)
                    .fieldSchemas(q.fields)
                    .integer(q.sampleCount),
            in ->
                new ResolveKeysForPut(
                    in.string("partitionId"),
                    in.strings("keys"),
                    in.fieldSchemas("fields"),
                    in.int32("sampleCount")));
  }

  /** {@code [GetMetadataRequest]}; a blocking fetch over the server's maximum wait is refused. */
  static final Args<GetMetadataRequest> GET_METADATA_ARGS =
      new Args<>(
          1,
          ControllerCodec::writeGetMetadataRequest,
          in -> checkWait(ControllerCodec.readGetMetadataRequest(in)));

  /** A single argument written by a {@link MetaWriter} method and read by a reader method. */
  private static <Q> Args<Q> one(BiConsumer<MetaWriter, Q> write, Function<MetaReader, Q> read) {
    return new Args<>(1, write, read);
  }

  private static GetMetadataRequest checkWait(GetMetadataRequest request) {
    Duration timeout = request.timeout();
    if (timeout != null && timeout.compareTo(ControllerOptions.FETCH_TIMEOUT_MAX) > 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "fetch timeout=" + timeout + " > max=" + ControllerOptions.FETCH_TIMEOUT_MAX);
    }
    return request;
  }

  // ---- replies ----

  private static final Result<Void> NIL =
      new Result<>(
          (out, r) -> out.nil(),
          in -> {
            in.tryNil();
            return null;
          });

  private static Result<Boolean> bool(String what) {
    return new Result<>(MetaWriter::bool, in -> in.bool(what));
  }

  private static Result<Integer> int32(String what) {
    return new Result<>((out, n) -> out.integer(n), in -> in.int32(what));
  }

  private static Result<IndexSet> indexes() {
    return new Result<>(MetaWriter::indexSet, in -> in.indexSet("indexes"));
  }

  private static Result<Map<Long, Map<String, Object>>> records(String what) {
    return new Result<>(MetaWriter::indexedRecords, in -> in.indexedRecords(what));
  }

  private static final Result<BatchMeta> BATCH_META =
      new Result<>(MetaWriter::batchMeta, MetaReader::batchMeta);

  /** A result that may be absent: nil, or the value. */
  private static <R> Result<Optional<R>> optional(
      BiConsumer<MetaWriter, R> write, Function<MetaReader, R> read) {
    return new Result<>(
        (out, r) -> r.ifPresentOrElse(v -> write.accept(out, v), out::nil),
        in -> in.tryNil() ? Optional.empty() : Optional.of(read.apply(in)));
  }

  private static final Result<KeyResolution> KEY_RESOLUTION =
      new Result<>(
          (out, r) -> out.arrayHeader(2).batchMeta(r.meta()).longs(r.createdIndexes()),
          in -> {
            in.expectArray(2, "KeyResolution");
            BatchMeta meta = in.batchMeta();
            return new KeyResolution(meta, in.longs("createdIndexes"));
          });

  /** The keys of {@code RESOLVE_INDEXES}: at most one per index asked for. */
  private static List<String> keysOf(MetaReader in, PartitionIndexes request) {
    int n = in.arrayHeader("keys");
    if (n > request.indexes().size()) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "RESOLVE_INDEXES reply has keys="
              + n
              + " > indexes="
              + request.indexes().size()
              + " asked");
    }
    List<String> keys = new ArrayList<>(Math.min(n, 1024));
    for (int i = 0; i < n; i++) {
      keys.add(in.string("keys[" + i + "]"));
    }
    return Collections.unmodifiableList(keys);
  }

  // ---- the table ----

  /** {@code []} → controller id. */
  static final Op<Void, String> CONTROLLER_ID =
      op(
          100,
          "CONTROLLER_ID",
          NONE,
          new Result<>(MetaWriter::string, in -> in.requiredString("id")));

  /** {@code [partitionId]} → created. */
  static final Op<String, Boolean> CREATE_PARTITION =
      op(101, "CREATE_PARTITION", PARTITION, bool("created"));

  /** {@code []} → partition ids. */
  static final Op<Void, List<String>> LIST_PARTITIONS =
      op(
              102,
              "LIST_PARTITIONS",
              NONE,
              new Result<>(MetaWriter::strings, in -> in.strings("partitionIds")))
          .measured(ControllerOp.GET_LIST_PARTITIONS);

  /** {@code [partitionId]} → index set. */
  static final Op<String, IndexSet> PARTITION_INDEX_RANGE =
      op(103, "PARTITION_INDEX_RANGE", PARTITION, indexes());

  /**
   * {@code [ProductionUpdate]} → nil (the storage notification); measured as {@code
   * NOTIFY_DATA_UPDATE} with the update's samples.
   */
  static final Op<ProductionUpdate, Void> UPDATE_PRODUCTION =
      op(
              104,
              "UPDATE_PRODUCTION",
              one(ControllerCodec::writeProductionUpdate, ControllerCodec::readProductionUpdate),
              NIL)
          .counted(ControllerOp.NOTIFY_DATA_UPDATE, (update, r) -> update.indexes().size());

  /** {@code [partitionId, fields]} → production status or nil. */
  static final Op<PartitionFields, Optional<ProductionStatus>> GET_PRODUCTION =
      op(
              105,
              "GET_PRODUCTION",
              PartitionFields.ARGS,
              optional(
                  ControllerCodec::writeProductionStatus, ControllerCodec::readProductionStatus))
          .measured(ControllerOp.GET_PRODUCTION);

  /** {@code [partitionId, fields, taskName]} → index set. */
  static final Op<ScanReady, IndexSet> SCAN_READY =
      op(106, "SCAN_READY", ScanReady.ARGS, indexes());

  /** {@code [partitionId, taskName]} → consumption status or nil. */
  static final Op<PartitionTask, Optional<ConsumptionStatus>> GET_CONSUMPTION =
      op(
              107,
              "GET_CONSUMPTION",
              PartitionTask.ARGS,
              optional(
                  ControllerCodec::writeConsumptionStatus, ControllerCodec::readConsumptionStatus))
          .measured(ControllerOp.GET_CONSUMPTION);

  /** {@code [partitionId, taskName or nil]} → whether a consumed sample was reset. */
  static final Op<PartitionTask, Boolean> RESET_CONSUMPTION =
      op(108, "RESET_CONSUMPTION", PartitionTask.ARGS, bool("reset"))
          .measured(ControllerOp.RESET_CONSUMPTION);

  /** {@code [GetMetadataRequest]} → batch metadata; a blocking fetch carries its timeout. */
  static final Op<GetMetadataRequest, BatchMeta> GET_METADATA =
      op(109, "GET_METADATA", GET_METADATA_ARGS, BATCH_META).measured(ControllerOp.GET_META);

  /** {@code [partitionId]} → batch metadata or nil. */
  static final Op<String, Optional<BatchMeta>> GET_PARTITION_META =
      op(
              110,
              "GET_PARTITION_META",
              PARTITION,
              optional(MetaWriter::batchMeta, MetaReader::batchMeta))
          .measured(ControllerOp.GET_PARTITION_META);

  /** {@code [TagUpdate]} → updated count. */
  static final Op<TagUpdate, Integer> SET_TAGS =
      op(
              111,
              "SET_TAGS",
              one(ControllerCodec::writeTagUpdate, ControllerCodec::readTagUpdate),
              int32("updated"))
          .measured(ControllerOp.SET_CUSTOM_META);

  /** {@code [partitionId, indexes]} → records by index. */
  static final Op<PartitionIndexes, Map<Long, Map<String, Object>>> GET_TAGS =
      op(112, "GET_TAGS", PartitionIndexes.ARGS, records("tags"));

  /** {@code [partitionId, indexes, fields]} → records by index. */
  static final Op<PartitionIndexesFields, Map<Long, Map<String, Object>>> GET_BACKEND_META =
      op(113, "GET_BACKEND_META", PartitionIndexesFields.ARGS, records("backendMeta"));

  /** {@code [partitionId]} → existed. */
  static final Op<String, Boolean> CLEAR_PARTITION =
      op(114, "CLEAR_PARTITION", PARTITION, bool("existed")).measured(ControllerOp.CLEAR_PARTITION);

  /** {@code [ClearSamplesRequest]} → removed count; measured as {@code CLEAR_META} with it. */
  static final Op<ClearSamplesRequest, Integer> CLEAR_SAMPLES =
      op(
              115,
              "CLEAR_SAMPLES",
              one(
                  ControllerCodec::writeClearSamplesRequest,
                  ControllerCodec::readClearSamplesRequest),
              int32("removed"))
          .counted(ControllerOp.CLEAR_META, (request, removed) -> removed);

  /** {@code [partitionId, keys, create]} → batch metadata. */
  static final Op<ResolveKeys, BatchMeta> RESOLVE_KEYS =
      op(116, "RESOLVE_KEYS", ResolveKeys.ARGS, BATCH_META).measured(ControllerOp.KV_RETRIEVE_META);

  /** {@code [partitionId, indexes]} → keys (nil entries for samples without key). */
  static final Op<PartitionIndexes, List<String>> RESOLVE_INDEXES =
      new Op<>(
              117,
              "RESOLVE_INDEXES",
              PartitionIndexes.ARGS,
              MetaWriter::strings,
              ControllerProtocol::keysOf,
              null,
              null)
          .measured(ControllerOp.KV_RETRIEVE_KEYS);

  /** {@code [partitionId or nil]} → key listing. */
  static final Op<String, KvListing> LIST_KEYS =
      op(
              118,
              "LIST_KEYS",
              PARTITION,
              new Result<>(ControllerCodec::writeKvListing, ControllerCodec::readKvListing))
          .measured(ControllerOp.KV_LIST);

  /** {@code [partitionId]} → partition statistics or nil. */
  static final Op<String, Optional<PartitionStatistics>> PARTITION_STATISTICS =
      op(
          119,
          "PARTITION_STATISTICS",
          PARTITION,
          optional(
              ControllerCodec::writePartitionStatistics, ControllerCodec::readPartitionStatistics));

  /** {@code []} → controller statistics. */
  static final Op<Void, ControllerStatistics> STATISTICS =
      op(
          120,
          "STATISTICS",
          NONE,
          new Result<>(
              ControllerCodec::writeControllerStatistics,
              ControllerCodec::readControllerStatistics));

  /**
   * {@code [partitionId, fields, indexes, generations]} → nil, or the error the production update
   * of such a put would get (unknown partition, stale generation, foreign index, schema).
   */
  static final Op<CheckPut, Void> CHECK_PUT = op(121, "CHECK_PUT", CheckPut.ARGS, NIL);

  /** {@code []} → the controller state as one binary in the ControllerStateCodec encoding. */
  static final Op<Void, byte[]> SNAPSHOT_STATE =
      op(
          122,
          "SNAPSHOT_STATE",
          NONE,
          new Result<>(MetaWriter::binary, in -> in.binary("controller state")));

  /** {@code [state binary]} → nil, or the decode or restore error (nothing changes then). */
  static final Op<byte[], Void> RESTORE_STATE =
      op(123, "RESTORE_STATE", one(MetaWriter::binary, in -> in.binary("state")), NIL);

  /**
   * {@code [partitionId, keys, fields, sampleCount]} → {@code [batch metadata, created indexes]},
   * or the schema error (nothing is created then).
   */
  static final Op<ResolveKeysForPut, KeyResolution> RESOLVE_KEYS_FOR_PUT =
      op(124, "RESOLVE_KEYS_FOR_PUT", ResolveKeysForPut.ARGS, KEY_RESOLUTION)
          .measured(ControllerOp.KV_RETRIEVE_META);

  /**
   * {@code [partitionId, indexes, fields or nil]} → batch metadata of those indexes that are active
   * samples of the partition, in request order.
   */
  static final Op<PartitionIndexesFields, BatchMeta> GET_SAMPLE_META =
      op(125, "GET_SAMPLE_META", PartitionIndexesFields.ARGS, BATCH_META);

  /** {@code []} → {@code host:port} of the controller's Prometheus endpoint, or nil for none. */
  static final Op<Void, Optional<String>> METRICS_ENDPOINT =
      op(
          126,
          "METRICS_ENDPOINT",
          NONE,
          optional(MetaWriter::string, in -> in.requiredString("endpoint")));

  /**
   * {@code [ClearSamplesRequest]} → {@code int} newly marked: the first step of a clear; marked
   * samples are handed out by no fetch until {@code CLEAR_SAMPLES} or {@code CLEAR_PARTITION} frees
   * them.
   */
  static final Op<ClearSamplesRequest, Integer> MARK_CLEARING =
      op(
          127,
          "MARK_CLEARING",
          one(ControllerCodec::writeClearSamplesRequest, ControllerCodec::readClearSamplesRequest),
          int32("marked"));

  /** Every entry, by message type. */
  static final List<Op<?, ?>> OPS =
      List.of(
          CONTROLLER_ID,
          CREATE_PARTITION,
          LIST_PARTITIONS,
          PARTITION_INDEX_RANGE,
          UPDATE_PRODUCTION,
          GET_PRODUCTION,
          SCAN_READY,
          GET_CONSUMPTION,
          RESET_CONSUMPTION,
          GET_METADATA,
          GET_PARTITION_META,
          SET_TAGS,
          GET_TAGS,
          GET_BACKEND_META,
          CLEAR_PARTITION,
          CLEAR_SAMPLES,
          RESOLVE_KEYS,
          RESOLVE_INDEXES,
          LIST_KEYS,
          PARTITION_STATISTICS,
          STATISTICS,
          CHECK_PUT,
          SNAPSHOT_STATE,
          RESTORE_STATE,
          RESOLVE_KEYS_FOR_PUT,
          GET_SAMPLE_META,
          METRICS_ENDPOINT,
          MARK_CLEARING);

  /**
   * The message types of the controller service, in the order of their numbers.
   *
   * @return every entry of the table
   */
  public static List<MessageType> types() {
    return List.copyOf(OPS);
  }

  private static <Q, R> Op<Q, R> op(int type, String name, Args<Q> args, Result<R> result) {
    return new Op<>(
        type, name, args, result.write(), (in, request) -> result.read().apply(in), null, null);
  }

  /** How a request's arguments travel: their count and their codec. */
  record Args<Q>(int arity, BiConsumer<MetaWriter, Q> write, Function<MetaReader, Q> read) {}

  /** How a reply travels: its codec. */
  private record Result<R>(BiConsumer<MetaWriter, R> write, Function<MetaReader, R> read) {}

  /**
   * One operation of the controller service.
   *
   * @param typeId the message type
   * @param name its name in docs/PROTOCOL.md
   * @param args the request's arity and codec
   * @param writeReply writes the result as the reply's metadata
   * @param readReply reads the reply's metadata, given the request it answers
   * @param measuredAs the upstream {@code op_type} the server measures the request as, or null
   * @param samples for a request measured around the controller call only: the samples it
   *     processed, from its arguments and result; null for a request measured as a whole
   * @param <Q> the request
   * @param <R> the result
   */
  record Op<Q, R>(
      int typeId,
      String name,
      Args<Q> args,
      BiConsumer<MetaWriter, R> writeReply,
      BiFunction<MetaReader, Q, R> readReply,
      ControllerOp measuredAs,
      ToLongBiFunction<Q, R> samples)
      implements MessageType {

    /** This entry measured as a whole (decoding, the call and encoding the reply). */
    Op<Q, R> measured(ControllerOp op) {
      return new Op<>(typeId, name, args, writeReply, readReply, op, null);
    }

    /** This entry measured around the controller call, counting samples. */
    Op<Q, R> counted(ControllerOp op, ToLongBiFunction<Q, R> count) {
      return new Op<>(typeId, name, args, writeReply, readReply, op, count);
    }

    /** The request's metadata: the array of its arguments. */
    byte[] encodeRequest(Q request) {
      MetaWriter w = new MetaWriter().arrayHeader(args.arity());
      args.write().accept(w, request);
      return w.toByteArray();
    }

    /**
     * Reads a reply's whole metadata. A reply that is well-formed msgpack but breaks the reply's
     * layout (a nil where a list must be, a value a result record refuses) is a {@code
     * PROTOCOL_ERROR} naming the message, never an unchecked exception from a record constructor.
     */
    R decodeReply(byte[] metadata, Q request) {
      try {
        return MetaCodec.decode(metadata, in -> readReply.apply(in, request));
      } catch (NullPointerException | IllegalArgumentException e) {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_ERROR, "malformed reply to " + this + ": " + e.getMessage(), e);
      }
    }

    @Override
    public String toString() {
      return name + "(" + typeId + ")";
    }
  }
}
