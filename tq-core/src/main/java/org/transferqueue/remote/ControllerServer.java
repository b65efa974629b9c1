package org.transferqueue.remote;

import static org.transferqueue.remote.ControllerMessages.CHECK_PUT;
import static org.transferqueue.remote.ControllerMessages.CLEAR_PARTITION;
import static org.transferqueue.remote.ControllerMessages.CLEAR_SAMPLES;
import static org.transferqueue.remote.ControllerMessages.CONTROLLER_ID;
import static org.transferqueue.remote.ControllerMessages.CREATE_PARTITION;
import static org.transferqueue.remote.ControllerMessages.GET_BACKEND_META;
import static org.transferqueue.remote.ControllerMessages.GET_CONSUMPTION;
import static org.transferqueue.remote.ControllerMessages.GET_METADATA;
import static org.transferqueue.remote.ControllerMessages.GET_PARTITION_META;
import static org.transferqueue.remote.ControllerMessages.GET_PRODUCTION;
import static org.transferqueue.remote.ControllerMessages.GET_SAMPLE_META;
import static org.transferqueue.remote.ControllerMessages.GET_TAGS;
import static org.transferqueue.remote.ControllerMessages.LIST_KEYS;
import static org.transferqueue.remote.ControllerMessages.LIST_PARTITIONS;
import static org.transferqueue.remote.ControllerMessages.MARK_CLEARING;
import static org.transferqueue.remote.ControllerMessages.METRICS_ENDPOINT;
import static org.transferqueue.remote.ControllerMessages.PARTITION_INDEX_RANGE;
import static org.transferqueue.remote.ControllerMessages.PARTITION_STATISTICS;
import static org.transferqueue.remote.ControllerMessages.RESET_CONSUMPTION;
import static org.transferqueue.remote.ControllerMessages.RESOLVE_INDEXES;
import static org.transferqueue.remote.ControllerMessages.RESOLVE_KEYS;
import static org.transferqueue.remote.ControllerMessages.RESOLVE_KEYS_FOR_PUT;
import static org.transferqueue.remote.ControllerMessages.RESTORE_STATE;
import static org.transferqueue.remote.ControllerMessages.SCAN_READY;
import static org.transferqueue.remote.ControllerMessages.SET_TAGS;
import static org.transferqueue.remote.ControllerMessages.SNAPSHOT_STATE;
import static org.transferqueue.remote.ControllerMessages.STATISTICS;
import static org.transferqueue.remote.ControllerMessages.UPDATE_PRODUCTION;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.ControllerStateCodec;
import org.transferqueue.controller.KeyResolution;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.metrics.ControllerOp;
import org.transferqueue.metrics.ControllerRequests;
import org.transferqueue.transport.ReceivedRequest;
import org.transferqueue.transport.Reply;
import org.transferqueue.transport.RequestHandler;
import org.transferqueue.transport.TransportConfig;
import org.transferqueue.transport.TransportServer;

/**
 * Serves a controller over the transport: every operation of {@link ControllerApi} as message types
 * 100-199 ({@link ControllerMessages}), answered by {@link RemoteController}.
 *
 * <p>Each request runs on its own virtual thread (the transport's), so a blocking fetch waiting for
 * data does not hold up notifications, clears or other fetches. A blocking fetch waits at most the
 * timeout its request carries (the client's deadline; more than {@link
 * ControllerOptions#FETCH_TIMEOUT_MAX} is rejected). A request is decoded and checked completely
 * before the controller sees it; a malformed one gets a {@code PROTOCOL_ERROR} reply, a controller
 * error a reply with its own {@link ErrorCode}, an unknown message type an {@code
 * UNSUPPORTED_OPERATION} reply, and the server keeps serving. With an auth token in the transport
 * configuration, connections without it are refused by the transport.
 *
 * <pre>{@code
 * try (ControllerServer server = ControllerServer.start(controller, transportConfig, allocator)) {
 *   HostPort address = server.address();
 * }
 * }</pre>
 *
 * <p>Thread-safe. Closing stops accepting and closes the connections; it does not touch the
 * controller, which the caller owns.
 */
