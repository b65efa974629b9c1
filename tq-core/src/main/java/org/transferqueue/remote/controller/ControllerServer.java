package org.transferqueue.remote.controller;

import static org.transferqueue.remote.controller.ControllerProtocol.CHECK_PUT;
import static org.transferqueue.remote.controller.ControllerProtocol.CLEAR_PARTITION;
import static org.transferqueue.remote.controller.ControllerProtocol.CLEAR_SAMPLES;
import static org.transferqueue.remote.controller.ControllerProtocol.CONTROLLER_ID;
import static org.transferqueue.remote.controller.ControllerProtocol.CREATE_PARTITION;
import static org.transferqueue.remote.controller.ControllerProtocol.GET_BACKEND_META;
import static org.transferqueue.remote.controller.ControllerProtocol.GET_CONSUMPTION;
import static org.transferqueue.remote.controller.ControllerProtocol.GET_METADATA;
import static org.transferqueue.remote.controller.ControllerProtocol.GET_PARTITION_META;
import static org.transferqueue.remote.controller.ControllerProtocol.GET_PRODUCTION;
import static org.transferqueue.remote.controller.ControllerProtocol.GET_SAMPLE_META;
import static org.transferqueue.remote.controller.ControllerProtocol.GET_TAGS;
import static org.transferqueue.remote.controller.ControllerProtocol.LIST_KEYS;
import static org.transferqueue.remote.controller.ControllerProtocol.LIST_PARTITIONS;
import static org.transferqueue.remote.controller.ControllerProtocol.MARK_CLEARING;
import static org.transferqueue.remote.controller.ControllerProtocol.METRICS_ENDPOINT;
import static org.transferqueue.remote.controller.ControllerProtocol.PARTITION_INDEX_RANGE;
import static org.transferqueue.remote.controller.ControllerProtocol.PARTITION_STATISTICS;
import static org.transferqueue.remote.controller.ControllerProtocol.RESET_CONSUMPTION;
import static org.transferqueue.remote.controller.ControllerProtocol.RESOLVE_INDEXES;
import static org.transferqueue.remote.controller.ControllerProtocol.RESOLVE_KEYS;
import static org.transferqueue.remote.controller.ControllerProtocol.RESOLVE_KEYS_FOR_PUT;
import static org.transferqueue.remote.controller.ControllerProtocol.RESTORE_STATE;
import static org.transferqueue.remote.controller.ControllerProtocol.SCAN_READY;
import static org.transferqueue.remote.controller.ControllerProtocol.SET_TAGS;
import static org.transferqueue.remote.controller.ControllerProtocol.SNAPSHOT_STATE;
import static org.transferqueue.remote.controller.ControllerProtocol.STATISTICS;
import static org.transferqueue.remote.controller.ControllerProtocol.UPDATE_PRODUCTION;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.ControllerStateCodec;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.metrics.ControllerOp;
import org.transferqueue.metrics.ControllerRequests;
import org.transferqueue.remote.MetaReader;
import org.transferqueue.remote.MetaWriter;
import org.transferqueue.remote.controller.ControllerProtocol.Op;
import org.transferqueue.transport.ReceivedRequest;
import org.transferqueue.transport.Reply;
import org.transferqueue.transport.RequestHandler;
import org.transferqueue.transport.SharedMemoryStats;
import org.transferqueue.transport.TransportConfig;
import org.transferqueue.transport.TransportServer;

