package org.transferqueue.transport;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.Threads;
import org.transferqueue.TqException;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.SharedSegment;

/**
 * Calls request handlers on {@link TransportServer}s: pooled long-lived connections per address,
 * many calls in flight per connection, a deadline on every call. A pool starts with {@link
 * TransportConfig#connectionsPerPeer()} connections and grows, up to 16 times that, while every
 * connection carries a quarter of {@link TransportConfig#maxConcurrentRequestsPerConnection()}
 * calls (at most 64), so one client shared by many threads is not held to one server's
 * per-connection request slots.
 *
 * <p>Every call ends with a {@link Response} or a typed {@link TqException} by its deadline:
 *
 * <ul>
 *   <li>{@link DeadlineExceededException} when the deadline passes first (a late reply is drained
 *       and discarded; if the deadline strikes while the call's bytes are on the wire the
 *       connection is closed, since half a frame cannot be withdrawn);
 *   <li>{@code CONNECTION_FAILED} when the address refuses the connection or it is lost;
 *   <li>the server's {@link org.transferqueue.ErrorCode} and message for an error reply ({@code
 *       DEADLINE_EXCEEDED} as {@link DeadlineExceededException}, protocol codes as {@link
 *       ProtocolException});
 *   <li>{@code FRAME_TOO_LONG} before sending a request over the configured limits;
 *   <li>{@code CLOSED} for calls outstanding when the client is closed.
 * </ul>
 *
 * <p>Memory: request bodies are borrowed until the call's future completes; reply bodies land where
 * the call's {@link BodyDestination} says (by default buffers from the allocator given here, owned
 * by the response). The client's own scratch buffers come from a child of that allocator, closed
 * with the client; close responses first.
 *
 * <p>Thread-safe; the blocking methods may be called from any thread, virtual or platform. They do
 * not react to interrupts: they return or throw by the call's deadline.
 *
 * <pre>{@code
 * try (TransportClient client = new TransportClient(config, allocator);
 *     Response response = client.call(address, Request.of(TYPE_GET, metadata),
 *         BodyDestination.into(List.of(tensor.segment())), Duration.ofSeconds(5))) {
 *   // tensor.segment() now holds the reply's body
 * }
 * }</pre>
 */
public final class TransportClient implements AutoCloseable {
  private static final long TERMINATION_WAIT_MILLIS = 10_000;

  private final TransportConfig config;
  private final BufferAllocator allocator;
  private final BufferAllocator scratchAllocator;
  private final ScheduledThreadPoolExecutor timer;
  private final ExecutorService connector = Executors.newVirtualThreadPerTaskExecutor();
  private final ConcurrentHashMap<HostPort, Peer> peers = new ConcurrentHashMap<>();
  private final Set<PendingCall> outstanding = ConcurrentHashMap.newKeySet();
  private final Set<ClientConnection> connections = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final int growAt;
  private final ClientMappings.Mapper mapper;
  private final AtomicInteger liveMappings = new AtomicInteger();

  /** How many times {@link TransportConfig#connectionsPerPeer()} a pool may grow to. */
  static final int POOL_GROWTH = 16;

  /** Calls in flight on every pooled connection that make a pool dial one more (at most). */
  static final int GROW_AT_MAX = 64;

  /**
   * Creates a client; connections are opened on first use.
   *
   * @param config limits, timeouts, pool size and token
   * @param allocator where reply bodies go by default; the client also takes a child of it for its
   *     scratch buffers
   */
  public TransportClient(TransportConfig config, BufferAllocator allocator) {
    this(config, allocator, SharedSegment::open);
  }

  /**
   * A client whose shared-memory segments are mapped by {@code mapper}, for tests that simulate a
   * client unable to map them.
   */
  TransportClient(TransportConfig config, BufferAllocator allocator, ClientMappings.Mapper mapper) {
    this.mapper = Objects.requireNonNull(mapper, "mapper");
    this.config = Objects.requireNonNull(config, "config");
    this.allocator = Objects.requireNonNull(allocator, "allocator");
    this.scratchAllocator =
        allocator.newChildAllocator("transport-client", config.connectionMemoryLimitBytes());
    this.timer = new ScheduledThreadPoolExecutor(1, Threads.namedDaemon("tq-client-deadlines"));
    this.timer.setRemoveOnCancelPolicy(true);
    // A quarter of what a server takes per connection before its reader waits for a slot.
    this.growAt =
        Math.max(1, Math.min(GROW_AT_MAX, config.maxConcurrentRequestsPerConnection() / 4));
  }

