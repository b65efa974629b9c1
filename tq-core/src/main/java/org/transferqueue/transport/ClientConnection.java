package org.transferqueue.transport;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.transferqueue.Clock;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.SharedSegment;

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
  private static final SecureRandom NONCES = new SecureRandom();

  /** The most ids one SHM_RELEASE carries (the server accepts up to 2^20). */
  static final int MAX_RELEASE_IDS = 65_536;

  /** The largest request whose grant is asked for ahead of time (a spare grant). */
  static final long SPARE_GRANT_MAX_BYTES = 8L << 20;

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

  /** How this connection maps its server's segments. */
  private final ClientMappings.Mapper mapper;

  /** Counts the client's mappings not yet unmapped, for its statistics. */
  private final AtomicInteger liveMappings;

  /** The server's segments as mapped here; set once at HELLO when the server attached us. */
  private volatile ClientMappings mappings;

  /** Lease and grant ids to release with the next SHM_RELEASE. */
  private final ConcurrentLinkedQueue<Long> releases = new ConcurrentLinkedQueue<>();

  private final AtomicBoolean releaseScheduled = new AtomicBoolean();

  /** A grant asked for ahead of the next shared request ({@link #refillSpare}), or null. */
  private final AtomicReference<SharedMessages.Grant> spare = new AtomicReference<>();

  private final AtomicBoolean spareRequested = new AtomicBoolean();

  private ClientConnection(
      HostPort address,
      SocketChannel channel,
      TransportConfig config,
      BufferAllocator allocator,
      ClientMappings.Mapper mapper,
      AtomicInteger liveMappings) {
    this.address = address;
    this.channel = channel;
    this.config = config;
    this.mapper = mapper;
    this.liveMappings = liveMappings;
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
      ScheduledExecutorService timer,
      ClientMappings.Mapper mapper,
      AtomicInteger liveMappings) {
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
      connection = new ClientConnection(address, channel, config, allocator, mapper, liveMappings);
    } catch (RuntimeException e) {
      closeQuietly(channel);
      throw e;
    }
    connection.hello(timer);
    return connection;
  }

  private void hello(ScheduledExecutorService timer) {
    String token = config.authToken().orElse(null);
    boolean wantShm = config.sharedMemory();
    long deadline = Clock.SYSTEM.nanoTime() + config.connectTimeout().toNanos();
    try {
      SharedMessages.Offer offer = null;
      try (Response reply =
          controlCall(
              MessageDescriptor.TYPE_HELLO,
              wantShm
                  ? SharedMessages.helloSection(token, true)
                  : ControlMessages.helloSection(token),
              timer,
              deadline)) {
        if (wantShm) {
          offer = decodeOffer(reply.metadata());
        }
      }
      if (offer != null) {
        attach(offer, timer, deadline);
      }
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

  /**
   * Sends one of the transport's own requests and waits for its reply within the connect timeout.
   *
   * @return the reply, which the caller closes
   */
  private Response controlCall(
      int type, byte[] section, ScheduledExecutorService timer, long deadline) {
    String what = "message type=" + type + " to " + address;
    PendingCall call =
        new PendingCall(type, section, List.of(), BodyDestination.into(List.of()), what);
    call.deadlineTask(
        timer.schedule(
            () ->
                call.abandon(
                    new DeadlineExceededException(
                        what + " not answered within connectTimeout=" + config.connectTimeout())),
            Math.max(0, deadline - Clock.SYSTEM.nanoTime()),
            TimeUnit.NANOSECONDS));
    send(call);
    return call.future.join();
  }

  /** The HELLO reply's offer; a malformed one counts as none (the connection stays on TCP). */
  private SharedMessages.Offer decodeOffer(byte[] metadata) {
    try {
      return SharedMessages.decodeHelloReply(metadata, address.toString());
    } catch (ProtocolException e) {
      LOG.log(
          System.Logger.Level.DEBUG, "ignoring the shared-memory offer of " + address + ": " + e);
      return null;
    }
  }

  /**
   * Proves to the server that this process maps its segment (SHM_ATTACH): maps the offered segment,
   * writes a random nonce at the probe offset and sends it. A segment that cannot be mapped, or
   * does not match its reference, declines with nil and the connection stays on TCP.
   */
  private void attach(SharedMessages.Offer offer, ScheduledExecutorService timer, long deadline) {
    ClientMappings candidate = new ClientMappings(mapper, offer.pid(), liveMappings);
    byte[] nonce = null;
    try {
      ClientMappings.Mapping mapping = candidate.acquire(offer.segment());
      try {
        MemorySegment memory = mapping.segment().memory();
        long probe = offer.probeOffset();
        if (probe >= SharedSegment.HEADER_BYTES && probe + 16 <= memory.byteSize()) {
          byte[] bytes = new byte[16];
          NONCES.nextBytes(bytes);
          MemorySegment.copy(bytes, 0, memory, ValueLayout.JAVA_BYTE, probe, bytes.length);
          nonce = bytes;
        }
      } finally {
        mapping.release();
      }
    } catch (TqException e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "shared memory of " + address + " cannot be mapped, staying on TCP: " + e.getMessage());
    }
    boolean attached;
    try (Response reply =
        controlCall(
            MessageDescriptor.TYPE_SHM_ATTACH,
            BodyTable.encode(List.of(), SharedMessages.attachRequest(nonce)),
            timer,
            deadline)) {
      attached =
          nonce != null && SharedMessages.decodeAttachReply(reply.metadata(), address.toString());
    } catch (RuntimeException e) {
      candidate.close();
      throw e;
    }
    if (attached) {
      mappings = candidate;
    } else {
      candidate.close();
    }
  }

  /** Whether this connection moves bodies through shared memory. */
  boolean sharedMemoryAttached() {
    return mappings != null;
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
    if (sharesBodies(call)) {
      Thread.ofVirtual().name("tq-shm-send-" + address).start(() -> sendShared(call, id));
      return;
    }
    writer.enqueue(
        new FrameWriter.OutboundFrame(call.type, 0, id, call.metadataSection, call.bodies, call));
  }

  private boolean sharesBodies(PendingCall call) {
    if (mappings == null || call.applicationMetadata == null || call.bodies.isEmpty()) {
      return false;
    }
    long total = 0;
    for (MemorySegment body : call.bodies) {
      total += body.byteSize();
    }
    return total >= config.sharedMemoryMinBytes();
  }

  /**
   * Sends a call's bodies through a granted region: SHM_GRANT, one copy from the caller's memory
   * into the region, then the frame naming the grant. Any failure to get or map a grant sends the
   * call over the socket instead. Runs on its own virtual thread: the caller never waits here.
   */
  private void sendShared(PendingCall call, long id) {
    long[] lengths = new long[call.bodies.size()];
    for (int i = 0; i < lengths.length; i++) {
      lengths[i] = call.bodies.get(i).byteSize();
    }
    long[] offsets = SharedMessages.requestLayout(lengths);
    long need = Math.max(1, offsets[lengths.length]);
    SharedMessages.Grant grant = call.placedBodies ? null : takeSpare(need);
    ClientMappings.Mapping mapping = null;
    try {
      if (grant == null && call.placedBodies) {
        grant =
            requestGrant(
                SharedMessages.placedGrantRequest(
                    need, call.type, call.applicationMetadata, lengths),
                lengths.length);
        if (grant.placed()) {
          sendPlaced(call, id, grant, lengths);
          return;
        }
      }
      if (grant == null) {
        grant = requestGrant(need);
      }
      if (grant.length() < need) {
        throw new ProtocolException(
            ErrorCode.PROTOCOL_ERROR,
            "SHM_GRANT of " + need + " bytes answered with " + grant.length() + " bytes");
      }
      mapping = mappings.acquire(grant.segment());
    } catch (TqException e) {
      if (grant != null) {
        releaseShared(grant.grantId());
      }
      writer.enqueue(
          new FrameWriter.OutboundFrame(call.type, 0, id, call.metadataSection, call.bodies, call));
      return;
    }
    if (!call.onWriteStart()) {
      mapping.release();
      releaseShared(grant.grantId());
      return;
    }
    try {
      MemorySegment region = mapping.segment().memory();
      for (int i = 0; i < lengths.length; i++) {
        MemorySegment.copy(call.bodies.get(i), 0, region, grant.offset() + offsets[i], lengths[i]);
      }
    } catch (RuntimeException e) {
      releaseShared(grant.grantId());
      call.onWriteEnd(new FrameWriter.UnwritableFrameException(e));
      return;
    } finally {
      mapping.release();
    }
    if (!call.placedBodies) {
      refillSpare(need);
    }
    enqueueShared(
        call,
        id,
        SharedMessages.sharedRequestSection(
            lengths, grant.grantId(), offsets, call.applicationMetadata));
  }

  /**
   * Sends a call whose bodies the server placed: one copy of each body straight to its placement,
   * then the frame naming the grant. If a placement cannot be mapped the grant is released before
   * the call goes over the socket (in that order on the wire, so that the server has undone the
   * placing before the request arrives).
   */
  private void sendPlaced(PendingCall call, long id, SharedMessages.Grant grant, long[] lengths) {
    List<ClientMappings.Mapping> held = new ArrayList<>();
    MemorySegment[] destinations = new MemorySegment[lengths.length];
    try {
      Map<SharedMessages.SegmentRef, ClientMappings.Mapping> bySegment = new HashMap<>();
      for (int i = 0; i < lengths.length; i++) {
        SharedMessages.Placement placement = grant.placements().get(i);
        ClientMappings.Mapping mapping = bySegment.get(placement.segment());
        if (mapping == null) {
          mapping = mappings.acquire(placement.segment());
          held.add(mapping);
          bySegment.put(placement.segment(), mapping);
        }
        MemorySegment memory = mapping.segment().memory();
        if (lengths[i] > memory.byteSize() - placement.offset()) {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_ERROR,
              "SHM_GRANT placed body "
                  + i
                  + " of "
                  + lengths[i]
                  + " bytes at offset="
                  + placement.offset()
                  + " beyond its segment of "
                  + memory.byteSize()
                  + " bytes");
        }
        destinations[i] = memory.asSlice(placement.offset(), lengths[i]);
      }
    } catch (TqException e) {
      held.forEach(ClientMappings.Mapping::release);
      releaseAtOnce(grant.grantId());
      writer.enqueue(
          new FrameWriter.OutboundFrame(call.type, 0, id, call.metadataSection, call.bodies, call));
      return;
    }
    try {
      if (!call.onWriteStart()) {
        releaseShared(grant.grantId());
        return;
      }
      try {
        for (int i = 0; i < lengths.length; i++) {
          MemorySegment.copy(call.bodies.get(i), 0, destinations[i], 0, lengths[i]);
        }
      } catch (RuntimeException e) {
        releaseShared(grant.grantId());
        call.onWriteEnd(new FrameWriter.UnwritableFrameException(e));
        return;
      }
    } finally {
      held.forEach(ClientMappings.Mapping::release);
    }
    enqueueShared(
        call,
        id,
        SharedMessages.placedRequestSection(lengths, grant.grantId(), call.applicationMetadata));
  }

  /** Queues a request frame whose bodies are in shared memory already. */
  private void enqueueShared(PendingCall call, long id, byte[] section) {
    writer.enqueue(
        new FrameWriter.OutboundFrame(
            call.type,
            FrameDescriptor.FLAG_SHARED_BODY,
            id,
            section,
            List.of(),
            new FrameWriter.Listener() {
              @Override
              public boolean onWriteStart() {
                return true; // the call was claimed for writing before the copy
              }

              @Override
              public void onWriteEnd(Throwable failure) {
                call.onWriteEnd(failure);
              }
            }));
  }

  /**
   * The spare grant if it holds {@code need} bytes; a spare that is too small is released. Null
   * when there is none (the caller asks for a grant and waits for it).
   */
  private SharedMessages.Grant takeSpare(long need) {
    SharedMessages.Grant grant = spare.getAndSet(null);
    if (grant != null && grant.length() < need) {
      releaseShared(grant.grantId());
      return null;
    }
    return grant;
  }

  /**
   * Asks, in the background, for a spare grant for the next request of about {@code need} bytes, so
   * that it need not wait a round trip for its own: one per connection, for requests up to {@link
   * #SPARE_GRANT_MAX_BYTES} (above that the copy dwarfs the round trip), sized to the next power of
   * two. A failure just leaves no spare.
   */
  private void refillSpare(long need) {
    if (need > SPARE_GRANT_MAX_BYTES
        || spare.get() != null
        || !spareRequested.compareAndSet(false, true)) {
      return;
    }
    long size = Long.highestOneBit(need) == need ? need : Long.highestOneBit(need) << 1;
    Thread.ofVirtual()
        .name("tq-shm-spare-" + address)
        .start(
            () -> {
              try {
                SharedMessages.Grant grant = requestGrant(size);
                if (closed.get() || !spare.compareAndSet(null, grant)) {
                  releaseShared(grant.grantId());
                }
              } catch (TqException e) {
                // No spare: the next request asks for its own grant.
                LOG.log(System.Logger.Level.DEBUG, "no spare grant from " + address + ": " + e);
              } finally {
                spareRequested.set(false);
              }
            });
  }

  /** Asks for a region of {@code length} bytes and waits at most the connect timeout. */
  private SharedMessages.Grant requestGrant(long length) {
    return requestGrant(SharedMessages.grantRequest(length), -1);
  }

  /**
   * Sends an SHM_GRANT and waits at most the connect timeout.
   *
   * @param bodies the body count of a placing request (its reply may be a placed grant), or -1
   */
  private SharedMessages.Grant requestGrant(byte[] request, int bodies) {
    PendingCall grantCall =
        new PendingCall(
            MessageDescriptor.TYPE_SHM_GRANT,
            BodyTable.encode(List.of(), request),
            List.of(),
            BodyDestination.into(List.of()),
            "SHM_GRANT to " + address);
    send(grantCall);
    Response reply;
    try {
      reply = grantCall.future.get(config.connectTimeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      grantCall.abandon(new DeadlineExceededException("SHM_GRANT to " + address + " timed out"));
      throw new DeadlineExceededException("SHM_GRANT to " + address + " timed out");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TqException(ErrorCode.CONNECTION_FAILED, "interrupted waiting for SHM_GRANT");
    } catch (java.util.concurrent.ExecutionException e) {
      throw Errors.unwrap(e);
    }
    try (reply) {
      return SharedMessages.decodeGrantReply(reply.metadata(), address.toString(), bodies);
    }
  }

  /**
   * Queues a lease or grant id for release; a virtual thread sends the queued ids in one
   * SHM_RELEASE and does not wait for its reply. Never blocks; does nothing once closed (the server
   * frees everything of a closed connection).
   */
  void releaseShared(long id) {
    if (closed.get()) {
      return;
    }
    releases.add(id);
    if (releaseScheduled.compareAndSet(false, true)) {
      Thread.ofVirtual().name("tq-shm-release-" + address).start(this::flushReleases);
    }
  }

  /**
   * Sends an SHM_RELEASE of one id now, ahead of whatever this thread queues next (the server reads
   * frames in order).
   */
  private void releaseAtOnce(long id) {
    sendRelease(new long[] {id});
  }

  private void flushReleases() {
    releaseScheduled.set(false);
    List<Long> ids = new ArrayList<>();
    Long id;
    while (ids.size() < MAX_RELEASE_IDS && (id = releases.poll()) != null) {
      ids.add(id);
    }
    if (ids.isEmpty() || closed.get()) {
      return;
    }
    if (!releases.isEmpty() && releaseScheduled.compareAndSet(false, true)) {
      Thread.ofVirtual().name("tq-shm-release-" + address).start(this::flushReleases);
    }
    sendRelease(ids.stream().mapToLong(Long::longValue).toArray());
  }

  /** Sends one SHM_RELEASE of {@code ids}; its (empty) reply is dropped, nobody waits for it. */
  private void sendRelease(long[] ids) {
    PendingCall call =
        new PendingCall(
            MessageDescriptor.TYPE_SHM_RELEASE,
            BodyTable.encode(List.of(), SharedMessages.releaseRequest(ids)),
            List.of(),
            BodyDestination.into(List.of()),
            "SHM_RELEASE to " + address);
    call.future.whenComplete(
        (reply, error) -> {
          if (reply != null) {
            reply.close();
          }
        });
    send(call);
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
    ClientMappings shared = mappings;
    if (shared != null) {
      shared.close();
    }
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
    boolean sharedBodies = (header.flags() & FrameDescriptor.FLAG_SHARED_BODY) != 0;
    BodyTable table;
    SharedMessages.SharedItem item = null;
    try {
      if (sharedBodies) {
        table = BodyTable.decodeShared(section, header.bodyLength(), config);
        item =
            SharedMessages.decodeItem(
                table.applicationMetadata(), true, table.bodyLengths().length, address.toString());
        if (mappings == null) {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_ERROR,
              "reply with shared bodies from " + address + " on a connection not attached");
        }
      } else {
        table = BodyTable.decode(section, header.bodyLength(), config);
      }
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
      if (item != null) {
        releaseShared(item.id());
      }
      return;
    }
    if (item != null) {
      receiveShared(call, table.bodyLengths(), item);
      return;
    }
    receive(call, table, header.bodyLength());
  }

  /**
   * Completes a call from a reply whose bodies lie in the server's segments: views over this
   * client's mapping (the lease ends when the last view is released) for a call that lets the
   * transport allocate, otherwise one copy into the call's destination and the lease ends at once.
   */
  private void receiveShared(PendingCall call, long[] lengths, SharedMessages.SharedItem item) {
    List<ClientMappings.Mapping> held = new ArrayList<>();
    List<MemorySegment> sources = new ArrayList<>(lengths.length);
    try {
      for (int i = 0; i < lengths.length; i++) {
        SharedMessages.Placement placement = item.placements().get(i);
        ClientMappings.Mapping mapping = mappings.acquire(placement.segment());
        held.add(mapping);
        long size = mapping.segment().size();
        if (placement.offset() < SharedSegment.HEADER_BYTES
            || placement.offset() > size - lengths[i]) {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_ERROR,
              "reply body "
                  + i
                  + " at offset="
                  + placement.offset()
                  + " length="
                  + lengths[i]
                  + " lies outside its segment of "
                  + size
                  + " bytes");
        }
        sources.add(mapping.segment().memory().asSlice(placement.offset(), lengths[i]));
      }
    } catch (TqException e) {
      held.forEach(ClientMappings.Mapping::release);
      releaseShared(item.id());
      call.endReceive(null, e);
      return;
    }
    SharedLease lease = new SharedLease(item.id(), held);
    if (call.destination instanceof BodyDestination.FromAllocator from) {
      List<NativeBuffer> views = new ArrayList<>(lengths.length);
      try {
        for (MemorySegment source : sources) {
          lease.hold();
          try {
            // Read-only: a view shows the server's own bytes (a stored cell, an object in a
            // node's engine), so a write through it would change what every later reader gets.
            views.add(from.allocator().wrapForeign(source.asReadOnly(), 0, lease::drop));
          } catch (RuntimeException e) {
            lease.drop();
            throw e;
          }
        }
      } catch (RuntimeException e) {
        views.forEach(NativeBuffer::close);
        lease.drop();
        call.endReceive(null, Errors.unwrap(e));
        return;
      }
      lease.drop();
      List<MemorySegment> bodies = views.stream().map(NativeBuffer::segment).toList();
      call.endReceive(new Response(item.applicationMetadata(), bodies, views), null);
      return;
    }
    try {
      Destinations.Prepared prepared =
          Destinations.prepare(
              call.destination, new BodyTable(lengths, item.applicationMetadata()));
      try {
        for (int i = 0; i < lengths.length; i++) {
          MemorySegment.copy(sources.get(i), 0, prepared.segments().get(i), 0, lengths[i]);
        }
      } catch (RuntimeException e) {
        prepared.owned().forEach(NativeBuffer::close);
        throw e;
      }
      call.endReceive(
          new Response(item.applicationMetadata(), prepared.segments(), prepared.owned()), null);
    } catch (RuntimeException e) {
      call.endReceive(null, Errors.unwrap(e));
    } finally {
      lease.drop();
    }
  }

  /**
   * One reply's lease on the client side: the mappings its bodies lie in and a count of holders
   * (the views, plus one while they are being built). The last drop unpins the mappings and asks
   * the server to release the lease.
   */
  private final class SharedLease {
    private final long id;
    private final List<ClientMappings.Mapping> mappingsHeld;
    private final AtomicInteger holders = new AtomicInteger(1);

    SharedLease(long id, List<ClientMappings.Mapping> mappingsHeld) {
      this.id = id;
      this.mappingsHeld = mappingsHeld;
    }

    void hold() {
      holders.incrementAndGet();
    }

    void drop() {
      if (holders.decrementAndGet() == 0) {
        releaseShared(id);
        mappingsHeld.forEach(ClientMappings.Mapping::release);
      }
    }
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
