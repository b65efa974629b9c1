package org.transferqueue.remote.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.LongConsumer;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.objectstore.ObjectStore;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.PendingReads;
import org.transferqueue.objectstore.engine.PendingWrites;
import org.transferqueue.remote.CommonMessages;
import org.transferqueue.remote.StagedCheckpointLoads;
import org.transferqueue.remote.StorageHandlers;
import org.transferqueue.transport.ReceivedRequest;
import org.transferqueue.transport.Reply;
import org.transferqueue.transport.RequestBodyAllocator;
import org.transferqueue.transport.SharedMemoryStats;
import org.transferqueue.transport.TransportConfig;
import org.transferqueue.transport.TransportServer;

/**
 * Serves the {@link ObjectStore} API of one store node (an engine set up in this process) over the
 * transport: one handler per entry of {@link StoreNodeProtocol}.
 *
 * <p>Data path: a write to an engine in this process ({@link EmbeddedObjectStore}) starts a
 * two-phase write once the request's metadata is read, the transport reads each accepted key's body
 * straight into the key's memory in the engine's segment (the only copy on this hop), and the
 * handler commits them (visible only then); a refused key's body is read into a connection buffer
 * and dropped. With another store the bodies land in the connection's buffers, are registered for
 * the duration of the call and written with the store's zero-copy batch write. A read with
 * capacities registers fresh reply buffers, reads into them with the engine's {@code batchGetInto}
 * (one copy out of the store) and writes them as the reply bodies, which the client reads straight
 * into its destination segments. Per-key results are the engine's codes; a malformed request gets a
 * {@code PROTOCOL_ERROR} reply.
 *
 * <p>Same host (docs/PROTOCOL.md section 4.2): started with the pool its engine's slabs lie in
 * ({@link #newSharedMemoryPool}), the node lends READ replies in place (the transport finds the
 * bodies in its pool; the lease holds the read tickets, so the objects stay unchanged until the
 * client releases it) and a placed SHM_GRANT hands the WRITE destinations above to the client,
 * which then makes the only copy of the hop.
 *
 * <p>Does not own the engine: close the server first, then the engine. Thread-safe.
 */
public final class StoreNodeServer implements AutoCloseable {
  private final ObjectStore store;
  private final BufferAllocator allocator;
  private final TransportServer server;
  private final StagedCheckpointLoads checkpoints;
  // WRITE requests whose bodies placeWrite put in the engine, by metadata array, until onWrite;
  // with their parsed arguments, so that onWrite does not decode the keys a second time.
  private final Map<byte[], PlacedWrite> pendingWrites =
      Collections.synchronizedMap(new IdentityHashMap<>());

  private StoreNodeServer(
      ObjectStore store,
      TransportConfig config,
      BufferAllocator allocator,
      StorageRequests requests,
      SharedMemoryPool sharedMemory) {
    this.store = Objects.requireNonNull(store, "store");
    Objects.requireNonNull(requests, "requests");
    this.allocator = Objects.requireNonNull(allocator, "allocator");
    this.checkpoints =
        new StagedCheckpointLoads(
            "store node " + store.hostname(),
            file -> engine().saveCheckpointFile(file),
            (file, expected) -> engine().prepareCheckpointFile(file, expected, null));
    TransportServer.Builder b =
        TransportServer.builder(config, allocator)
            .name(serverName(store.hostname()))
            .sharedMemoryPool(sharedMemory);
    StorageHandlers.bind(
        b,
        StoreNodeProtocol.values(),
        this::handler,
        StoreNodeProtocol.WRITE,
        this::placeWrite,
        requests);
    this.server = b.start();
  }

  /** What the server does with each message of {@link StoreNodeProtocol}. */
  private BiFunction<ReceivedRequest, LongConsumer, Reply> handler(StoreNodeProtocol type) {
    return switch (type) {
      case WRITE -> this::onWrite;
      case READ -> this::onRead;
      case EXIST -> (r, n) -> onExist(r);
      case SIZE -> (r, n) -> onSize(r);
      case REMOVE -> this::onRemove;
      case REMOVE_REGEX -> this::onRemoveRegex;
      case REMOVE_ALL -> this::onRemoveAll;
      case SAVE_CHECKPOINT -> (r, n) -> checkpoints.onSave(r);
      case PREPARE_LOAD -> (r, n) -> checkpoints.onPrepare(r);
      case COMMIT_LOAD -> (r, n) -> checkpoints.onCommit(r);
      case ABORT_LOAD -> (r, n) -> checkpoints.onAbort(r);
      case STATS -> (r, n) -> onStats(r);
    };
  }