  /**
   * Sends a request with the default deadline; reply bodies go into buffers from the client's
   * allocator.
   *
   * @param address the server
   * @param request the request; its bodies are borrowed until the future completes
   * @return the reply; never completes later than the deadline (plus scheduling delay)
   */
  public CompletableFuture<Response> callAsync(HostPort address, Request request) {
    return callAsync(
        address, request, BodyDestination.allocateFrom(allocator), config.defaultCallTimeout());
  }

  /**
   * Sends a request.
   *
   * <p>The returned future completes on a virtual thread of its own, so dependent actions may block
   * (even on further calls) without stalling the connection. Cancelling it does not stop the call:
   * the transport may use the request's bodies and the destination until the call's own deadline,
   * and a response that arrives for a cancelled future is closed.
   *
   * @param address the server
   * @param request the request; its bodies are borrowed until the future completes
   * @param destination where the reply's bodies go
   * @param timeout the call's deadline, from now
   * @return completes with the response (the caller owns and closes it) or fails with a {@link
   *     TqException} as described on this class
   */
  public CompletableFuture<Response> callAsync(
      HostPort address, Request request, BodyDestination destination, Duration timeout) {
    CompletableFuture<Response> result = new CompletableFuture<>();
    start(address, request, destination, timeout)
        .whenComplete(
            (response, error) ->
                Thread.ofVirtual()
                    .name("tq-client-completion")
                    .start(
                        () -> {
                          if (error != null) {
                            result.completeExceptionally(error);
                          } else if (!result.complete(response)) {
                            // The caller cancelled its future: nobody else will close this.
                            response.close();
                          }
                        }));
    return result;
  }

  /** Starts a call; the returned future completes on a transport thread. */
  private CompletableFuture<Response> start(
      HostPort address, Request request, BodyDestination destination, Duration timeout) {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(destination, "destination");
    Objects.requireNonNull(timeout, "timeout");
    byte[] section;
    try {
      section = checkedSection(request);
    } catch (TqException e) {
      return CompletableFuture.failedFuture(e);
    }
    return send(
        address,
        request.type(),
        section,
        request.metadata(),
        request.placedBodies(),
        request.bodies(),
        destination,
        timeout);
  }

  /** Sends a checked frame of any type, the transport's own included. */
  private CompletableFuture<Response> send(
      HostPort address,
      int type,
      byte[] section,
      List<MemorySegment> bodies,
      BodyDestination destination,
      Duration timeout) {
    return send(address, type, section, null, false, bodies, destination, timeout);
  }

  private CompletableFuture<Response> send(
      HostPort address,
      int type,
      byte[] section,
      byte[] applicationMetadata,
      boolean placedBodies,
      List<MemorySegment> bodies,
      BodyDestination destination,
      Duration timeout) {
    String what = "call type=" + type + " to " + address;
    PendingCall call =
        new PendingCall(
            type, section, applicationMetadata, bodies, destination, what, placedBodies);
    outstanding.add(call);
    call.future.whenComplete((r, e) -> outstanding.remove(call));
    if (closed.get()) {
      call.fail(PendingCall.closed(what));
      return call.future;
    }
    try {
      call.deadlineTask(
          timer.schedule(
              () ->
                  call.abandon(
                      new DeadlineExceededException(
                          what + " did not complete within timeout=" + timeout),
                      timeout),
              Math.max(0, timeout.toNanos()),
              TimeUnit.NANOSECONDS));
    } catch (RejectedExecutionException e) {
      call.fail(PendingCall.closed(what));
      return call.future;
    }
    peer(address)
        .connection(call)
        .whenComplete(
            (connection, error) -> {
              if (error != null) {
                call.fail(Errors.unwrap(error));
              } else {
                connection.send(call);
              }
            });
    return call.future;
  }

  /**
   * Blocking form of {@link #callAsync(HostPort, Request)}.
   *
   * @param address the server
   * @param request the request
   * @return the response, owned by the caller
   * @throws TqException as described on this class
   */
  public Response call(HostPort address, Request request) {
    return join(
        start(
            address,
            request,
            BodyDestination.allocateFrom(allocator),
            config.defaultCallTimeout()));
  }

