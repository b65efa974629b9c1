package org.transferqueue.transport;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.SharedMemoryPool;

/**
 * One accepted connection of a {@link TransportServer}: a reader thread that decodes requests and
 * starts a virtual thread per request, and a writer thread that sends the replies in the order they
 * are ready.
 *
 * <p>Design note. Threads: the reader thread owns the {@link FrameReader} and the authentication
 * state; handler threads answer through {@link ServerExchange}s, which queue replies on the {@link
 * FrameWriter}. Request bodies come from this connection's child allocator. Errors that leave the
 * stream readable (unknown type, bad body table, out of memory) get an error reply and the
 * connection goes on; errors that do not (bad magic, unknown version, lengths over the limits,
 * refused authentication) get an error reply when possible, are logged once, and close this
 * connection only. Lifetime: the reader, the writer and every live exchange each hold the
 * connection; when the last lets go, the child allocator is closed and {@link #terminated()}
 * completes.
 */
final class ServerConnection {
  private static final System.Logger LOG = System.getLogger(ServerConnection.class.getName());

  private final TransportServer server;
  private final TransportConfig config;
  private final SocketChannel channel;
  private final SocketAddress remote;
  private final BufferAllocator allocator;
  private final Map<Integer, RequestHandler> handlers;
  private final Map<Integer, RequestBodyAllocator> bodyAllocators;
  private final Semaphore permits;

  /** This connection's shared-memory grants and leases; null when the server has none. */
  private final ServerSharedMemory shared;

  private final FrameReader reader;
  private final FrameWriter writer;
  private final Set<ServerExchange> exchanges = ConcurrentHashMap.newKeySet();
  private final AtomicInteger holds = new AtomicInteger(2);
  private final AtomicBoolean closing = new AtomicBoolean();
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();
  private final CompletableFuture<Void> idle = new CompletableFuture<>();
  private volatile boolean draining;

  ServerConnection(
      TransportServer server,
      TransportConfig config,
      SocketChannel channel,
      SocketAddress remote,
      BufferAllocator allocator,
      Map<Integer, RequestHandler> handlers,
      Map<Integer, RequestBodyAllocator> bodyAllocators,
      SharedMemoryPool pool,
      SharedMemoryCounters counters) {
    this.server = server;
    this.shared = pool == null ? null : new ServerSharedMemory(pool, config, counters);
    this.config = config;
    this.channel = channel;
    this.remote = remote;
    this.allocator = allocator;
    this.handlers = handlers;
    this.bodyAllocators = bodyAllocators;
    this.permits = new Semaphore(config.maxConcurrentRequestsPerConnection());
    this.reader = new FrameReader(channel, allocator, Clock.SYSTEM);
    this.writer =
        new FrameWriter(
            channel, allocator, "tq-server-writer-" + remote, this::onWriteFailure, this::release);
    Thread.ofVirtual().name("tq-server-reader-" + remote).start(this::readLoop);
  }

  CompletableFuture<Void> terminated() {
    return terminated;
  }

  /** Stops reading new requests; in-flight ones go on. {@link #idle()} completes when none is. */
  void stopReading() {
    draining = true;
    try {
      channel.shutdownInput();
    } catch (IOException e) {
      // Already closed or reset: the reader ends either way.
      LOG.log(System.Logger.Level.DEBUG, "shutdownInput of " + remote + " failed", e);
    }
    checkIdle();
  }

  CompletableFuture<Void> idle() {
    return idle;
  }

  /** Writes the replies already queued, then closes the socket. */
  void closeAfterFlush() {
    if (closing.compareAndSet(false, true)) {
      writer.closeAfterFlush();
    }
  }

  /** Closes the socket now, drops unanswered requests and interrupts their handlers. */
  void forceClose() {
    closing.set(true);
    writer.stop();
    closeChannel();
    for (ServerExchange exchange : new ArrayList<>(exchanges)) {
      exchange.interrupt();
      exchange.drop();
    }
  }

  /** The connection's shared-memory state, or null when the server has shared memory off. */
  ServerSharedMemory shared() {
    return shared;
  }

  boolean enqueue(FrameWriter.OutboundFrame frame) {
    return writer.enqueue(frame);
  }

  void recordError(String kind, String message, Throwable cause) {
    server.errorLog().record(kind, message, cause);
  }