  /**
   * Starts serving {@code store} on {@code config}'s bind address.
   *
   * @param store a set-up engine; not owned, must outlive the server
   * @param config bind address, token and limits
   * @param allocator the parent of the connection allocators and of the read reply buffers
   * @return the running server; the caller closes it
   */
  public static StoreNodeServer start(
      ObjectStore store, TransportConfig config, BufferAllocator allocator) {
    return new StoreNodeServer(store, config, allocator, StorageRequests.NOOP, null);
  }

  /**
   * The shared-memory pool for a store node whose engine keeps its slabs in shared memory: create
   * it, give it to {@link EmbeddedObjectStore#create(BufferAllocator,
   * org.transferqueue.objectstore.engine.MasterConfig, SharedMemoryPool)} before the engine's setup
   * and to {@link #start(ObjectStore, TransportConfig, BufferAllocator, StorageRequests,
   * SharedMemoryPool)}, so that every stored object lies in memory a same-host client maps: reads
   * are then lent in place (no copy on the node) and writes land where the engine keeps them.
   *
   * <pre>{@code
   * SharedMemoryPool pool = StoreNodeServer.newSharedMemoryPool(config, allocator, "node-0");
   * EmbeddedObjectStore engine = EmbeddedObjectStore.create(allocator, masterConfig, pool);
   * engine.setup(storeConfig);
   * StoreNodeServer server = StoreNodeServer.start(engine, config, allocator, requests, pool);
   * // ... close the server, then the engine, then the pool
   * }</pre>
   *
   * @param config the node's transport configuration
   * @param allocator the allocator the server will be started with
   * @param hostname the engine's {@code localHostname} (names the pool's allocator)
   * @return a pool the caller owns and closes after the server and the engine; null when shared
   *     memory is off (the engine then takes its slabs from its allocator)
   */
  public static SharedMemoryPool newSharedMemoryPool(
      TransportConfig config, BufferAllocator allocator, String hostname) {
    return TransportServer.newSharedMemoryPool(config, allocator, serverName(hostname));
  }

  private static String serverName(String hostname) {
    return "store-node-server:" + hostname;
  }

  /**
   * Starts serving {@code store} and measures its requests as a storage unit's: WRITE as {@code
   * PUT_DATA}, READ as {@code GET_DATA}, the three removals as {@code CLEAR_DATA}; samples = keys
   * named (objects removed for the regex and all removals). EXIST, SIZE and checkpoints are not
   * measured.
   *
   * @param store a set-up engine; not owned, must outlive the server
   * @param config bind address, token and limits
   * @param allocator the parent of the connection allocators and of the read reply buffers
   * @param requests where requests are measured ({@link StorageRequests#NOOP} for none)
   * @return the running server; the caller closes it
   */
  public static StoreNodeServer start(
      ObjectStore store,
      TransportConfig config,
      BufferAllocator allocator,
      StorageRequests requests) {
    return new StoreNodeServer(store, config, allocator, requests, null);
  }

  /**
   * Starts serving {@code store} with the shared-memory pool its engine's slabs lie in ({@link
   * #newSharedMemoryPool}).
   *
   * @param store a set-up engine; not owned, must outlive the server
   * @param config bind address, token and limits
   * @param allocator the parent of the connection allocators and of the read reply buffers
   * @param requests where requests are measured ({@link StorageRequests#NOOP} for none)
   * @param sharedMemory the pool, or null for one of the server's own (or none with shared memory
   *     off); not owned: close it after the server and the engine
   * @return the running server; the caller closes it
   */
  public static StoreNodeServer start(
      ObjectStore store,
      TransportConfig config,
      BufferAllocator allocator,
      StorageRequests requests,
      SharedMemoryPool sharedMemory) {
    return new StoreNodeServer(store, config, allocator, requests, sharedMemory);
  }

