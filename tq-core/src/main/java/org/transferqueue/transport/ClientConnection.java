package org.transferqueue.transport;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.transferqueue.Clock;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;

/**
 * One long-lived client connection: a writer thread sending requests from a queue and a reader
 * thread matching replies to outstanding calls by correlation id, so many calls are in flight at
 * once (pipelining) and replies may arrive in any order.
 *
 * <p>Design note. Threads: callers {@link #send}; the reader thread owns the {@link FrameReader}
 * and is the only one that fills reply destinations; the writer thread owns the {@link
 * FrameWriter}. States: open, then closed for good ({@link #abort}, reader end, writer failure); a
 * closed connection fails every outstanding and later call with its close cause. The pool replaces
 * a closed connection by dialling a new one.
 */
final class ClientConnection {
  private static final System.Logger LOG = System.getLogger(ClientConnection.class.getName());

  private final HostPort address;
  private final SocketChannel channel;
  private final TransportConfig config;
  private final FrameReader reader;
  private final FrameWriter writer;
  private final Thread readerThread;
  private final ConcurrentHashMap<Long, PendingCall> pending = new ConcurrentHashMap<>();
  private final AtomicLong nextCorrelationId = new AtomicLong(1);
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile TqException closeCause;

  private ClientConnection(
      HostPort address, SocketChannel channel, TransportConfig config, BufferAllocator allocator) {
    this.address = address;
    this.channel = channel;
    this.config = config;
    this.reader = new FrameReader(channel, allocator, Clock.SYSTEM);
    FrameWriter started;
    try {
      started =
          new FrameWriter(
              channel, allocator, "tq-client-writer-" + address, this::onIoFailure, () -> {});
    } catch (RuntimeException e) {
      reader.close();
      throw e;
    }
    this.writer = started;
    this.readerThread =
        Thread.ofVirtual().name("tq-client-reader-" + address).start(this::readLoop);
  }