  byte[] checkedReplySection(Reply reply) {
    if (reply.bodies().size() > config.maxBodySegments()) {
      throw new ProtocolException(
          ErrorCode.FRAME_TOO_LONG,
          "reply has "
              + reply.bodies().size()
              + " body segments > maxBodySegments="
              + config.maxBodySegments());
    }
    for (int i = 0; i < reply.bodies().size(); i++) {
      long length = reply.bodies().get(i).byteSize();
      if (length > config.maxBodySegmentBytes()) {
        throw new ProtocolException(
            ErrorCode.FRAME_TOO_LONG,
            "reply body "
                + i
                + " length="
                + length
                + " > maxBodySegmentBytes="
                + config.maxBodySegmentBytes());
      }
    }
    byte[] section = BodyTable.encode(reply.bodies(), reply.metadata());
    if (section.length > config.maxMetadataBytes()) {
      throw new ProtocolException(
          ErrorCode.FRAME_TOO_LONG,
          "reply metadata length="
              + section.length
              + " > maxMetadataBytes="
              + config.maxMetadataBytes());
    }
    FrameDescriptor.checkLengths(section.length, reply.bodyLength(), config.maxFrameBytes());
    return section;
  }

  void exchangeDone(ServerExchange exchange) {
    exchanges.remove(exchange);
    permits.release();
    checkIdle();
    release();
  }

  private void checkIdle() {
    if (draining && exchanges.isEmpty()) {
      idle.complete(null);
    }
  }

  private void release() {
    if (holds.decrementAndGet() == 0) {
      try {
        if (shared != null) {
          shared.close();
        }
        allocator.close();
      } catch (TqException e) {
        recordError(
            e.code().name(), "connection " + remote + " released with " + e.getMessage(), e);
      } finally {
        terminated.complete(null);
      }
    }
  }

  private void onWriteFailure(Throwable failure) {
    if (!closing.get()) {
      recordError(
          ErrorCode.CONNECTION_FAILED.name(),
          "writing to " + remote + " failed: " + Errors.describe(failure),
          null);
    }
    forceClose();
  }

  private void closeChannel() {
    try {
      channel.close();
    } catch (IOException e) {
      // The connection is being abandoned; nothing useful to tell anyone.
      LOG.log(System.Logger.Level.DEBUG, "closing " + remote + " failed", e);
    }
  }

  private void readLoop() {
    boolean authenticated = config.authToken().isEmpty();
    try {
      FrameHeader header;
      while ((header = reader.readHeader()) != null) {
        if (!readFrame(header, authenticated)) {
          return;
        }
        authenticated = true;
      }
    } catch (IOException e) {
      if (!draining && !closing.get()) {
        LOG.log(System.Logger.Level.DEBUG, "connection " + remote + " ended: " + e);
      }
    } catch (RuntimeException e) {
      recordError(
          ErrorCode.INTERNAL.name(), "reader of " + remote + " failed: " + Errors.describe(e), e);
    } finally {
      reader.close();
      if (!draining) {
        closeAfterFlush();
        abandonRunningRequests();
      }
      release();
    }
  }

  /**
   * Interrupts the handlers still running when the connection ends: their replies would be queued
   * behind the close marker and never written, so a handler waiting for something (a blocking fetch
   * in the controller) must stop now rather than act, for example consume samples, for a peer that
   * is gone. Handlers that do not wait finish as usual; their replies are dropped.
   */
  private void abandonRunningRequests() {
    for (ServerExchange exchange : new ArrayList<>(exchanges)) {
      exchange.interrupt();
    }
  }