public final class ControllerServer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ControllerServer.class.getName());

  private final TransportServer server;

  private ControllerServer(TransportServer server) {
    this.server = server;
  }

  /**
   * Starts serving a controller.
   *
   * @param controller the controller; borrowed, not closed
   * @param config transport settings: bind host and port (0 for an ephemeral port), auth token
   * @param allocator the allocator for the transport's buffers
   * @return the running server
   * @throws TqException {@link ErrorCode#CONNECTION_FAILED} if the address cannot be bound
   */
  public static ControllerServer start(
      ControllerApi controller, TransportConfig config, BufferAllocator allocator) {
    return start(controller, config, allocator, ControllerRequests.NOOP);
  }

  /**
   * Starts serving a controller and measures its requests by {@code op_type} (the upstream
   * controller operations of {@link ControllerOp}; the other message types are not measured): a
   * request's latency covers running it and encoding the reply, and samples are counted for {@code
   * NOTIFY_DATA_UPDATE} (produced) and {@code CLEAR_META} (cleared).
   *
   * @param controller the controller; borrowed, not closed
   * @param config transport settings: bind host and port (0 for an ephemeral port), auth token
   * @param allocator the allocator for the transport's buffers
   * @param requests where requests are measured ({@link ControllerRequests#NOOP} for none)
   * @return the running server
   * @throws TqException {@link ErrorCode#CONNECTION_FAILED} if the address cannot be bound
   */
  public static ControllerServer start(
      ControllerApi controller,
      TransportConfig config,
      BufferAllocator allocator,
      ControllerRequests requests) {
    Objects.requireNonNull(controller, "controller");
    Objects.requireNonNull(requests, "requests");
    TransportServer.Builder b = TransportServer.builder(config, allocator).name("tq-controller");
    register(b, requests, CONTROLLER_ID, 0, in -> out -> out.string(controller.controllerId()));
    register(
        b,
        requests,
        METRICS_ENDPOINT,
        0,
        in -> out -> controller.metricsEndpoint().ifPresentOrElse(out::string, out::nil));
    register(
        b,
        requests,
        CREATE_PARTITION,
        1,
        in -> {
          String partition = in.string("partitionId");
          return out -> out.bool(controller.createPartition(partition));
        });
    register(
        b, requests, LIST_PARTITIONS, 0, in -> out -> out.strings(controller.listPartitions()));
    register(
        b,
        requests,
        PARTITION_INDEX_RANGE,
        1,
        in -> {
          String partition = in.string("partitionId");
          return out -> out.indexSet(controller.getPartitionIndexRange(partition));
        });
    register(
        b,
        requests,
        UPDATE_PRODUCTION,
        1,
        in -> {
          var update = in.productionUpdate();
          return out -> {
            requests.measure(
                ControllerOp.NOTIFY_DATA_UPDATE,
                () -> {
                  controller.updateProductionStatus(update);
                  return update.indexes().size();
                },
                n -> n);
            out.nil();
          };
        });
    register(
        b,
        requests,
        CHECK_PUT,
        4,
        in -> {
          String partition = in.string("partitionId");
          var fields = in.fieldSchemas("fields");
          long[] indexes = in.longArray("indexes");
          long[] generations = in.longArray("generations");
          return out -> {
            controller.checkPut(
                partition, fields == null ? Map.of() : fields, indexes, generations);
            out.nil();
          };
        });
    register(
        b,
        requests,
        GET_PRODUCTION,
        2,
        in -> {
          String partition = in.string("partitionId");
          List<String> fields = in.strings("fields");
          return out ->
              controller
                  .getProductionStatus(partition, fields)
                  .ifPresentOrElse(out::productionStatus, out::nil);
        });
    register(
        b,
        requests,
        SCAN_READY,
        3,
        in -> {
          String partition = in.string("partitionId");
          List<String> fields = in.strings("fields");
          String task = in.string("taskName");
          return out -> out.indexSet(controller.scanReady(partition, fields, task));
        });
    register(
        b,
        requests,
        GET_CONSUMPTION,
        2,
        in -> {
          String partition = in.string("partitionId");
          String task = in.string("taskName");
          return out ->
              controller
                  .getConsumptionStatus(partition, task)
                  .ifPresentOrElse(out::consumptionStatus, out::nil);
        });
    register(
        b,
        requests,
        RESET_CONSUMPTION,
        2,
        in -> {
          String partition = in.string("partitionId");
          String task = in.string("taskName");
          return out -> out.bool(controller.resetConsumption(partition, task));
        });
    register(
        b,
        requests,
        GET_METADATA,
        1,
        in -> {
          var request = in.getMetadataRequest();
          if (request.timeout() != null
              && request.timeout().compareTo(ControllerOptions.FETCH_TIMEOUT_MAX) > 0) {
            throw new TqException(
                ErrorCode.INVALID_ARGUMENT,
                "fetch timeout="
                    + request.timeout()
                    + " > max="
                    + ControllerOptions.FETCH_TIMEOUT_MAX);
          }
          return out -> out.batchMeta(controller.getMetadata(request));
        });
    register(
        b,
        requests,
        GET_PARTITION_META,
        1,
        in -> {
          String partition = in.string("partitionId");
          return out ->
              controller.getPartitionMeta(partition).ifPresentOrElse(out::batchMeta, out::nil);
        });
    register(
        b,
        requests,
        GET_SAMPLE_META,
        3,
        in -> {
          String partition = in.string("partitionId");
          List<Long> indexes = in.longs("indexes");
          List<String> fields = in.strings("fields");
          return out -> out.batchMeta(controller.getSampleMeta(partition, indexes, fields));
        });
    register(
        b,
        requests,
        SET_TAGS,
        1,
        in -> {
          var update = in.tagUpdate();
          return out -> out.integer(controller.setTags(update));
        });
    register(
        b,
        requests,
        GET_TAGS,
        2,
        in -> {
          String partition = in.string("partitionId");
          List<Long> indexes = in.longs("indexes");
          return out -> out.indexedRecords(controller.getTags(partition, indexes));
        });
    register(
        b,
        requests,
        GET_BACKEND_META,
        3,
        in -> {
          String partition = in.string("partitionId");
          List<Long> indexes = in.longs("indexes");
          List<String> fields = in.strings("fields");
          return out -> out.indexedRecords(controller.getBackendMeta(partition, indexes, fields));
        });
    register(
        b,
        requests,
        CLEAR_PARTITION,
        1,
        in -> {
          String partition = in.string("partitionId");
          return out -> out.bool(controller.clearPartition(partition));
        });
    register(
        b,
        requests,
        CLEAR_SAMPLES,
        1,
        in -> {
          var request = in.clearSamplesRequest();
          return out ->
              out.integer(
                  requests.measure(
                      ControllerOp.CLEAR_META, () -> controller.clearSamples(request), n -> n));
        });
    register(
        b,
        requests,
        MARK_CLEARING,
        1,
        in -> {
          var request = in.clearSamplesRequest();
          return out -> out.integer(controller.markClearing(request));
        });
    register(
        b,
        requests,
        RESOLVE_KEYS,
        3,
        in -> {
          String partition = in.string("partitionId");
          List<String> keys = in.strings("keys");
          boolean create = in.bool("create");
          return out -> out.batchMeta(controller.resolveKeys(partition, keys, create));
        });
    register(
        b,
        requests,
        RESOLVE_KEYS_FOR_PUT,
        4,
        in -> {
          String partition = in.string("partitionId");
          List<String> keys = in.strings("keys");
          var fields = in.fieldSchemas("fields");
          int sampleCount = in.int32("sampleCount");
          return out -> {
            KeyResolution resolution =
                controller.resolveKeysForPut(partition, keys, fields, sampleCount);
            out.arrayHeader(2).batchMeta(resolution.meta()).longs(resolution.createdIndexes());
          };
        });
    register(
        b,
        requests,
        RESOLVE_INDEXES,
        2,
        in -> {
          String partition = in.string("partitionId");
          List<Long> indexes = in.longs("indexes");
          return out -> out.strings(controller.resolveIndexes(partition, indexes));
        });
    register(
        b,
        requests,
        LIST_KEYS,
        1,
        in -> {
          String partition = in.string("partitionId");
          return out -> out.kvListing(controller.listKeys(partition));
        });
    register(
        b,
        requests,
        PARTITION_STATISTICS,
        1,
        in -> {
          String partition = in.string("partitionId");
          return out ->
              controller
                  .partitionStatistics(partition)
                  .ifPresentOrElse(out::partitionStatistics, out::nil);
        });
    register(
        b, requests, STATISTICS, 0, in -> out -> out.controllerStatistics(controller.statistics()));
    register(
        b,
        requests,
        SNAPSHOT_STATE,
        0,
        in -> out -> out.binary(ControllerStateCodec.encode(controller.snapshotState())));
    register(
        b,
        requests,
        RESTORE_STATE,
        1,
        in -> {
          byte[] encoded = in.binary("state");
          return out -> {
            controller.restoreState(ControllerStateCodec.decode(encoded, "restore request"));
            out.nil();
          };
        });
    ControllerServer started = new ControllerServer(b.start());
    LOG.log(System.Logger.Level.INFO, "controller serving on " + started.address());
    return started;
  }

  /**
   * Decodes a request's arguments; the returned action runs the operation and writes the result.
   */
  @FunctionalInterface
  private interface Operation {
    Consumer<MetaWriter> decode(MetaReader in);
  }

  /**
   * The {@code op_type} of each measured message type whose samples are not counted ({@code
   * UPDATE_PRODUCTION} and {@code CLEAR_SAMPLES} are measured in their handlers).
   */
  private static final Map<Integer, ControllerOp> MEASURED =
      Map.ofEntries(
          Map.entry(GET_METADATA, ControllerOp.GET_META),
          Map.entry(GET_PARTITION_META, ControllerOp.GET_PARTITION_META),
          Map.entry(SET_TAGS, ControllerOp.SET_CUSTOM_META),
          Map.entry(CLEAR_PARTITION, ControllerOp.CLEAR_PARTITION),
          Map.entry(GET_CONSUMPTION, ControllerOp.GET_CONSUMPTION),
          Map.entry(RESET_CONSUMPTION, ControllerOp.RESET_CONSUMPTION),
          Map.entry(GET_PRODUCTION, ControllerOp.GET_PRODUCTION),
          Map.entry(LIST_PARTITIONS, ControllerOp.GET_LIST_PARTITIONS),
          Map.entry(RESOLVE_KEYS, ControllerOp.KV_RETRIEVE_META),
          Map.entry(RESOLVE_KEYS_FOR_PUT, ControllerOp.KV_RETRIEVE_META),
          Map.entry(RESOLVE_INDEXES, ControllerOp.KV_RETRIEVE_KEYS),
          Map.entry(LIST_KEYS, ControllerOp.KV_LIST));

  private static void register(
      TransportServer.Builder b, ControllerRequests requests, int type, int arity, Operation op) {
    ControllerOp measured = MEASURED.get(type);
    b.handler(
        type,
        RequestHandler.replying(
            request ->
                measured == null
                    ? handle(request, type, arity, op)
                    : requests.measure(measured, () -> handle(request, type, arity, op))));
  }

  private static Reply handle(ReceivedRequest request, int type, int arity, Operation op) {
    MetaReader in = new MetaReader(request.metadata());
    in.expectArray(arity, "arguments of message type " + type);
    Consumer<MetaWriter> action;
    try {
      action = op.decode(in);
    } catch (NullPointerException | IllegalArgumentException e) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "invalid arguments of message type " + type + ": " + e.getMessage(),
          e);
    }
    in.expectEnd();
    MetaWriter out = new MetaWriter();
    try {
      action.accept(out);
    } catch (NullPointerException | IllegalArgumentException e) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "message type " + type + " rejected: " + e.getMessage(), e);
    }
    return Reply.of(out.toByteArray());
  }

  /** The transport server, for protocol tests that call its handlers in-process. */
  TransportServer transport() {
    return server;
  }

  /**
   * The address the server listens on (the bound port when 0 was configured).
   *
   * @return the address
   */
  public HostPort address() {
    return server.address();
  }

  /**
   * The number of malformed frames and failed handlers the transport has seen.
   *
   * @return the count
   */
  public long errorCount() {
    return server.errorCount();
  }

  /** Stops accepting, closes connections after the transport's grace period. Idempotent. */
  @Override
  public void close() {
    server.close();
  }

  @Override
  public String toString() {
    return "ControllerServer[" + address() + "]";
  }
}