  /**
   * Dials, starts the I/O threads and exchanges HELLO, all within the connect timeout.
   *
   * @throws TqException with {@code CONNECTION_FAILED} if the peer cannot be reached, {@code
   *     UNAUTHENTICATED} if it refuses the token, {@code DEADLINE_EXCEEDED} if HELLO is not
   *     answered in time
   */
  static ClientConnection open(
      HostPort address,
      TransportConfig config,
      BufferAllocator allocator,
      ScheduledExecutorService timer) {
    SocketChannel channel = null;
    try {
      channel = SocketChannel.open();
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      channel
          .socket()
          .connect(
              new InetSocketAddress(address.host(), address.port()),
              (int) Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis()));
    } catch (IOException | RuntimeException e) {
      closeQuietly(channel);
      throw Errors.connectionFailed("connect to " + address, e);
    }
    ClientConnection connection;
    try {
      connection = new ClientConnection(address, channel, config, allocator);
    } catch (RuntimeException e) {
      closeQuietly(channel);
      throw e;
    }
    connection.hello(timer);
    return connection;
  }

  private void hello(ScheduledExecutorService timer) {
    String what = "HELLO to " + address;
    PendingCall call =
        new PendingCall(
            MessageDescriptor.TYPE_HELLO,
            ControlMessages.helloSection(config.authToken().orElse(null)),
            List.of(),
            BodyDestination.into(List.of()),
            what);
    call.deadlineTask(
        timer.schedule(
            () ->
                call.abandon(
                    new DeadlineExceededException(
                        what + " not answered within connectTimeout=" + config.connectTimeout())),
            config.connectTimeout().toNanos(),
            TimeUnit.NANOSECONDS));
    send(call);
    try {
      call.future.join().close();
    } catch (RuntimeException e) {
      TqException failure = Errors.unwrap(e);
      abort(failure);
      try {
        awaitTermination(config.connectTimeout().toMillis());
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
      }
      throw failure;
    }
  }

  HostPort address() {
    return address;
  }

  boolean isOpen() {
    return !closed.get();
  }

  boolean isTerminated() {
    return !readerThread.isAlive() && !writer.thread().isAlive();
  }

  int outstandingCalls() {
    return pending.size();
  }

  /** Queues a call; fails it at once if the connection is closed. */
  void send(PendingCall call) {
    if (!call.attach(this)) {
      return;
    }
    long id = nextCorrelationId.getAndIncrement();
    call.correlationId(id);
    pending.put(id, call);
    call.future.whenComplete((r, e) -> pending.remove(id));
    if (closed.get()) {
      call.fail(closeCause());
      return;
    }
    writer.enqueue(
        new FrameWriter.OutboundFrame(call.type, 0, id, call.metadataSection, call.bodies, call));
  }

  /** Closes the connection for good and fails every outstanding call with {@code cause}. */
  void abort(TqException cause) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    closeCause = cause;
    writer.stop();
    closeQuietly(channel);
    failOutstanding(cause);
  }

  /**
   * Whether the stream is beyond recovery for a call that missed its deadline: the peer has sent
   * part of a frame and then nothing more, and either that frame is the reply of this call (half a
   * frame cannot be withdrawn) or nothing has arrived for at least {@code quiet} (a reply whose
   * lengths promise bytes that never come). Bodies streaming into a call are guarded by that call's
   * own deadline instead.
   *
   * @param call the call that missed its deadline
   * @param quiet the call's timeout
   * @return the cause to {@link #abort} the connection with, or null if the stream is fine
   */
  TqException stallCause(PendingCall call, Duration quiet) {
    long quietNanos = reader.partialFrameQuietNanos();
    if (quietNanos == 0) {
      return null;
    }
    boolean own = reader.partialFrameCorrelationId() == call.correlationId();
    if (!own && quietNanos < quiet.toNanos()) {
      return null;
    }
    return new TqException(
        ErrorCode.CONNECTION_FAILED,
        "connection to "
            + address
            + " aborted: "
            + (own ? "the reply of " + call.description : "a reply frame")
            + " stalled after part of it arrived, no byte for "
            + TimeUnit.NANOSECONDS.toMillis(quietNanos)
            + " ms (timeout="
            + quiet
            + ")");
  }

  /** Waits for the reader and writer threads to end; they release their scratch buffers. */
  void awaitTermination(long timeoutMillis) throws InterruptedException {
    readerThread.join(timeoutMillis);
    writer.thread().join(timeoutMillis);
  }

  private TqException closeCause() {
    TqException cause = closeCause;
    return cause != null
        ? cause
        : new TqException(ErrorCode.CONNECTION_FAILED, "connection to " + address + " closed");
  }

  private void failOutstanding(TqException cause) {
    for (PendingCall call : new ArrayList<>(pending.values())) {
      call.fail(cause);
    }
  }

  private void onIoFailure(Throwable failure) {
    abort(Errors.connectionFailed("connection to " + address, failure));
  }

  private void readLoop() {
    TqException cause = null;
    try {
      FrameHeader header;
      while ((header = reader.readHeader()) != null) {
        readFrame(header);
        reader.frameDone();
      }
      cause = new TqException(ErrorCode.CONNECTION_FAILED, "connection to " + address + " lost");
    } catch (IOException e) {
      cause = Errors.connectionFailed("connection to " + address, e);
    } catch (TqException e) {
      LOG.log(System.Logger.Level.WARNING, "closing connection to " + address + ": " + e);
      cause = Errors.connectionFailed("connection to " + address, e);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "reader of connection to " + address + " failed", e);
      cause = Errors.connectionFailed("connection to " + address, e);
    } finally {
      abort(cause != null ? cause : closeCause());
      reader.close();
    }
  }

  private void readFrame(FrameHeader header) throws IOException {
    if (header.magic() != FrameDescriptor.MAGIC
        || header.version() != FrameDescriptor.CURRENT_VERSION) {
      FrameDescriptor.checkHeader(header.magic(), header.version(), 0, 0, Long.MAX_VALUE);
    }
    if (header.metadataLength() > config.maxMetadataBytes()) {
      throw new ProtocolException(
          ErrorCode.FRAME_TOO_LONG,
          "reply metadata length="
              + header.metadataLength()
              + " > maxMetadataBytes="
              + config.maxMetadataBytes());
    }
    FrameDescriptor.checkLengths(
        header.metadataLength(), header.bodyLength(), config.maxFrameBytes());
    if (!header.isResponse()) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR, "server sent a request frame, type=" + header.type());
    }
    byte[] section = reader.readMetadata(header.metadataLength());
    PendingCall call = pending.get(header.correlationId());
    BodyTable table;
    try {
      table = BodyTable.decode(section, header.bodyLength(), config);
    } catch (ProtocolException e) {
      // The call fails with the malformed section's error; a peer that sends one is not trusted
      // with further replies, so the connection closes (the pool dials a fresh one).
      if (call != null) {
        call.fail(e);
      }
      throw e;
    }
    if (header.isError()) {
      reader.skip(header.bodyLength());
      if (call != null) {
        call.fail(ControlMessages.decodeError(table.applicationMetadata(), address.toString()));
      }
      return;
    }
    if (call == null || !call.beginReceive()) {
      reader.skip(header.bodyLength());
      return;
    }
    receive(call, table, header.bodyLength());
  }

  private void receive(PendingCall call, BodyTable table, long bodyLength) throws IOException {
    Destinations.Prepared prepared;
    ByteBuffer[] buffers;
    try {
      prepared = Destinations.prepare(call.destination, table);
    } catch (RuntimeException e) {
      call.endReceive(null, Errors.unwrap(e));
      reader.skip(bodyLength);
      return;
    }
    try {
      buffers = FrameWriter.toBuffers(prepared.segments());
    } catch (RuntimeException e) {
      prepared.owned().forEach(NativeBuffer::close);
      call.endReceive(
          null,
          new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "reply destination unusable by the reader thread: " + Errors.describe(e),
              e));
      reader.skip(bodyLength);
      return;
    }
    try {
      reader.readBodies(buffers);
    } catch (IOException | RuntimeException e) {
      for (NativeBuffer buffer : prepared.owned()) {
        buffer.close();
      }
      call.endReceive(null, Errors.connectionFailed("reply from " + address, e));
      throw e;
    }
    List<MemorySegment> bodies = prepared.segments();
    call.endReceive(new Response(table.applicationMetadata(), bodies, prepared.owned()), null);
  }

  private static void closeQuietly(SocketChannel channel) {
    if (channel == null) {
      return;
    }
    try {
      channel.close();
    } catch (IOException e) {
      // Closing a socket we are abandoning; the close error carries no information for the caller.
      LOG.log(System.Logger.Level.DEBUG, "closing a socket failed", e);
    }
  }

  @Override
  public String toString() {
    return "ClientConnection[" + address + ", outstanding=" + pending.size() + "]";
  }
}