/**
 * Serves a controller over the transport: every operation of {@link ControllerApi} as message types
 * 100-199 (the entries of {@link ControllerProtocol}, each bound to its handler), answered by
 * {@link RemoteController}.
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
    Handlers on = new Handlers();
    on.bind(CONTROLLER_ID, q -> controller.controllerId());
    on.bind(METRICS_ENDPOINT, q -> controller.metricsEndpoint());
    on.bind(CREATE_PARTITION, controller::createPartition);
    on.bind(LIST_PARTITIONS, q -> controller.listPartitions());
    on.bind(PARTITION_INDEX_RANGE, controller::getPartitionIndexRange);
    on.bind(UPDATE_PRODUCTION, update -> run(() -> controller.updateProductionStatus(update)));
    on.bind(
        CHECK_PUT,
        q ->
            run(
                () ->
                    controller.checkPut(
                        q.partitionId(),
                        q.fields() == null ? Map.of() : q.fields(),
                        q.indexes(),
                        q.generations())));
    on.bind(GET_PRODUCTION, q -> controller.getProductionStatus(q.partitionId(), q.fields()));
    on.bind(SCAN_READY, q -> controller.scanReady(q.partitionId(), q.fields(), q.taskName()));
    on.bind(GET_CONSUMPTION, q -> controller.getConsumptionStatus(q.partitionId(), q.taskName()));
    on.bind(RESET_CONSUMPTION, q -> controller.resetConsumption(q.partitionId(), q.taskName()));
    on.bind(GET_METADATA, controller::getMetadata);
    on.bind(GET_PARTITION_META, controller::getPartitionMeta);
    on.bind(
        GET_SAMPLE_META, q -> controller.getSampleMeta(q.partitionId(), q.indexes(), q.fields()));
    on.bind(SET_TAGS, controller::setTags);
    on.bind(GET_TAGS, q -> controller.getTags(q.partitionId(), q.indexes()));
    on.bind(
        GET_BACKEND_META, q -> controller.getBackendMeta(q.partitionId(), q.indexes(), q.fields()));
    on.bind(CLEAR_PARTITION, controller::clearPartition);
    on.bind(CLEAR_SAMPLES, controller::clearSamples);
    on.bind(MARK_CLEARING, controller::markClearing);
    on.bind(RESOLVE_KEYS, q -> controller.resolveKeys(q.partitionId(), q.keys(), q.create()));
    on.bind(
        RESOLVE_KEYS_FOR_PUT,
        q -> controller.resolveKeysForPut(q.partitionId(), q.keys(), q.fields(), q.sampleCount()));
    on.bind(RESOLVE_INDEXES, q -> controller.resolveIndexes(q.partitionId(), q.indexes()));
    on.bind(LIST_KEYS, controller::listKeys);
    on.bind(PARTITION_STATISTICS, controller::partitionStatistics);
    on.bind(STATISTICS, q -> controller.statistics());
    on.bind(SNAPSHOT_STATE, q -> ControllerStateCodec.encode(controller.snapshotState()));
    on.bind(
        RESTORE_STATE,
        encoded ->
            run(
                () ->
                    controller.restoreState(
                        ControllerStateCodec.decode(encoded, "restore request"))));
    TransportServer.Builder b = TransportServer.builder(config, allocator).name("tq-controller");
    for (Op<?, ?> op : ControllerProtocol.OPS) {
      b.handler(op.typeId(), on.handler(op, requests));
    }
    ControllerServer started = new ControllerServer(b.start());
    LOG.log(System.Logger.Level.INFO, "controller serving on " + started.address());
    return started;
  }

  private static Void run(Runnable call) {
    call.run();
    return null;
  }

  /** The handler of each entry of the protocol table: what the controller does with a request. */
  private static final class Handlers {
    private final Map<Op<?, ?>, Function<?, ?>> byOp = new HashMap<>();

    <Q, R> void bind(Op<Q, R> op, Function<Q, R> handler) {
      byOp.put(op, handler);
    }

    @SuppressWarnings("unchecked") // bind pairs each op with a handler of its own types
    <Q, R> RequestHandler handler(Op<Q, R> op, ControllerRequests requests) {
      Function<Q, R> handler = (Function<Q, R>) byOp.get(op);
      if (handler == null) {
        throw new IllegalStateException("no handler for controller message " + op);
      }
      ControllerOp measured = op.measuredAs();
      if (measured != null && op.samples() != null) {
        Function<Q, R> counted =
            q ->
                requests.measure(
                    measured, () -> handler.apply(q), r -> op.samples().applyAsLong(q, r));
        return RequestHandler.replying(request -> handle(request, op, counted));
      }
      return RequestHandler.replying(
          request ->
              measured == null
                  ? handle(request, op, handler)
                  : requests.measure(measured, () -> handle(request, op, handler)));
    }
  }

  /**
   * Decodes a request completely (a malformed one is a {@code PROTOCOL_ERROR}, arguments the codec
   * refuses an {@code INVALID_ARGUMENT}), runs it and encodes its reply.
   */
  private static <Q, R> Reply handle(ReceivedRequest request, Op<Q, R> op, Function<Q, R> handler) {
    int type = op.typeId();
    MetaReader in = new MetaReader(request.metadata());
    in.expectArray(op.args().arity(), "arguments of message type " + type);
    Q arguments;
    try {
      arguments = op.args().read().apply(in);
    } catch (NullPointerException | IllegalArgumentException e) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "invalid arguments of message type " + type + ": " + e.getMessage(),
          e);
    }
    in.expectEnd();
    MetaWriter out = new MetaWriter();
    try {
      op.writeReply().accept(out, handler.apply(arguments));
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
   * The shared-memory pool of this server's transport and the grants and leases its connections
   * hold (docs/PROTOCOL.md section 4.2).
   *
   * @return a snapshot; {@link SharedMemoryStats#OFF} when shared memory is off
   */
  public SharedMemoryStats sharedMemoryStats() {
    return server.sharedMemoryStats();
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
