package org.transferqueue.transport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.transferqueue.DistinctErrorLog;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.SharedMemoryPool;

/**
 * Serves request handlers over TCP: accepts connections (a virtual thread per connection), decodes
 * frames, runs the handler registered for each request's message type on its own virtual thread and
 * writes the reply with the request's correlation id. Requests of one connection run concurrently
 * and are answered in the order they finish.
 *
 * <p>Robustness: limits are checked before anything is allocated; an unknown message type gets an
 * {@code UNSUPPORTED_OPERATION} error reply, an unknown version an {@code UNSUPPORTED_VERSION} one;
 * a handler's exception becomes an error reply. A malformed frame that leaves the stream unreadable
 * closes that one connection (logged once per kind of error, counted in {@link #errorCount()});
 * other connections and the server go on. With a token configured, the first frame of a connection
 * must be a HELLO carrying it, otherwise the connection is answered {@code UNAUTHENTICATED} and
 * closed before any request runs.
 *
 * <p>Memory: each connection has a child allocator (limit {@link
 * TransportConfig#connectionMemoryLimitBytes()}) for its scratch buffers and request bodies; see
 * {@link ReceivedRequest} for who releases what.
 *
 * <p>Thread-safe. Handlers are fixed when the server starts.
 *
 * <pre>{@code
 * try (TransportServer server = TransportServer.builder(config, allocator)
 *     .handler(TYPE_ECHO, RequestHandler.replying(r -> Reply.of(r.metadata(), r.body(0))))
 *     .start()) {
 *   HostPort address = server.address();
 * }
 * }</pre>
 */
