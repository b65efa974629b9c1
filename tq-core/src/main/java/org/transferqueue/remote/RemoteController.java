package org.transferqueue.remote;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.ConsumptionStatus;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.controller.ControllerState;
import org.transferqueue.controller.ControllerStateCodec;
import org.transferqueue.controller.ControllerStatistics;
import org.transferqueue.controller.FetchMode;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.IndexSet;
import org.transferqueue.controller.KeyResolution;
import org.transferqueue.controller.KvListing;
import org.transferqueue.controller.Names;
import org.transferqueue.controller.PartitionStatistics;
import org.transferqueue.controller.ProductionStatus;
import org.transferqueue.controller.TagUpdate;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.transport.BodyDestination;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.Response;
import org.transferqueue.transport.TransportClient;

/**
 * A {@link ControllerApi} that calls a {@link ControllerServer} over the transport.
 *
 * <p>Errors: a controller error arrives with its own {@link ErrorCode} (a schema conflict is still
 * {@code SCHEMA_CONFLICT}, a blocking fetch that found too little data a {@link
 * org.transferqueue.DeadlineExceededException}); the transport adds {@code CONNECTION_FAILED},
 * {@code UNAUTHENTICATED}, {@code PROTOCOL_ERROR} and {@code DEADLINE_EXCEEDED} when the server
 * does not answer in time.
 *
 * <p>Arguments: partition ids, task names, field names and keys are checked with {@link Names}, as
 * the controller checks them, before a request is encoded, so that a name the wire cannot carry (a
 * string with a lone surrogate) is refused naming what it is; the server checks them again.
 *
 * <p>Deadlines: every call has {@code callTimeout}. A blocking fetch sends its wait (the request's
 * timeout, or {@code fetchTimeout} when it names none) to the server, which never waits longer, and
 * allows the call that wait plus {@code callTimeout}.
 *
 * <p>Thread-safe; stateless apart from the borrowed transport client, which the caller owns and
 * closes.
 */
public final class RemoteController implements ControllerApi {
  private final Exchange exchange;
  private final HostPort address;
  private final Duration callTimeout;
  private final Duration fetchTimeout;

  /**
   * Creates a proxy.
   *
   * @param transport the transport client; borrowed
   * @param address the controller server's address
   * @param callTimeout the deadline of every call (beyond a blocking fetch's own wait)
   * @param fetchTimeout the wait of a blocking fetch whose request names no timeout
   */
  public RemoteController(
      TransportClient transport, HostPort address, Duration callTimeout, Duration fetchTimeout) {
    this(overTransport(transport, address), address, callTimeout, fetchTimeout);
  }

  /**
   * Creates a proxy whose requests go through {@code exchange} (the protocol tests answer them
   * in-process, without sockets).
   */
  RemoteController(
      Exchange exchange, HostPort address, Duration callTimeout, Duration fetchTimeout) {
    this.exchange = Objects.requireNonNull(exchange, "exchange");
    this.address = Objects.requireNonNull(address, "address");
    this.callTimeout = positive(callTimeout, "callTimeout");
    this.fetchTimeout = positive(fetchTimeout, "fetchTimeout");
  }

  /** Sends one request (metadata only) and returns the reply's metadata or throws its error. */
  @FunctionalInterface
  interface Exchange {
    byte[] call(int type, byte[] metadata, Duration timeout);
  }

  private static Exchange overTransport(TransportClient transport, HostPort address) {
    Objects.requireNonNull(transport, "transport");
    Objects.requireNonNull(address, "address");
    return (type, metadata, timeout) -> {
      try (Response response =
          transport.call(
              address, Request.of(type, metadata), BodyDestination.into(List.of()), timeout)) {
        return response.metadata();
      }
    };
  }