  /**
   * Blocking form of {@link #callAsync(HostPort, Request, BodyDestination, Duration)}.
   *
   * @param address the server
   * @param request the request
   * @param destination where the reply's bodies go
   * @param timeout the call's deadline, from now
   * @return the response, owned by the caller
   * @throws TqException as described on this class
   */
  public Response call(
      HostPort address, Request request, BodyDestination destination, Duration timeout) {
    return join(start(address, request, destination, timeout));
  }

  /**
   * Sends the transport's no-op request ({@link MessageDescriptor#TYPE_PING}) and waits for its
   * empty reply: the smallest round trip of this transport, served by every {@link
   * TransportServer}.
   *
   * @param address the server
   * @param timeout the call's deadline, from now
   * @throws TqException as described on this class
   */
  public void ping(HostPort address, Duration timeout) {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(timeout, "timeout");
    join(send(
            address,
            MessageDescriptor.TYPE_PING,
            ControlMessages.emptySection(),
            List.of(),
            BodyDestination.into(List.of()),
            timeout))
        .close();
  }

  /**
   * Asks a server for the statistics of its process ({@link MessageDescriptor#TYPE_PROCESS_STATS}),
   * served by every {@link TransportServer}.
   *
   * @param address the server
   * @param timeout the call's deadline, from now
   * @return the server process's statistics at the time it answered
   * @throws TqException as described on this class; {@code PROTOCOL_ERROR} for a malformed reply
   */
  public ProcessStats processStats(HostPort address, Duration timeout) {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(timeout, "timeout");
    try (Response response =
        join(
            send(
                address,
                MessageDescriptor.TYPE_PROCESS_STATS,
                ControlMessages.emptySection(),
                List.of(),
                BodyDestination.into(List.of()),
                timeout))) {
      return ControlMessages.decodeProcessStats(response.metadata(), address.toString());
    }
  }

  private static Response join(CompletableFuture<Response> future) {
    try {
      return future.join();
    } catch (RuntimeException e) {
      throw Errors.unwrap(e);
    }
  }

  /**
   * The number of calls not yet completed.
   *
   * @return outstanding calls over all addresses
   */
  public int outstandingCalls() {
    return outstanding.size();
  }

  /**
   * The number of open connections to an address.
   *
   * @param address the server
   * @return open pooled connections
   */
  public int openConnections(HostPort address) {
    Peer peer = peers.get(address);
    return peer == null ? 0 : peer.openConnections();
  }

  /**
   * The server segments this client has mapped and not yet unmapped (over every connection; a
   * segment stays mapped while a reply view over it is open).
   *
   * @return the count
   */
  public int mappedSharedSegments() {
    return liveMappings.get();
  }

  /**
   * The connections to {@code address} whose bodies travel through shared memory.
   *
   * @param address the server
   * @return the count of open, attached connections
   */
  public int sharedMemoryConnections(HostPort address) {
    Peer peer = peers.get(address);
    if (peer == null) {
      return 0;
    }
    int attached = 0;
    for (ClientConnection connection : peer.connections()) {
      if (connection.isOpen() && connection.sharedMemoryAttached()) {
        attached++;
      }
    }
    return attached;
  }

  private byte[] checkedSection(Request request) {
    if (request.bodies().size() > config.maxBodySegments()) {
      throw new ProtocolException(
          ErrorCode.FRAME_TOO_LONG,
          "request has "
              + request.bodies().size()
              + " body segments > maxBodySegments="
              + config.maxBodySegments());
    }
    for (int i = 0; i < request.bodies().size(); i++) {
      long length = request.bodies().get(i).byteSize();
      if (length > config.maxBodySegmentBytes()) {
        throw new ProtocolException(
            ErrorCode.FRAME_TOO_LONG,
            "request body "
                + i
                + " length="
                + length
                + " > maxBodySegmentBytes="
                + config.maxBodySegmentBytes());
      }
    }
    byte[] section = BodyTable.encode(request.bodies(), request.metadata());
    if (section.length > config.maxMetadataBytes()) {
      throw new ProtocolException(
          ErrorCode.FRAME_TOO_LONG,
          "request metadata length="
              + section.length
              + " > maxMetadataBytes="
              + config.maxMetadataBytes());
    }
    FrameDescriptor.checkLengths(section.length, request.bodyLength(), config.maxFrameBytes());
    return section;
  }