  /**
   * Handles one frame.
   *
   * @return false if the connection must close (an error reply may be queued)
   */
  private boolean readFrame(FrameHeader header, boolean authenticated) throws IOException {
    long id = header.correlationId();
    int type = header.type();
    if (header.magic() != FrameDescriptor.MAGIC) {
      return closeWith(
          null,
          id,
          type,
          ErrorCode.PROTOCOL_ERROR,
          "bad frame magic=0x" + Integer.toHexString(header.magic()));
    }
    if (header.version() != FrameDescriptor.CURRENT_VERSION) {
      return closeWith(
          id,
          id,
          type,
          ErrorCode.UNSUPPORTED_VERSION,
          "frame version="
              + header.version()
              + " is not supported, this side speaks "
              + FrameDescriptor.CURRENT_VERSION);
    }
    if (header.metadataLength() > config.maxMetadataBytes()) {
      return closeWith(
          id,
          id,
          type,
          ErrorCode.FRAME_TOO_LONG,
          "metadata length="
              + header.metadataLength()
              + " > maxMetadataBytes="
              + config.maxMetadataBytes());
    }
    try {
      FrameDescriptor.checkLengths(
          header.metadataLength(), header.bodyLength(), config.maxFrameBytes());
    } catch (ProtocolException e) {
      return closeWith(id, id, type, e.code(), e.getMessage());
    }
    byte[] section = reader.readMetadata(header.metadataLength());
    boolean sharedBodies = (header.flags() & FrameDescriptor.FLAG_SHARED_BODY) != 0;
    BodyTable table;
    try {
      table =
          sharedBodies
              ? BodyTable.decodeShared(section, header.bodyLength(), config)
              : BodyTable.decode(section, header.bodyLength(), config);
    } catch (ProtocolException e) {
      reader.skip(header.bodyLength());
      if (!authenticated) {
        return closeWith(id, id, type, ErrorCode.UNAUTHENTICATED, "connection not authenticated");
      }
      sendError(id, type, e.code(), e.getMessage());
      return true;
    }
    if (!authenticated || type == MessageDescriptor.TYPE_HELLO) {
      reader.skip(header.bodyLength());
      return hello(header, table);
    }
    if (header.isResponse()) {
      reader.skip(header.bodyLength());
      sendError(
          id,
          type,
          ErrorCode.PROTOCOL_ERROR,
          "a client sent a reply frame, flags=0x" + Integer.toHexString(header.flags()));
      return true;
    }
    if (type >= MessageDescriptor.TYPE_SHM_ATTACH && type <= MessageDescriptor.TYPE_SHM_RELEASE) {
      reader.skip(header.bodyLength());
      sharedMemoryMessage(header, sharedBodies ? null : table);
      return true;
    }
    RequestHandler handler = handlers.get(type);
    RequestBodyAllocator.Placed placed = null;
    if (sharedBodies) {
      ServerSharedMemory.TakenGrant taken;
      try {
        SharedMessages.SharedItem item =
            SharedMessages.decodeItem(
                table.applicationMetadata(), false, table.bodyLengths().length, remote.toString());
        taken =
            sharedBodies(
                item.id(), item.offsets(), table.bodyLengths(), item.applicationMetadata());
        // A placed request is dispatched with the metadata array its body allocator saw.
        table =
            new BodyTable(
                table.bodyLengths(),
                taken.placedMetadata() != null
                    ? taken.placedMetadata()
                    : item.applicationMetadata());
      } catch (TqException e) {
        sendError(id, type, e.code(), e.getMessage());
        return true;
      }
      placed = taken.bodies();
    }
    if (handler == null) {
      reader.skip(header.bodyLength());
      if (placed != null) {
        placed.abandon();
      }
      sendError(id, type, ErrorCode.UNSUPPORTED_OPERATION, "no handler for message type=" + type);
      return true;
    }
    return dispatch(header, table, handler, placed);
  }