  private static Duration positive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, name + "=" + d + " must be positive");
    }
    return d;
  }

  /**
   * The controller server's address.
   *
   * @return the address
   */
  public HostPort address() {
    return address;
  }

  private <T> T call(
      int type, int arity, Consumer<MetaWriter> args, Function<MetaReader, T> result) {
    return call(type, arity, args, result, callTimeout);
  }

  private <T> T call(
      int type,
      int arity,
      Consumer<MetaWriter> args,
      Function<MetaReader, T> result,
      Duration timeout) {
    MetaWriter w = new MetaWriter().arrayHeader(arity);
    args.accept(w);
    return MetaCodec.decode(exchange.call(type, w.toByteArray(), timeout), result);
  }

  private static <T> Function<MetaReader, Optional<T>> optional(Function<MetaReader, T> read) {
    return in -> in.tryNil() ? Optional.empty() : Optional.of(read.apply(in));
  }

  private static final Function<MetaReader, Void> NOTHING =
      in -> {
        in.tryNil();
        return null;
      };

  @Override
  public String controllerId() {
    return call(ControllerMessages.CONTROLLER_ID, 0, w -> {}, in -> in.requiredString("id"));
  }

  @Override
  public Optional<String> metricsEndpoint() {
    return call(
        ControllerMessages.METRICS_ENDPOINT,
        0,
        w -> {},
        optional(in -> in.requiredString("endpoint")));
  }

  @Override
  public boolean createPartition(String partitionId) {
    Names.checkPartitionId(partitionId);
    return call(
        ControllerMessages.CREATE_PARTITION,
        1,
        w -> w.string(partitionId),
        in -> in.bool("created"));
  }

  @Override
  public List<String> listPartitions() {
    return call(ControllerMessages.LIST_PARTITIONS, 0, w -> {}, in -> in.strings("partitionIds"));
  }

  @Override
  public IndexSet getPartitionIndexRange(String partitionId) {
    Names.checkPartitionId(partitionId);
    return call(
        ControllerMessages.PARTITION_INDEX_RANGE,
        1,
        w -> w.string(partitionId),
        in -> in.indexSet("indexes"));
  }

  @Override
  public void updateProductionStatus(ProductionUpdate update) {
    Objects.requireNonNull(update, "update");
    call(ControllerMessages.UPDATE_PRODUCTION, 1, w -> w.productionUpdate(update), NOTHING);
  }

  @Override
  public void checkPut(
      String partitionId, Map<String, FieldSchema> fields, long[] indexes, long[] generations) {
    Names.checkPartitionId(partitionId);
    Objects.requireNonNull(fields, "fields");
    Names.checkFieldNames(fields.keySet());
    call(
        ControllerMessages.CHECK_PUT,
        4,
        w -> w.string(partitionId).fieldSchemas(fields).longs(indexes).longs(generations),
        NOTHING);
  }

  @Override
  public Optional<ProductionStatus> getProductionStatus(String partitionId, List<String> fields) {
    Names.checkPartitionId(partitionId);
    Objects.requireNonNull(fields, "fields");
    Names.checkFieldNames(fields);
    return call(
        ControllerMessages.GET_PRODUCTION,
        2,
        w -> w.string(partitionId).strings(fields),
        optional(MetaReader::productionStatus));
  }

  @Override
  public IndexSet scanReady(String partitionId, List<String> fields, String taskName) {
    Names.checkPartitionId(partitionId);
    if (fields != null) {
      Names.checkFieldNames(fields);
    }
    if (taskName != null) {
      Names.checkTaskName(taskName);
    }
    return call(
        ControllerMessages.SCAN_READY,
        3,
        w -> w.string(partitionId).strings(fields).string(taskName),
        in -> in.indexSet("indexes"));
  }

  @Override
  public Optional<ConsumptionStatus> getConsumptionStatus(String partitionId, String taskName) {
    Names.checkPartitionId(partitionId);
    Names.checkTaskName(taskName);
    return call(
        ControllerMessages.GET_CONSUMPTION,
        2,
        w -> w.string(partitionId).string(taskName),
        optional(MetaReader::consumptionStatus));
  }

  @Override
  public boolean resetConsumption(String partitionId, String taskName) {
    Names.checkPartitionId(partitionId);
    if (taskName != null) {
      Names.checkTaskName(taskName);
    }
    return call(
        ControllerMessages.RESET_CONSUMPTION,
        2,
        w -> w.string(partitionId).string(taskName),
        in -> in.bool("reset"));
  }

  @Override
  public BatchMeta getMetadata(GetMetadataRequest request) {
    Objects.requireNonNull(request, "request");
    Duration timeout = callTimeout;
    GetMetadataRequest sent = request;
    if (request.mode() == FetchMode.FETCH) {
      Duration wait = request.timeout() != null ? request.timeout() : fetchTimeout;
      sent = request.withTimeout(wait);
      timeout = wait.plus(callTimeout);
    }
    GetMetadataRequest finalRequest = sent;
    return call(
        ControllerMessages.GET_METADATA,
        1,
        w -> w.getMetadataRequest(finalRequest),
        MetaReader::batchMeta,
        timeout);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The wire has no value for these outcomes: the controller reports a fetch it could not serve
   * by the deadline as {@code DEADLINE_EXCEEDED} and a force fetch of a missing partition as {@code
   * UNKNOWN_PARTITION}. This is the one place where those two errors become values.
   */
  @Override
  public Optional<BatchMeta> tryGetMetadata(GetMetadataRequest request) {
    Objects.requireNonNull(request, "request");
    try {
      BatchMeta meta = getMetadata(request);
      return request.mode() == FetchMode.FETCH && meta.isEmpty()
          ? Optional.empty()
          : Optional.of(meta);
    } catch (DeadlineExceededException e) {
      if (request.mode() == FetchMode.FETCH) {
        return Optional.empty();
      }
      throw e;
    } catch (TqException e) {
      if (request.mode() == FetchMode.FORCE_FETCH && e.code() == ErrorCode.UNKNOWN_PARTITION) {
        return Optional.empty();
      }
      throw e;
    }
  }

  @Override
  public Optional<BatchMeta> getPartitionMeta(String partitionId) {
    Names.checkPartitionId(partitionId);
    return call(
        ControllerMessages.GET_PARTITION_META,
        1,
        w -> w.string(partitionId),
        optional(MetaReader::batchMeta));
  }

  @Override
  public BatchMeta getSampleMeta(String partitionId, List<Long> indexes, List<String> fields) {
    return call(
        ControllerMessages.GET_SAMPLE_META,
        3,
        w -> w.string(partitionId).longs(indexes).strings(fields),
        MetaReader::batchMeta);
  }

  @Override
  public int setTags(TagUpdate update) {
    Objects.requireNonNull(update, "update");
    return call(
        ControllerMessages.SET_TAGS, 1, w -> w.tagUpdate(update), in -> in.int32("updated"));
  }

  @Override
  public Map<Long, Map<String, Object>> getTags(String partitionId, List<Long> indexes) {
    Names.checkPartitionId(partitionId);
    return call(
        ControllerMessages.GET_TAGS,
        2,
        w -> w.string(partitionId).longs(indexes),
        in -> in.indexedRecords("tags"));
  }

  @Override
  public Map<Long, Map<String, Object>> getBackendMeta(
      String partitionId, List<Long> indexes, List<String> fields) {
    Names.checkPartitionId(partitionId);
    if (fields != null) {
      Names.checkFieldNames(fields);
    }
    return call(
        ControllerMessages.GET_BACKEND_META,
        3,
        w -> w.string(partitionId).longs(indexes).strings(fields),
        in -> in.indexedRecords("backendMeta"));
  }

  @Override
  public boolean clearPartition(String partitionId) {
    Names.checkPartitionId(partitionId);
    return call(
        ControllerMessages.CLEAR_PARTITION,
        1,
        w -> w.string(partitionId),
        in -> in.bool("existed"));
  }

  @Override
  public int clearSamples(ClearSamplesRequest request) {
    Objects.requireNonNull(request, "request");
    return call(
        ControllerMessages.CLEAR_SAMPLES,
        1,
        w -> w.clearSamplesRequest(request),
        in -> in.int32("removed"));
  }

  @Override
  public int markClearing(ClearSamplesRequest request) {
    Objects.requireNonNull(request, "request");
    return call(
        ControllerMessages.MARK_CLEARING,
        1,
        w -> w.clearSamplesRequest(request),
        in -> in.int32("marked"));
  }

  @Override
  public BatchMeta resolveKeys(String partitionId, List<String> keys, boolean create) {
    Names.checkPartitionId(partitionId);
    Names.checkKeys(keys);
    BatchMeta meta =
        call(
            ControllerMessages.RESOLVE_KEYS,
            3,
            w -> w.string(partitionId).strings(keys).bool(create),
            MetaReader::batchMeta);
    // Each key resolves to at most one sample: more rows would be read as if they were asked for.
    if (meta.size() > keys.size()) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "RESOLVE_KEYS reply has rows="
              + meta.size()
              + " > keys="
              + keys.size()
              + " asked for in partition '"
              + partitionId
              + "'");
    }
    return meta;
  }

  @Override
  public KeyResolution resolveKeysForPut(
      String partitionId, List<String> keys, Map<String, FieldSchema> fields, int sampleCount) {
    Names.checkPartitionId(partitionId);
    Names.checkKeys(keys);
    Objects.requireNonNull(fields, "fields");
    Names.checkFieldNames(fields.keySet());
    return call(
        ControllerMessages.RESOLVE_KEYS_FOR_PUT,
        4,
        w -> w.string(partitionId).strings(keys).fieldSchemas(fields).integer(sampleCount),
        in -> {
          in.expectArray(2, "KeyResolution");
          BatchMeta meta = in.batchMeta();
          return new KeyResolution(meta, in.longs("createdIndexes"));
        });
  }

  @Override
  public List<String> resolveIndexes(String partitionId, List<Long> indexes) {
    Names.checkPartitionId(partitionId);
    return call(
        ControllerMessages.RESOLVE_INDEXES,
        2,
        w -> w.string(partitionId).longs(indexes),
        in -> {
          int n = in.arrayHeader("keys");
          if (n > indexes.size()) {
            throw new ProtocolException(
                ErrorCode.PROTOCOL_ERROR,
                "RESOLVE_INDEXES reply has keys=" + n + " > indexes=" + indexes.size() + " asked");
          }
          List<String> keys = new ArrayList<>(Math.min(n, 1024));
          for (int i = 0; i < n; i++) {
            keys.add(in.string("keys[" + i + "]"));
          }
          return Collections.unmodifiableList(keys);
        });
  }

  @Override
  public KvListing listKeys(String partitionId) {
    if (partitionId != null) {
      Names.checkPartitionId(partitionId);
    }
    return call(ControllerMessages.LIST_KEYS, 1, w -> w.string(partitionId), MetaReader::kvListing);
  }

  @Override
  public Optional<PartitionStatistics> partitionStatistics(String partitionId) {
    Names.checkPartitionId(partitionId);
    return call(
        ControllerMessages.PARTITION_STATISTICS,
        1,
        w -> w.string(partitionId),
        optional(MetaReader::partitionStatistics));
  }

  @Override
  public ControllerStatistics statistics() {
    return call(ControllerMessages.STATISTICS, 0, w -> {}, MetaReader::controllerStatistics);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The state travels in the {@code ControllerStateCodec} encoding of checkpoints.
   */
  @Override
  public ControllerState snapshotState() {
    byte[] encoded =
        call(ControllerMessages.SNAPSHOT_STATE, 0, w -> {}, in -> in.binary("controller state"));
    return ControllerStateCodec.decode(encoded, "controller " + address);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The controller decodes and validates the state before it changes anything.
   */
  @Override
  public void restoreState(ControllerState state) {
    byte[] encoded = ControllerStateCodec.encode(state);
    call(ControllerMessages.RESTORE_STATE, 1, w -> w.binary(encoded), NOTHING);
  }

  @Override
  public String toString() {
    return "RemoteController[" + address + "]";
  }
}