  private Peer peer(HostPort address) {
    return peers.computeIfAbsent(address, Peer::new);
  }

  /**
   * Fails every outstanding call with {@code CLOSED}, closes the connections and releases the
   * scratch memory. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (PendingCall call : new ArrayList<>(outstanding)) {
      call.abandon(PendingCall.closed(call.description));
    }
    connector.shutdownNow();
    try {
      connector.awaitTermination(TERMINATION_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (ClientConnection connection : connections) {
      connection.abort(new TqException(ErrorCode.CLOSED, "the client was closed"));
    }
    boolean interrupted = false;
    for (ClientConnection connection : connections) {
      try {
        connection.awaitTermination(TERMINATION_WAIT_MILLIS);
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    timer.shutdownNow();
    scratchAllocator.close();
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The pool of connections to one address, dialled lazily and re-dialled when broken. It starts
   * with {@link TransportConfig#connectionsPerPeer()} slots and adds one (up to {@link
   * #POOL_GROWTH} times that) whenever every slot already carries {@link #growAt} calls (counting
   * calls queued on a connection still being dialled), so a client shared by many threads gets as
   * many connections, and server-side request slots, as that many separate clients would.
   */
  private final class Peer {
    private final HostPort address;
    private final List<CompletableFuture<ClientConnection>> slots;
    private final List<AtomicInteger> loads;
    private final int maxSlots;
    private int next;

    Peer(HostPort address) {
      this.address = address;
      this.maxSlots = config.connectionsPerPeer() * POOL_GROWTH;
      this.slots = new ArrayList<>(config.connectionsPerPeer());
      this.loads = new ArrayList<>(config.connectionsPerPeer());
      for (int i = 0; i < config.connectionsPerPeer(); i++) {
        slots.add(null);
        loads.add(new AtomicInteger());
      }
    }

    /** The connection {@code call} goes to; it counts towards that slot's load until it ends. */
    synchronized CompletableFuture<ClientConnection> connection(PendingCall call) {
      int index;
      if (slots.size() < maxSlots && saturated()) {
        index = slots.size();
        slots.add(null);
        loads.add(new AtomicInteger());
      } else {
        index = next;
        next = (next + 1) % slots.size();
      }
      AtomicInteger load = loads.get(index);
      load.incrementAndGet();
      call.future.whenComplete((r, e) -> load.decrementAndGet());
      CompletableFuture<ClientConnection> slot = slots.get(index);
      if (slot == null || broken(slot)) {
        if (slot != null && !slot.isCompletedExceptionally()) {
          ClientConnection dead = slot.join();
          if (dead.isTerminated()) {
            connections.remove(dead);
          }
        }
        slot = dial();
        slots.set(index, slot);
      }
      return slot;
    }

    /** True when every slot carries at least {@link #growAt} calls. */
    private boolean saturated() {
      for (AtomicInteger load : loads) {
        if (load.get() < growAt) {
          return false;
        }
      }
      return true;
    }

    private boolean broken(CompletableFuture<ClientConnection> slot) {
      return slot.isDone() && (slot.isCompletedExceptionally() || !slot.join().isOpen());
    }

    private CompletableFuture<ClientConnection> dial() {
      try {
        return CompletableFuture.supplyAsync(
            () -> {
              ClientConnection connection =
                  ClientConnection.open(
                      address, config, scratchAllocator, timer, mapper, liveMappings);
              connections.add(connection);
              if (closed.get()) {
                connection.abort(new TqException(ErrorCode.CLOSED, "the client was closed"));
              }
              return connection;
            },
            connector);
      } catch (RejectedExecutionException e) {
        return CompletableFuture.failedFuture(
            new TqException(ErrorCode.CLOSED, "the client was closed"));
      }
    }

    synchronized List<ClientConnection> connections() {
      List<ClientConnection> list = new ArrayList<>();
      for (CompletableFuture<ClientConnection> slot : slots) {
        if (slot != null && slot.isDone() && !slot.isCompletedExceptionally()) {
          list.add(slot.join());
        }
      }
      return list;
    }

    synchronized int openConnections() {
      int open = 0;
      for (ClientConnection connection : connections()) {
        if (connection.isOpen()) {
          open++;
        }
      }
      return open;
    }
  }
}