  /** The transport server, for protocol tests that call its handlers in-process. */
  TransportServer transport() {
    return server;
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
   * The address the server listens on.
   *
   * @return the address
   */
  public HostPort address() {
    return server.address();
  }

  /** A WRITE whose bodies were placed: its arguments and the engine's reservations. */
  private record PlacedWrite(StoreNodeProtocol.Write args, PendingWrites writes) {}

  /**
   * Where a WRITE's bodies are read into, for an engine in this process: each accepted key's memory
   * in the engine's segment, reserved by a two-phase write that {@link #onWrite} commits (one copy
   * on this hop, from the socket, and no registration); a refused key's body goes to a connection
   * buffer and is dropped. A request whose metadata does not parse gets the connection's buffers
   * and {@link #onWrite} reports it. With shared memory, the engine's slabs lie in the pool, so a
   * placed SHM_GRANT hands these same destinations to a same-host client, which writes each body
   * straight into the engine (one copy, by the client); a batch with a refused key is not placed
   * (its body would go to a connection buffer) and takes the ordinary shared path.
   */
  private RequestBodyAllocator.Placed placeWrite(
      byte[] metadata, long[] lengths, BufferAllocator connection) {
    if (!(store instanceof EmbeddedObjectStore engine)) {
      return null;
    }
    StoreNodeProtocol.Write args;
    try {
      args = StoreNodeProtocol.Write.decode(metadata, lengths.length);
    } catch (RuntimeException e) {
      return null;
    }
    PendingWrites writes = engine.startWrites(args.keys(), lengths, args.config(), args.upsert());
    List<MemorySegment> segments = new ArrayList<>(lengths.length);
    List<NativeBuffer> owned = new ArrayList<>();
    try {
      for (int i = 0; i < lengths.length; i++) {
        MemorySegment destination = writes.destination(i);
        if (destination == null) {
          NativeBuffer discarded = connection.allocate(lengths[i]);
          owned.add(discarded);
          destination = discarded.segment();
        }
        segments.add(destination);
      }
    } catch (RuntimeException e) {
      owned.forEach(NativeBuffer::close);
      writes.close();
      throw e;
    }
    pendingWrites.put(metadata, new PlacedWrite(args, writes));
    // Bodies that never arrive (a connection lost mid-body, a placed grant released unused or
    // mismatched) revoke the writes at once: the keys stay as they were, the memory is freed.
    return new RequestBodyAllocator.Placed(segments, owned, () -> abandonWrite(metadata));
  }

  private void abandonWrite(byte[] metadata) {
    PlacedWrite write = pendingWrites.remove(metadata);
    if (write != null) {
      write.writes().close();
    }
  }

  private Reply onWrite(ReceivedRequest request, LongConsumer samples) {
    // The transport hands the handler the metadata array it gave placeWrite.
    PlacedWrite write = pendingWrites.remove(request.metadata());
    PendingWrites placed = write == null ? null : write.writes();
    StoreNodeProtocol.Write args;
    try {
      args =
          write != null && write.args().keys().size() == request.bodyCount()
              ? write.args()
              : StoreNodeProtocol.Write.decode(request.metadata(), request.bodyCount());
    } catch (RuntimeException e) {
      if (placed != null) {
        placed.close();
      }
      throw e;
    }
    List<String> keys = args.keys();
    samples.accept(keys.size());
    int[] codes;
    if (placed != null) {
      try (PendingWrites writes = placed) {
        codes = writes.commit();
      }
    } else {
      codes = copyWrite(request, args);
    }
    return Reply.of(StoreNodeProtocol.encodeCodes(codes));
  }

  /** A write to a store without placed bodies: registers each body and writes it zero-copy. */
  private int[] copyWrite(ReceivedRequest request, StoreNodeProtocol.Write args) {
    List<String> keys = args.keys();
    List<MemorySegment> sources = new ArrayList<>(keys.size());
    for (int i = 0; i < keys.size(); i++) {
      sources.add(request.body(i));
    }
    List<MemorySegment> registered = new ArrayList<>();
    try {
      for (MemorySegment source : sources) {
        if (source.byteSize() > 0 && store.registerBuffer(source) == 0) {
          registered.add(source);
        }
      }
      return args.upsert()
          ? store.batchUpsertFrom(keys, sources, args.config())
          : store.batchPutFrom(keys, sources, args.config());
    } finally {
      registered.forEach(store::unregisterBuffer);
    }
  }

  private Reply onRead(ReceivedRequest request, LongConsumer samples) {
    StoreNodeProtocol.Read args = StoreNodeProtocol.Read.decode(request.metadata(), samples);
    List<String> keys = args.keys();
    long[] capacities = args.capacities();
    if (store instanceof EmbeddedObjectStore engine) {
      return readInPlace(engine, keys, capacities);
    }
    int n = keys.size();
    long[] results = new long[n];
    NativeBuffer[] buffers = new NativeBuffer[n];
    List<MemorySegment> registered = new ArrayList<>();
    try {
      List<String> readKeys = new ArrayList<>(n);
      List<MemorySegment> destinations = new ArrayList<>(n);
      int[] positions = new int[n];
      for (int i = 0; i < n; i++) {
        long capacity = capacities[i] >= 0 ? capacities[i] : store.getSize(keys.get(i));
        if (capacity < 0) {
          results[i] = capacity;
          continue;
        }
        buffers[i] = allocator.allocate(Math.max(capacity, 1));
        if (store.registerBuffer(buffers[i].segment()) == 0) {
          registered.add(buffers[i].segment());
        }
        positions[readKeys.size()] = i;
        readKeys.add(keys.get(i));
        destinations.add(prefix(buffers[i].segment(), capacity));
      }
      long[] read = store.batchGetInto(readKeys, destinations);
      for (int j = 0; j < read.length; j++) {
        results[positions[j]] = read[j];
      }
    } catch (RuntimeException e) {
      releaseAll(buffers);
      throw e;
    } finally {
      registered.forEach(store::unregisterBuffer);
    }
    return readReply(results, buffers);
  }

  /**
   * A READ answered from the engine's segment: the objects stay pinned by their read tickets until
   * the reply has been written (or has failed), and the socket writes them from where they lie,
   * without a copy into reply buffers.
   */
  private static Reply readInPlace(
      EmbeddedObjectStore engine, List<String> keys, long[] capacities) {
    PendingReads reads = engine.startReads(keys, capacities);
    try {
      long[] results = new long[reads.size()];
      List<MemorySegment> bodies = new ArrayList<>(results.length);
      for (int i = 0; i < results.length; i++) {
        results[i] = reads.result(i);
        bodies.add(results[i] > 0 ? reads.source(i) : MemorySegment.NULL);
      }
      byte[] metadata = StoreNodeProtocol.encodeResults(results);
      return new Reply(metadata, bodies, List.of(reads));
    } catch (RuntimeException e) {
      reads.close();
      throw e;
    }
  }

  private static Reply readReply(long[] results, NativeBuffer[] buffers) {
    byte[] metadata = StoreNodeProtocol.encodeResults(results);
    List<MemorySegment> bodies = new ArrayList<>(results.length);
    List<AutoCloseable> owned = new ArrayList<>();
    for (int i = 0; i < results.length; i++) {
      if (buffers[i] != null) {
        owned.add(buffers[i]);
      }
      bodies.add(results[i] > 0 ? prefix(buffers[i].segment(), results[i]) : MemorySegment.NULL);
    }
    return new Reply(metadata, bodies, owned);
  }

  /** The first {@code length} bytes of {@code segment}: itself when that is all of it. */
  private static MemorySegment prefix(MemorySegment segment, long length) {
    return segment.byteSize() == length ? segment : segment.asSlice(0, length);
  }

  private static void releaseAll(NativeBuffer[] buffers) {
    for (NativeBuffer buffer : buffers) {
      if (buffer != null) {
        buffer.close();
      }
    }
  }

  private Reply onExist(ReceivedRequest request) {
    List<String> keys =
        StoreNodeProtocol.Keys.decode(request.metadata(), "store-node EXIST").keys();
    return codes(store.batchIsExist(keys));
  }

  private Reply onSize(ReceivedRequest request) {
    List<String> keys = StoreNodeProtocol.Keys.decode(request.metadata(), "store-node SIZE").keys();
    long[] sizes = new long[keys.size()];
    for (int i = 0; i < sizes.length; i++) {
      sizes[i] = store.getSize(keys.get(i));
    }
    return Reply.of(StoreNodeProtocol.encodeResults(sizes));
  }

  private Reply onRemove(ReceivedRequest request, LongConsumer samples) {
    StoreNodeProtocol.Remove remove = StoreNodeProtocol.Remove.decode(request.metadata());
    List<String> keys = remove.keys();
    samples.accept(keys.size());
    return codes(store.batchRemove(keys, remove.force()));
  }

  private Reply onRemoveRegex(ReceivedRequest request, LongConsumer samples) {
    StoreNodeProtocol.RemoveRegex remove = StoreNodeProtocol.RemoveRegex.decode(request.metadata());
    return count(removed(store.removeByRegex(remove.regex(), remove.force()), samples));
  }

  private Reply onRemoveAll(ReceivedRequest request, LongConsumer samples) {
    boolean force = StoreNodeProtocol.RemoveAll.decode(request.metadata()).force();
    return count(removed(store.removeAll(force), samples));
  }

  private Reply onStats(ReceivedRequest request) {
    CommonMessages.checkNoArguments(request.metadata(), "store-node STATS");
    return Reply.of(StoreNodeProtocol.encodeStats(engine().statistics()));
  }

  private static long removed(long count, LongConsumer samples) {
    samples.accept(Math.max(0, count));
    return count;
  }

  private static Reply codes(int[] codes) {
    return Reply.of(StoreNodeProtocol.encodeCodes(codes));
  }

  private static Reply count(long count) {
    return Reply.of(CommonMessages.count(count));
  }

  private EmbeddedObjectStore engine() {
    if (store instanceof EmbeddedObjectStore engine) {
      return engine;
    }
    throw new StorageException(
        ErrorCode.UNSUPPORTED_OPERATION,
        "store node " + store.hostname() + " serves a store without checkpoints or statistics");
  }

  /** Stops serving, waiting for running requests, then discards a staged checkpoint load. */
  @Override
  public void close() {
    try {
      server.close();
    } finally {
      // Writes whose bodies never arrived (a connection lost mid-request) are revoked.
      synchronized (pendingWrites) {
        pendingWrites.values().forEach(write -> write.writes().close());
        pendingWrites.clear();
      }
      checkpoints.close();
    }
  }

  @Override
  public String toString() {
    return "StoreNodeServer[host=" + store.hostname() + ", address=" + server.address() + "]";
  }
}