  /**
   * The bodies of a request flagged {@code FLAG_SHARED_BODY}: its grant's region, sliced. The grant
   * is consumed whatever happens.
   */
  private ServerSharedMemory.TakenGrant sharedBodies(
      long grantId, long[] offsets, long[] lengths, byte[] appMeta) {
    if (shared == null) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "a request with shared bodies (grant_id="
              + grantId
              + ") but this server has shared memory off");
    }
    return shared.take(grantId, offsets, lengths, appMeta);
  }

  /**
   * Answers an SHM_GRANT: a placed grant when the request names a type whose body allocator puts
   * every body inside the pool, else a region of the asked length.
   */
  private byte[] grant(SharedMessages.GrantRequest request) {
    if (shared == null) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR, "SHM_GRANT but this server has shared memory off");
    }
    if (request.placing()) {
      ServerSharedMemory.PlacedReply placed = placeGrant(request);
      if (placed != null) {
        return SharedMessages.placedGrantReply(placed.grantId(), placed.placements());
      }
    }
    return SharedMessages.grantReply(shared.grant(request.length()));
  }

  /**
   * Runs the body allocator of the announced request for a placed grant; null when the type has
   * none, it declines or fails, or a destination is outside the pool (everything it started is then
   * abandoned and the client gets a region).
   */
  private ServerSharedMemory.PlacedReply placeGrant(SharedMessages.GrantRequest request) {
    RequestBodyAllocator placer = bodyAllocators.get(request.type());
    long[] lengths = request.bodyLengths();
    if (placer == null || !handlers.containsKey(request.type()) || !shared.attached()) {
      return null;
    }
    for (int i = 0; i < lengths.length; i++) {
      if (lengths[i] > config.maxBodySegmentBytes()) {
        throw new ProtocolException(
            ErrorCode.FRAME_TOO_LONG,
            "SHM_GRANT body "
                + i
                + " length="
                + lengths[i]
                + " > maxBodySegmentBytes="
                + config.maxBodySegmentBytes());
      }
    }
    RequestBodyAllocator.Placed destinations;
    try {
      destinations = placeWith(placer, request.metadata(), lengths);
    } catch (TqException e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "placing SHM_GRANT bodies of type=" + request.type() + " failed, granting a region",
          e);
      return null;
    }
    if (destinations == null) {
      return null;
    }
    ServerSharedMemory.PlacedReply reply;
    try {
      reply = shared.place(destinations, request.metadata(), lengths);
    } catch (RuntimeException e) {
      destinations.abandon();
      throw e;
    }
    if (reply == null) {
      destinations.abandon();
    }
    return reply;
  }

  /** Answers SHM_ATTACH, SHM_GRANT and SHM_RELEASE on the reader thread (no blocking work). */
  private void sharedMemoryMessage(FrameHeader header, BodyTable table) {
    long id = header.correlationId();
    int type = header.type();
    try {
      if (table == null) {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_ERROR, "message type=" + type + " cannot have shared bodies");
      }
      byte[] metadata =
          switch (type) {
            case MessageDescriptor.TYPE_SHM_ATTACH -> {
              byte[] nonce = SharedMessages.decodeAttachRequest(table.applicationMetadata());
              yield SharedMessages.attachReply(shared != null && shared.attach(nonce));
            }
            case MessageDescriptor.TYPE_SHM_GRANT ->
                grant(
                    SharedMessages.decodeGrantRequest(
                        table.applicationMetadata(), config.maxBodySegments()));
            default -> {
              long[] ids =
                  SharedMessages.decodeReleaseRequest(
                      table.applicationMetadata(), ServerSharedMemory.MAX_RELEASE_IDS);
              if (shared != null) {
                shared.release(ids);
              }
              yield new byte[0];
            }
          };
      enqueue(
          new FrameWriter.OutboundFrame(
              type,
              FrameDescriptor.FLAG_RESPONSE,
              id,
              BodyTable.encode(List.of(), metadata),
              List.of(),
              NO_LISTENER));
    } catch (TqException e) {
      sendError(id, type, e.code(), e.getMessage());
    }
  }

  private boolean hello(FrameHeader header, BodyTable table) {
    long id = header.correlationId();
    if (header.type() != MessageDescriptor.TYPE_HELLO) {
      return closeWith(
          id,
          id,
          header.type(),
          ErrorCode.UNAUTHENTICATED,
          "the first frame must be HELLO with the token, got type=" + header.type());
    }
    if (config.authToken().isPresent()) {
      String token = ControlMessages.decodeHelloToken(table.applicationMetadata());
      byte[] expected = config.authToken().get().getBytes(StandardCharsets.UTF_8);
      byte[] given = token == null ? new byte[0] : token.getBytes(StandardCharsets.UTF_8);
      if (!MessageDigest.isEqual(expected, given)) {
        return closeWith(
            id,
            id,
            header.type(),
            ErrorCode.UNAUTHENTICATED,
            token == null ? "HELLO carried no token" : "HELLO carried a wrong token");
      }
    }
    byte[] section = ControlMessages.emptySection();
    if (shared != null && SharedMessages.helloWantsShm(table.applicationMetadata())) {
      section = BodyTable.encode(List.of(), SharedMessages.helloReply(shared.offer()));
    }
    enqueue(
        new FrameWriter.OutboundFrame(
            MessageDescriptor.TYPE_HELLO,
            FrameDescriptor.FLAG_RESPONSE,
            id,
            section,
            List.of(),
            NO_LISTENER));
    return true;
  }

  private boolean dispatch(
      FrameHeader header, BodyTable table, RequestHandler handler, RequestBodyAllocator.Placed shm)
      throws IOException {
    long id = header.correlationId();
    try {
      permits.acquire();
    } catch (InterruptedException e) {
      if (shm != null) {
        shm.abandon();
      }
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for a request slot", e);
    }
    RequestBodyAllocator.Placed placed;
    try {
      placed = shm != null ? shm : place(bodyAllocators.get(header.type()), table);
    } catch (RuntimeException e) {
      permits.release();
      reader.skip(header.bodyLength());
      TqException error =
          e instanceof TqException tq
              ? tq
              : new TqException(
                  ErrorCode.INTERNAL, "placing the request bodies failed: " + Errors.describe(e));
      sendError(id, header.type(), error.code(), error.getMessage());
      return true;
    }
    List<NativeBuffer> bodies = placed.owned();
    try {
      if (shm == null) {
        reader.readBodies(FrameWriter.toBuffers(placed.segments()));
      }
    } catch (IOException | RuntimeException e) {
      // The bodies never arrived: the allocator's reservations are undone with the buffers.
      placed.abandon();
      permits.release();
      throw e;
    }
    ReceivedRequest request =
        new ReceivedRequest(
            header.type(),
            id,
            table.applicationMetadata(),
            placed.segments(),
            bodies,
            remote,
            shm != null);
    ServerExchange exchange = new ServerExchange(this, request);
    holds.incrementAndGet();
    exchanges.add(exchange);
    Thread thread =
        Thread.ofVirtual()
            .name("tq-handler-" + header.type())
            .unstarted(() -> runHandler(handler, exchange));
    exchange.handlerThread(thread);
    thread.start();
    return true;
  }

  /**
   * The destinations of a request's bodies, each exactly a body long: from the handler's {@link
   * RequestBodyAllocator} when it has one and places them, otherwise one buffer per body from the
   * connection's allocator. On failure nothing stays allocated.
   */
  private RequestBodyAllocator.Placed place(RequestBodyAllocator placer, BodyTable table) {
    long[] lengths = table.bodyLengths();
    RequestBodyAllocator.Placed placed =
        placer == null ? null : placeWith(placer, table.applicationMetadata(), lengths);
    if (placed == null) {
      List<NativeBuffer> owned = new ArrayList<>(lengths.length);
      try {
        for (long length : lengths) {
          owned.add(allocator.allocate(length));
        }
      } catch (RuntimeException e) {
        owned.forEach(NativeBuffer::close);
        throw e;
      }
      return new RequestBodyAllocator.Placed(
          owned.stream().map(NativeBuffer::segment).toList(), owned);
    }
    return placed;
  }

  /**
   * Runs a body allocator and checks its destinations, each sliced to exactly its body's length.
   *
   * @return the destinations, or null when the allocator declines
   * @throws TqException as the allocator, or {@code INTERNAL} for destinations that do not fit (the
   *     allocator's work is abandoned)
   */
  private RequestBodyAllocator.Placed placeWith(
      RequestBodyAllocator placer, byte[] metadata, long[] lengths) {
    RequestBodyAllocator.Placed placed = placer.allocate(metadata, lengths.clone(), allocator);
    if (placed == null) {
      return null;
    }
    try {
      List<MemorySegment> segments = placed.segments();
      if (segments.size() != lengths.length) {
        throw new TqException(
            ErrorCode.INTERNAL,
            "body allocator placed " + segments.size() + " of " + lengths.length + " bodies");
      }
      List<MemorySegment> exact = new ArrayList<>(lengths.length);
      for (int i = 0; i < lengths.length; i++) {
        if (segments.get(i).byteSize() < lengths[i]) {
          throw new TqException(
              ErrorCode.INTERNAL,
              "body "
                  + i
                  + " length="
                  + lengths[i]
                  + " > placed segment size="
                  + segments.get(i).byteSize());
        }
        exact.add(segments.get(i).asSlice(0, lengths[i]));
      }
      return new RequestBodyAllocator.Placed(exact, placed.owned(), placed.onAbandon());
    } catch (RuntimeException e) {
      placed.abandon();
      throw e;
    }
  }

  private void runHandler(RequestHandler handler, ServerExchange exchange) {
    try {
      handler.onRequest(exchange.request(), exchange);
    } catch (TqException e) {
      exchange.fail(e);
    } catch (RuntimeException | Error e) {
      recordError(
          "handler:" + e.getClass().getName(),
          "handler of type=" + exchange.request().type() + " failed: " + Errors.describe(e),
          e);
      exchange.fail(
          new TqException(ErrorCode.INTERNAL, "request handler failed: " + Errors.describe(e)));
    } finally {
      exchange.handlerReturned();
    }
  }

  private void sendError(long id, int type, ErrorCode code, String message) {
    enqueue(
        new FrameWriter.OutboundFrame(
            type,
            FrameDescriptor.FLAG_RESPONSE | FrameDescriptor.FLAG_ERROR,
            id,
            ControlMessages.errorSection(code, message),
            List.of(),
            NO_LISTENER));
  }

  /**
   * Logs the error once, answers with an error reply if the correlation id is trustworthy, and ends
   * the reader; the connection closes after the reply is flushed.
   */
  private boolean closeWith(Long replyId, long id, int type, ErrorCode code, String message) {
    recordError(code.name(), "closing connection " + remote + ": " + message, null);
    if (replyId != null) {
      sendError(id, type, code, message);
    }
    closeAfterFlush();
    return false;
  }

  private static final FrameWriter.Listener NO_LISTENER =
      new FrameWriter.Listener() {
        @Override
        public boolean onWriteStart() {
          return true;
        }

        @Override
        public void onWriteEnd(Throwable failure) {
          // Transport-generated frames hold no caller memory.
        }
      };
}