public final class TransportServer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(TransportServer.class.getName());
  private static final long TERMINATION_WAIT_MILLIS = 10_000;

  private final TransportConfig config;
  private final BufferAllocator allocator;
  private final Map<Integer, RequestHandler> handlers;
  private final Map<Integer, RequestBodyAllocator> bodyAllocators;
  private final ServerSocketChannel serverChannel;
  private final HostPort address;
  private final Thread acceptor;
  private final Set<ServerConnection> connections = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicLong connectionCount = new AtomicLong();
  private final DistinctErrorLog errorLog = new DistinctErrorLog(LOG);

  /** The shared-memory segments offered to same-host clients; null when shared memory is off. */
  private final SharedMemoryPool sharedMemory;

  /** Whether {@link #sharedMemory} is this server's to close (false for a pool given to it). */
  private final boolean ownsSharedMemory;

  /** What moved through shared memory since start; see {@link SharedMemoryStats}. */
  private final SharedMemoryCounters sharedCounters = new SharedMemoryCounters();

  private TransportServer(Builder builder) {
    this.config = builder.config;
    Map<Integer, RequestHandler> all = new HashMap<>(builder.handlers);
    all.put(MessageDescriptor.TYPE_PING, RequestHandler.replying(request -> Reply.empty()));
    all.put(
        MessageDescriptor.TYPE_PROCESS_STATS,
        RequestHandler.replying(
            request ->
                new Reply(
                    ControlMessages.processStatsMetadata(
                        ProcessStats.current(), sharedMemoryStats()),
                    List.of(),
                    List.of())));
    this.handlers = Map.copyOf(all);
    this.bodyAllocators = Map.copyOf(builder.bodyAllocators);
    this.allocator =
        builder.allocator.newChildAllocator(builder.name, builder.allocator.limitBytes());
    boolean on = config.sharedMemory() && SHARED_MEMORY_SUPPORTED;
    this.ownsSharedMemory = on && builder.sharedMemory == null;
    this.sharedMemory =
        !on
            ? null
            : builder.sharedMemory != null
                ? builder.sharedMemory
                : newSharedMemoryPool(config, builder.allocator, builder.name);
    try {
      this.serverChannel = ServerSocketChannel.open();
      serverChannel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      serverChannel.bind(new InetSocketAddress(config.bindHost(), config.bindPort()));
      InetSocketAddress bound = (InetSocketAddress) serverChannel.getLocalAddress();
      this.address = new HostPort(bound.getAddress().getHostAddress(), bound.getPort());
    } catch (IOException | RuntimeException e) {
      if (ownsSharedMemory) {
        sharedMemory.close();
      }
      allocator.close();
      throw new TqException(
          ErrorCode.CONNECTION_FAILED,
          "cannot listen on "
              + config.bindHost()
              + ":"
              + config.bindPort()
              + ": "
              + Errors.describe(e),
          e);
    }
    this.acceptor = Thread.ofVirtual().name("tq-server-acceptor-" + address).start(this::accept);
  }

  /**
   * Creates the shared-memory pool a server with {@code config} would create for itself, for a
   * caller that must place memory in it before the server starts (a store node's engine slabs,
   * {@link SharedMemoryPool#allocateStorage}) and then gives it to {@link
   * Builder#sharedMemoryPool}.
   *
   * @param config the server's configuration: {@code sharedMemory}, its limit and segment size
   * @param allocator the allocator the server will be built with: the pool's child allocator is its
   *     child, not the server's, so regions a handler keeps may outlive the server
   * @param name the server's name ({@link Builder#name}); the pool's allocator is {@code name +
   *     "-shared-memory"}
   * @return a pool the caller owns and closes after the server and after the holders of its
   *     regions; null when shared memory is off or this platform has none
   */
  public static SharedMemoryPool newSharedMemoryPool(
      TransportConfig config, BufferAllocator allocator, String name) {
    if (!config.sharedMemory() || !SHARED_MEMORY_SUPPORTED) {
      return null;
    }
    return new SharedMemoryPool(
        allocator,
        name + "-shared-memory",
        config.sharedMemoryLimitBytes(),
        config.sharedMemorySegmentBytes());
  }

  /**
   * The handler registered for a message type, for protocol tests that answer requests in-process.
   *
   * @param type the message type
   * @return the handler, or null if the type has none
   */
  RequestHandler handler(int type) {
    return handlers.get(type);
  }

  /**
   * Starts building a server.
   *
   * @param config bind address, limits and token
   * @param allocator the parent of the server's allocators
   * @return a builder
   */
  public static Builder builder(TransportConfig config, BufferAllocator allocator) {
    return new Builder(config, allocator);
  }

  /**
   * Where the server listens (with the actual port when an ephemeral one was asked for).
   *
   * @return the address
   */
  public HostPort address() {
    return address;
  }

  /**
   * Connections currently open.
   *
   * @return the count
   */
  public int openConnections() {
    return connections.size();
  }

  /**
   * Errors seen on background threads: malformed frames that closed a connection, refused
   * authentication, failed handlers, write failures.
   *
   * @return the total since start
   */
  public long errorCount() {
    return errorLog.errorCount();
  }

  /**
   * {@link #errorCount()} by kind (error code name, or {@code handler:} plus exception class).
   *
   * @return a snapshot
   */
  public Map<String, Long> errorCounts() {
    return errorLog.counts();
  }

  /**
   * A snapshot of the shared-memory pool and of the grants and leases its connections hold.
   *
   * @return the statistics; all zero when shared memory is off
   */
  public SharedMemoryStats sharedMemoryStats() {
    if (sharedMemory == null) {
      return SharedMemoryStats.OFF;
    }
    long grants = 0;
    long grantBytes = 0;
    long leases = 0;
    long attached = 0;
    for (ServerConnection connection : connections) {
      ServerSharedMemory shared = connection.shared();
      if (shared != null) {
        long[] outstanding = shared.outstanding();
        grants += outstanding[0];
        leases += outstanding[1];
        grantBytes += outstanding[2];
        attached += shared.attached() ? 1 : 0;
      }
    }
    return new SharedMemoryStats(
        true,
        sharedMemory.segmentCount(),
        sharedMemory.segmentBytes(),
        sharedMemory.usedBytes(),
        sharedMemory.regionCount(),
        attached,
        grants,
        grantBytes,
        leases,
        sharedMemory.storageBytes(),
        sharedCounters.requestBytesGranted.sum(),
        sharedCounters.requestBytesPlaced.sum(),
        sharedCounters.replyBytesCopied.sum(),
        sharedCounters.replyBytesLent.sum());
  }

  /**
   * Closes the empty shared-memory segments the pool keeps for reuse, returning their memory.
   *
   * @return the bytes freed; 0 when shared memory is off
   */
  public long trimSharedMemory() {
    return sharedMemory == null ? 0 : sharedMemory.trim();
  }

  /** Whether this platform can create shared segments (Linux memfd). */
  static final boolean SHARED_MEMORY_SUPPORTED =
      System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux");

  DistinctErrorLog errorLog() {
    return errorLog;
  }

  private void accept() {
    while (!closed.get()) {
      SocketChannel channel;
      try {
        channel = serverChannel.accept();
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException e) {
        if (closed.get()) {
          return;
        }
        errorLog.record("accept", "accepting a connection failed: " + Errors.describe(e), e);
        continue;
      }
      try {
        open(channel);
      } catch (IOException | RuntimeException e) {
        errorLog.record("accept", "setting up a connection failed: " + Errors.describe(e), e);
        closeQuietly(channel);
      }
    }
  }

  private void open(SocketChannel channel) throws IOException {
    if (closed.get()) {
      closeQuietly(channel);
      return;
    }
    channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
    SocketAddress remote = channel.getRemoteAddress();
    BufferAllocator connectionAllocator =
        allocator.newChildAllocator(
            "connection-" + connectionCount.incrementAndGet() + "-" + remote,
            config.connectionMemoryLimitBytes());
    ServerConnection connection;
    try {
      connection =
          new ServerConnection(
              this,
              config,
              channel,
              remote,
              connectionAllocator,
              handlers,
              bodyAllocators,
              sharedMemory,
              sharedCounters);
    } catch (RuntimeException e) {
      connectionAllocator.close();
      throw e;
    }
    connections.add(connection);
    connection.terminated().whenComplete((v, e) -> connections.remove(connection));
    if (closed.get()) {
      connection.forceClose();
    }
  }

  /**
   * Stops accepting, lets in-flight requests finish and send their replies for up to {@link
   * TransportConfig#shutdownGracePeriod()}, then closes every connection (interrupting handlers
   * still running; their callers see {@code CONNECTION_FAILED}) and releases the server's memory.
   * Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    closeQuietly(serverChannel);
    boolean interrupted = false;
    try {
      acceptor.join(TERMINATION_WAIT_MILLIS);
    } catch (InterruptedException e) {
      interrupted = true;
    }
    List<ServerConnection> open = List.copyOf(connections);
    open.forEach(ServerConnection::stopReading);
    try {
      CompletableFuture.allOf(
              open.stream().map(ServerConnection::idle).toArray(CompletableFuture[]::new))
          .get(config.shutdownGracePeriod().toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      LOG.log(System.Logger.Level.DEBUG, "grace period over with requests still running");
    } catch (InterruptedException e) {
      interrupted = true;
    }
    for (ServerConnection connection : open) {
      if (connection.idle().isDone()) {
        connection.closeAfterFlush();
      } else {
        connection.forceClose();
      }
    }
    try {
      CompletableFuture.allOf(
              open.stream().map(ServerConnection::terminated).toArray(CompletableFuture[]::new))
          .get(TERMINATION_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "connections of " + address + " did not end in time; closing them hard");
      open.forEach(ServerConnection::forceClose);
      interrupted |= awaitTermination(open);
    } catch (InterruptedException e) {
      interrupted = true;
    }
    try {
      if (ownsSharedMemory) {
        sharedMemory.close();
      }
    } finally {
      allocator.close();
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Waits for connections to end; returns true if interrupted. */
  private static boolean awaitTermination(List<ServerConnection> open) {
    try {
      CompletableFuture.allOf(
              open.stream().map(ServerConnection::terminated).toArray(CompletableFuture[]::new))
          .get(TERMINATION_WAIT_MILLIS, TimeUnit.MILLISECONDS);
      return false;
    } catch (TimeoutException | ExecutionException e) {
      LOG.log(System.Logger.Level.ERROR, "connections still hold memory after a hard close: " + e);
      return false;
    } catch (InterruptedException e) {
      return true;
    }
  }

  private static void closeQuietly(java.nio.channels.Channel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      // Abandoning the channel; its close error does not change what the caller can do.
      LOG.log(System.Logger.Level.DEBUG, "closing a channel failed", e);
    }
  }

  @Override
  public String toString() {
    return "TransportServer[" + address + ", connections=" + connections.size() + "]";
  }

  /** Collects the handlers of a {@link TransportServer}; not thread-safe. */
  public static final class Builder {
    private final TransportConfig config;
    private final BufferAllocator allocator;
    private final Map<Integer, RequestHandler> handlers = new HashMap<>();
    private final Map<Integer, RequestBodyAllocator> bodyAllocators = new HashMap<>();
    private String name = "transport-server";
    private SharedMemoryPool sharedMemory;

    Builder(TransportConfig config, BufferAllocator allocator) {
      this.config = Objects.requireNonNull(config, "config");
      this.allocator = Objects.requireNonNull(allocator, "allocator");
    }

    /**
     * Registers the handler of one message type.
     *
     * @param type {@link MessageDescriptor#FIRST_APPLICATION_TYPE} to {@link
     *     MessageDescriptor#MAX_TYPE}
     * @param handler the handler
     * @return this builder
     * @throws TqException with {@code INVALID_ARGUMENT} for a reserved type or one already
     *     registered
     */
    public Builder handler(int type, RequestHandler handler) {
      Objects.requireNonNull(handler, "handler");
      MessageDescriptor.requireApplicationType(type);
      if (handlers.putIfAbsent(type, handler) != null) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "message type=" + type + " already has a handler");
      }
      return this;
    }

    /**
     * Registers the handler of a message type whose request bodies {@code bodies} places.
     *
     * @param type as for {@link #handler(int, RequestHandler)}
     * @param handler the handler
     * @param bodies chooses where the request's bodies are read into
     * @return this builder
     * @throws TqException as for {@link #handler(int, RequestHandler)}
     */
    public Builder handler(int type, RequestHandler handler, RequestBodyAllocator bodies) {
      Objects.requireNonNull(bodies, "bodies");
      handler(type, handler);
      bodyAllocators.put(type, bodies);
      return this;
    }

    /**
     * Names the server's allocator (for statistics and leak reports).
     *
     * @param name the name
     * @return this builder
     */
    public Builder name(String name) {
      this.name = Objects.requireNonNull(name, "name");
      return this;
    }

    /**
     * Serves shared memory from {@code pool} instead of a pool of the server's own, so that memory
     * placed in it before the start (a store node's engine slabs) is what same-host clients map.
     * Used only when the configuration has shared memory on; the server never closes it.
     *
     * @param pool a pool from {@link #newSharedMemoryPool}, or null for the server's own
     * @return this builder
     */
    public Builder sharedMemoryPool(SharedMemoryPool pool) {
      this.sharedMemory = pool;
      return this;
    }

    /**
     * Binds and starts accepting.
     *
     * @return the running server; the caller closes it
     * @throws TqException with {@code CONNECTION_FAILED} if the address cannot be bound
     */
    public TransportServer start() {
      return new TransportServer(this);
    }
  }
}
