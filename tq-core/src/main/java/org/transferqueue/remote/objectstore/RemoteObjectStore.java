package org.transferqueue.remote.objectstore;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.IntPredicate;
import java.util.function.IntToLongFunction;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.AbstractObjectStore;
import org.transferqueue.objectstore.CheckpointableObjectStore;
import org.transferqueue.objectstore.ObjectStore;
import org.transferqueue.objectstore.ObjectStoreCheckpoints;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.StoreStatistics;
import org.transferqueue.objectstore.StoreStatus;
import org.transferqueue.remote.AsyncExchange;
import org.transferqueue.remote.CheckpointMessages;
import org.transferqueue.remote.CommonMessages;
import org.transferqueue.remote.DistributedCheckpointLoad;
import org.transferqueue.remote.RemoteCalls;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.kv.KvKeys;
import org.transferqueue.transport.BodyDestination;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.Response;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * An {@link ObjectStore} over store nodes ({@link StoreNodeServer}s): keys are sharded over the
 * nodes by sample ({@link #nodeOf}), and each batch runs as one request per involved node, in
 * parallel, split into several where one request or reply would exceed the transport's limits.
 *
 * <p>Data path: writes are sent with gathering writes straight from the caller's registered source
 * segments; {@link #batchGetInto} reads the reply bodies straight from the socket into the caller's
 * registered destination segments. Buffers are registered here, in the client, once (as with the
 * embedded engine); the nodes never see caller memory. Results are Mooncake's numeric codes, per
 * key, as the embedded engine gives them; a node that cannot be reached or does not answer by the
 * deadline gives {@code -900} ({@code RPC_FAIL}) or {@code -901} ({@code RPC_TIMEOUT}) for its
 * keys, which a caller may retry. A failure that retrying cannot mend is thrown as the transport's
 * typed error instead ({@code FRAME_TOO_LONG} for an object larger than one frame may carry, {@code
 * UNAUTHENTICATED}, {@code PROTOCOL_ERROR}, ...). {@code removeByRegex} and {@code removeAll} go to
 * every node.
 *
 * <p>Life cycle as the engine's: {@link #setup} opens (no remote effect; the nodes are set up by
 * their own process), {@link #closeStore} closes the transport client. Thread-safe; the async twins
 * run on virtual threads.
 */
public final class RemoteObjectStore extends AbstractObjectStore
    implements CheckpointableObjectStore {
  private static final int OK = StoreStatus.OK.code();
  private static final int INVALID = StoreStatus.INVALID_PARAMS.code();
  private static final int RPC_FAIL = StoreStatus.RPC_FAIL.code();
  private static final int RPC_TIMEOUT = StoreStatus.RPC_TIMEOUT.code();

  /** Room for the frame header, the body table and padding besides metadata and bodies. */
  private static final long FRAME_OVERHEAD = 4096;

  /** Metadata bytes budgeted per key besides its characters (string header, a result). */
  private static final long KEY_OVERHEAD = 16;

  private final List<HostPort> nodes;
  // Null when requests go through an exchange given to connect (the protocol tests).
  private final TransportClient client;
  private final AsyncExchange exchange;
  private final BufferAllocator allocator;
  private final Duration timeout;
  private final TransportConfig limits;
  private final ReentrantLock lock = new ReentrantLock();

  // Guarded by lock.
  private volatile StoreConfig config;
  private volatile ExecutorService executor;
  private volatile boolean closed;

  private RemoteObjectStore(
      List<HostPort> nodes,
      TransportConfig transport,
      BufferAllocator allocator,
      AsyncExchange exchange) {
    if (nodes.isEmpty()) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "no store node addresses");
    }
    this.nodes = List.copyOf(nodes);
    this.allocator = Objects.requireNonNull(allocator, "allocator");
    this.timeout = transport.defaultCallTimeout();
    this.limits = transport;
    if (exchange == null) {
      this.client = new TransportClient(transport, allocator);
      this.exchange = client::callAsync;
    } else {
      this.client = null;
      this.exchange = exchange;
    }
  }

  /**
   * Creates a store over the given nodes; it connects on first use.
   *
   * @param nodes the node addresses; the order decides the sharding and must be the same for every
   *     client
   * @param transport token, limits and the per-call deadline
   * @param allocator where transport scratch memory and the buffers of {@link #get} come from
   * @return a store that is not yet set up; the caller closes it
   * @throws TqException with {@code INVALID_ARGUMENT} for an empty node list
   */
  public static RemoteObjectStore connect(
      List<HostPort> nodes, TransportConfig transport, BufferAllocator allocator) {
    return new RemoteObjectStore(nodes, transport, allocator, null);
  }

  /**
   * A store whose requests go through {@code exchange} instead of a transport client of its own
   * (in-process in the protocol tests).
   */
  static RemoteObjectStore connect(
      List<HostPort> nodes,
      TransportConfig transport,
      BufferAllocator allocator,
      AsyncExchange exchange) {
    return new RemoteObjectStore(nodes, transport, allocator, Objects.requireNonNull(exchange));
  }

  /**
   * The node that holds {@code key}: a cell key of the key-value layer ({@code
   * "<gi>.<generation>@<field>"}, and its chunk keys; {@link KvKeys#sampleOf}) lives on node {@code
   * gi mod N}, as SimpleStorage places sample {@code gi} on unit {@code gi mod N}, so that every
   * cell of a sample shares one node and losing a node loses only its samples; any other key on
   * node {@code floorMod(key.hashCode(), N)}.
   *
   * @param key the key
   * @return its node's position in the node list
   */
  public int nodeOf(String key) {
    long sample = KvKeys.sampleOf(key);
    return sample >= 0
        ? (int) Math.floorMod(sample, (long) nodes.size())
        : Math.floorMod(key.hashCode(), nodes.size());
  }

  @Override
  public int setup(StoreConfig storeConfig) {
    Objects.requireNonNull(storeConfig, "storeConfig");
    lock.lock();
    try {
      if (config != null || closed) {
        return INVALID;
      }
      executor = Executors.newVirtualThreadPerTaskExecutor();
      config = storeConfig;
      return OK;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public int closeStore() {
    ExecutorService toStop;
    lock.lock();
    try {
      if (closed) {
        return OK;
      }
      closed = true;
      toStop = executor;
      closeRegistrations();
    } finally {
      lock.unlock();
    }
    if (toStop != null) {
      toStop.close();
    }
    if (client != null) {
      client.close();
    }
    return OK;
  }

  private boolean open() {
    return config != null && !closed;
  }

  @Override
  protected Executor asyncExecutor() {
    return open() ? executor : null;
  }

  @Override
  protected StoreConfig openConfig() {
    return open() ? config : null;
  }

  @Override
  public String hostname() {
    StoreConfig current = config;
    return current == null ? "" : current.localHostname();
  }

  // ---------------------------------------------------------------- writes

  @Override
  protected int[] writeValidated(
      List<String> keys,
      List<MemorySegment> sources,
      ReplicateConfig replicate,
      boolean upsert,
      int[] codes) {
    List<Shard> shards = shard(keys, i -> codes[i] == OK, i -> sources.get(i).byteSize(), "WRITE");
    List<CompletableFuture<Response>> calls = new ArrayList<>(shards.size());
    for (Shard shard : shards) {
      List<String> shardKeys = new ArrayList<>(shard.positions().length);
      List<MemorySegment> bodies = new ArrayList<>(shard.positions().length);
      for (int i : shard.positions()) {
        shardKeys.add(keys.get(i));
        bodies.add(sources.get(i));
      }
      byte[] meta = new StoreNodeProtocol.Write(upsert, replicate, shardKeys).encode();
      // Placed: through shared memory, each body goes straight where the node's engine keeps it.
      Request request = new Request(StoreNodeProtocol.WRITE.typeId(), meta, bodies, true);
      calls.add(call(shard.node(), request, BodyDestination.into(List.of())));
    }
    return collectCodes(shards, calls, codes, "WRITE reply");
  }

  // ---------------------------------------------------------------- reads

  @Override
  protected long[] batchGetIntoValidated(
      List<String> keys, List<MemorySegment> destinations, long[] results) {
    List<Shard> shards =
        shard(keys, i -> results[i] == OK, i -> destinations.get(i).byteSize(), "READ");
    List<CompletableFuture<Response>> calls = new ArrayList<>(shards.size());
    for (Shard shard : shards) {
      List<String> shardKeys = new ArrayList<>(shard.positions().length);
      List<MemorySegment> targets = new ArrayList<>(shard.positions().length);
      long[] capacities = new long[shard.positions().length];
      for (int j = 0; j < capacities.length; j++) {
        int i = shard.positions()[j];
        shardKeys.add(keys.get(i));
        targets.add(destinations.get(i));
        capacities[j] = destinations.get(i).byteSize();
      }
      calls.add(
          call(shard.node(), readRequest(shardKeys, capacities), BodyDestination.into(targets)));
    }
    Failures failures = new Failures();
    for (int s = 0; s < shards.size(); s++) {
      int[] positions = shards.get(s).positions();
      try (Response response = join(calls.get(s))) {
        long[] read = readResults(response, positions.length);
        for (int j = 0; j < positions.length; j++) {
          results[positions[j]] = read[j];
        }
      } catch (TqException e) {
        fill(results, positions, failures.code(e));
      }
    }
    failures.rethrow();
    return results;
  }

  private static Request readRequest(List<String> keys, long[] capacities) {
    byte[] meta = new StoreNodeProtocol.Read(keys, capacities).encode();
    return Request.of(StoreNodeProtocol.READ.typeId(), meta);
  }

  private static long[] readResults(Response response, int expected) {
    return StoreNodeProtocol.decodeResults(response, expected);
  }

  @Override
  protected List<NativeBuffer> getBatchValidated(List<String> keys, long[] codes) {
    int n = keys.size();
    NativeBuffer[] buffers = new NativeBuffer[n];
    // Sizes are unknown before the read: one key per request would be safe but slow; a reply of
    // several that exceeds the frame limit fails with the transport's typed error.
    List<Shard> shards = shard(keys, i -> codes[i] == OK, i -> 0, "READ");
    List<CompletableFuture<Response>> calls = new ArrayList<>(shards.size());
    for (Shard shard : shards) {
      List<String> shardKeys = new ArrayList<>();
      for (int i : shard.positions()) {
        shardKeys.add(keys.get(i));
      }
      long[] unbounded = new long[shardKeys.size()];
      Arrays.fill(unbounded, -1);
      calls.add(
          call(
              shard.node(),
              readRequest(shardKeys, unbounded),
              BodyDestination.allocateFrom(allocator)));
    }
    Failures failures = new Failures();
    for (int s = 0; s < shards.size(); s++) {
      int[] positions = shards.get(s).positions();
      try (Response response = join(calls.get(s))) {
        long[] read = readResults(response, positions.length);
        // Checked for the whole reply before any buffer is kept: a reply whose bodies disagree with
        // its sizes fails as a whole, and the response releases every body.
        for (int j = 0; j < positions.length; j++) {
          long body = response.buffers().get(j).lengthBytes();
          if (read[j] > 0 && body != read[j]) {
            throw new ProtocolException(
                ErrorCode.PROTOCOL_ERROR,
                "READ reply: key "
                    + keys.get(positions[j])
                    + " has size="
                    + read[j]
                    + " but its body has "
                    + body
                    + " bytes");
          }
        }
        for (int j = 0; j < positions.length; j++) {
          if (read[j] > 0) {
            buffers[positions[j]] = response.buffers().get(j).retain();
          }
        }
      } catch (TqException e) {
        // A node that failed gives null for its keys, as the engine does for missing objects;
        // a failure that retrying cannot mend is the caller's to see.
        failures.code(e);
      }
    }
    try {
      failures.rethrow();
    } catch (TqException e) {
      for (NativeBuffer buffer : buffers) {
        if (buffer != null) {
          buffer.close();
        }
      }
      throw e;
    }
    return Collections.unmodifiableList(Arrays.asList(buffers));
  }

  // ---------------------------------------------------------------- queries and removal

  @Override
  protected int[] batchIsExistValidated(List<String> keys, int[] codes) {
    return keyCodes(
        keys,
        codes,
        StoreNodeProtocol.EXIST,
        shardKeys -> new StoreNodeProtocol.Keys(shardKeys).encode());
  }

  @Override
  protected long getSizeValidated(String key) {
    byte[] meta = new StoreNodeProtocol.Keys(List.of(key)).encode();
    try (Response response =
        join(
            call(
                nodeOf(key),
                Request.of(StoreNodeProtocol.SIZE.typeId(), meta),
                BodyDestination.into(List.of())))) {
      long[] sizes = StoreNodeProtocol.decodeCodes(response.metadata(), "SIZE reply", 1);
      return sizes.length == 1 ? sizes[0] : RPC_FAIL;
    } catch (TqException e) {
      return failureCode(e);
    }
  }

  @Override
  protected int[] batchRemoveValidated(List<String> keys, boolean force, int[] codes) {
    return keyCodes(
        keys,
        codes,
        StoreNodeProtocol.REMOVE,
        shardKeys -> new StoreNodeProtocol.Remove(force, shardKeys).encode());
  }

  /** A per-key request without bodies (EXIST, REMOVE), sharded by key; refused keys stay. */
  private int[] keyCodes(
      List<String> keys,
      int[] codes,
      StoreNodeProtocol type,
      Function<List<String>, byte[]> request) {
    List<Shard> shards = shard(keys, i -> codes[i] == OK, i -> 0, "key request");
    List<CompletableFuture<Response>> calls = new ArrayList<>(shards.size());
    for (Shard shard : shards) {
      List<String> shardKeys = new ArrayList<>();
      for (int i : shard.positions()) {
        shardKeys.add(keys.get(i));
      }
      calls.add(
          call(
              shard.node(),
              Request.of(type.typeId(), request.apply(shardKeys)),
              BodyDestination.into(List.of())));
    }
    return collectCodes(shards, calls, codes, "reply of type " + type.typeId());
  }

  /**
   * Waits for every shard's reply and scatters its per-key codes into {@code codes} at the shard's
   * positions; a key a reply leaves out gets {@code RPC_FAIL}, every key of a failed shard the
   * shard's error code. Throws the first failure after all shards are collected.
   */
  private static int[] collectCodes(
      List<Shard> shards, List<CompletableFuture<Response>> calls, int[] codes, String what) {
    Failures failures = new Failures();
    for (int s = 0; s < shards.size(); s++) {
      int[] positions = shards.get(s).positions();
      try (Response response = join(calls.get(s))) {
        long[] results =
            StoreNodeProtocol.decodeCodes(response.metadata(), what, StoreNodeProtocol.MAX_KEYS);
        for (int j = 0; j < positions.length; j++) {
          codes[positions[j]] = j < results.length ? (int) results[j] : RPC_FAIL;
        }
      } catch (TqException e) {
        fill(codes, positions, failures.code(e));
      }
    }
    failures.rethrow();
    return codes;
  }

  @Override
  public long removeByRegex(String regex, boolean force) {
    Objects.requireNonNull(regex, "regex");
    return broadcastCount(
        StoreNodeProtocol.REMOVE_REGEX, new StoreNodeProtocol.RemoveRegex(force, regex).encode());
  }

  @Override
  public long removeAll(boolean force) {
    return broadcastCount(
        StoreNodeProtocol.REMOVE_ALL, new StoreNodeProtocol.RemoveAll(force).encode());
  }

  /** Sends a request to every node and sums the counts; a node's error code wins. */
  private long broadcastCount(StoreNodeProtocol type, byte[] meta) {
    if (!open()) {
      return INVALID;
    }
    List<CompletableFuture<Response>> calls = new ArrayList<>(nodes.size());
    for (int node = 0; node < nodes.size(); node++) {
      calls.add(call(node, Request.of(type.typeId(), meta), BodyDestination.into(List.of())));
    }
    long total = 0;
    long failure = 0;
    Failures failures = new Failures();
    for (CompletableFuture<Response> call : calls) {
      try (Response response = join(call)) {
        long count = CommonMessages.count(response.metadata(), "reply of type " + type.typeId());
        if (count < 0) {
          failure = count;
        } else {
          total += count;
        }
      } catch (TqException e) {
        failure = failures.code(e);
      }
    }
    failures.rethrow();
    return failure != 0 ? failure : total;
  }

  // ---------------------------------------------------------------- statistics

  /**
   * The nodes, in sharding order.
   *
   * @return the node addresses
   */
  public List<HostPort> nodes() {
    return nodes;
  }

  /**
   * What the node at {@code node} holds now, asked of that node ({@code STATS}); needs no {@link
   * #setup}, so a status tool can ask without joining the store.
   *
   * @param node the node's position in {@link #nodes()}
   * @return the node's objects, bytes used and capacity, and evictions so far
   * @throws TqException {@code INVALID_ARGUMENT} for a position out of range, {@code CLOSED} after
   *     {@link #closeStore}, or the node's or the transport's code ({@code CONNECTION_FAILED},
   *     {@code DEADLINE_EXCEEDED}, ...)
   */
  public StoreStatistics nodeStatistics(int node) {
    if (node < 0 || node >= nodes.size()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "store node " + node + " is not one of the " + nodes.size() + " nodes");
    }
    if (closed) {
      throw new TqException(ErrorCode.CLOSED, "the store client is closed");
    }
    byte[] meta = CommonMessages.noArguments();
    try (Response response =
        join(
            call(
                node,
                Request.of(StoreNodeProtocol.STATS.typeId(), meta),
                BodyDestination.into(List.of())))) {
      return StoreNodeProtocol.decodeStats(response.metadata());
    }
  }

  // ---------------------------------------------------------------- checkpoints

  /**
   * Makes every node save its objects to {@code directory/mooncake_store/node_<position>.ckpt} on
   * its own host, in parallel, then writes {@code store_node_info.json} here; so the directory must
   * be the same path for this process and every node (a shared filesystem, or one host).
   */
  @Override
  public void saveCheckpoint(Path directory, CheckpointDigests digests) {
    Path base = directory.resolve(ObjectStoreCheckpoints.CHECKPOINT_DIRECTORY);
    List<Path> files = new ArrayList<>();
    List<CompletableFuture<Response>> calls = new ArrayList<>();
    for (int p = 0; p < nodes.size(); p++) {
      Path file = base.resolve(ObjectStoreCheckpoints.nodeFileName(p));
      files.add(file);
      byte[] meta = new CheckpointMessages.Save(file.toString()).encode();
      calls.add(
          call(
              p,
              Request.of(StoreNodeProtocol.SAVE_CHECKPOINT.typeId(), meta),
              BodyDestination.into(List.of())));
    }
    TqException failure = null;
    for (int p = 0; p < nodes.size(); p++) {
      try {
        digests.record(files.get(p), CheckpointMessages.digest(join(calls.get(p))));
      } catch (TqException e) {
        TqException named =
            new StorageException(
                e.code(), "store node " + nodes.get(p) + " failed to save: " + e.getMessage(), e);
        if (failure == null) {
          failure = named;
        } else {
          failure.addSuppressed(named);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
    ObjectStoreCheckpoints.writeNodeManifest(base, nodes.stream().map(HostPort::toString).toList());
  }

  /**
   * Runs the first phase of a two-phase load on every node in parallel: each reads its file on its
   * host, verifies it in the same pass and stages its objects; if one fails, all discard and
   * nothing changed (see {@link DistributedCheckpointLoad}).
   */
  @Override
  public StorageManager.PreparedLoad prepareLoadCheckpoint(
      Path directory, CheckpointDigests digests) {
    Path base = directory.resolve(ObjectStoreCheckpoints.CHECKPOINT_DIRECTORY);
    ObjectStoreCheckpoints.readNodeManifest(base, nodes.size());
    List<DistributedCheckpointLoad.Participant> participants = new ArrayList<>();
    List<Path> files = new ArrayList<>();
    for (int p = 0; p < nodes.size(); p++) {
      int node = p;
      Path file = base.resolve(ObjectStoreCheckpoints.nodeFileName(p));
      files.add(file);
      participants.add(
          new DistributedCheckpointLoad.Participant(
              "store node " + p + " (" + nodes.get(p) + ", file " + file + ")",
              token ->
                  checkpointCall(
                      node,
                      StoreNodeProtocol.PREPARE_LOAD,
                      new CheckpointMessages.Prepare(token, file.toString(), digests.expected(file))
                          .encode()),
              token ->
                  checkpointCall(
                      node,
                      StoreNodeProtocol.COMMIT_LOAD,
                      new CheckpointMessages.Token(token).encode()),
              token ->
                  checkpointCall(
                      node,
                      StoreNodeProtocol.ABORT_LOAD,
                      new CheckpointMessages.Token(token).encode())));
    }
    DistributedCheckpointLoad load = DistributedCheckpointLoad.prepare(participants);
    for (Path file : files) {
      if (digests.expected(file) != null) {
        digests.verified(file);
      }
    }
    return load;
  }

  private CompletableFuture<Void> checkpointCall(int node, StoreNodeProtocol type, byte[] meta) {
    return call(node, Request.of(type.typeId(), meta), BodyDestination.into(List.of()))
        .thenAccept(Response::close);
  }

  // ---------------------------------------------------------------- plumbing

  /**
   * The keys of one node in a batch.
   *
   * @param node the node's position
   * @param positions the keys' positions in the batch
   */
  private record Shard(int node, int[] positions) {}

  /**
   * Groups the valid keys by node, in key order, and splits each node's keys into requests that fit
   * the transport's limits: at most {@code maxBodySegments} and {@link StoreNodeProtocol#MAX_KEYS}
   * keys, key metadata within {@code maxMetadataBytes}, bodies (of the request for a write, of the
   * reply for a read) within one frame.
   *
   * @param bodyBytes the body bytes of key {@code i} (0 when the request carries none and the reply
   *     size is unknown)
   * @param what the request's name, for the error message
   * @throws TqException with {@code FRAME_TOO_LONG} for one key whose body alone exceeds a frame,
   *     before anything is sent
   */
  private List<Shard> shard(
      List<String> keys, IntPredicate valid, IntToLongFunction bodyBytes, String what) {
    int[] counts = new int[nodes.size()];
    for (int i = 0; i < keys.size(); i++) {
      if (valid.test(i)) {
        counts[nodeOf(keys.get(i))]++;
      }
    }
    int[][] positions = new int[nodes.size()][];
    for (int node = 0; node < positions.length; node++) {
      positions[node] = new int[counts[node]];
    }
    int[] fill = new int[nodes.size()];
    for (int i = 0; i < keys.size(); i++) {
      if (valid.test(i)) {
        int node = nodeOf(keys.get(i));
        positions[node][fill[node]++] = i;
      }
    }
    long maxMetadata = limits.maxMetadataBytes() - FRAME_OVERHEAD;
    long maxBodies =
        Math.max(limits.maxFrameBytes() / 2, limits.maxFrameBytes() - limits.maxMetadataBytes())
            - FRAME_OVERHEAD;
    int maxKeys = Math.min(limits.maxBodySegments(), StoreNodeProtocol.MAX_KEYS);
    List<Shard> shards = new ArrayList<>();
    for (int node = 0; node < positions.length; node++) {
      int from = 0;
      long metadata = 0;
      long bodies = 0;
      int[] all = positions[node];
      for (int j = 0; j < all.length; j++) {
        long body = bodyBytes.applyAsLong(all[j]);
        if (body > maxBodies || body > limits.maxBodySegmentBytes()) {
          throw new TqException(
              ErrorCode.FRAME_TOO_LONG,
              what
                  + " of key '"
                  + keys.get(all[j])
                  + "': its object is "
                  + body
                  + " bytes, more than one frame to a store node carries (max frame length="
                  + limits.maxFrameBytes()
                  + ", network.max_frame_bytes)");
        }
        long keyBytes = 3L * keys.get(all[j]).length() + KEY_OVERHEAD;
        if (j > from
            && (j - from == maxKeys
                || metadata + keyBytes > maxMetadata
                || bodies + body > maxBodies)) {
          shards.add(new Shard(node, Arrays.copyOfRange(all, from, j)));
          from = j;
          metadata = 0;
          bodies = 0;
        }
        metadata += keyBytes;
        bodies += body;
      }
      if (all.length > from) {
        shards.add(new Shard(node, from == 0 ? all : Arrays.copyOfRange(all, from, all.length)));
      }
    }
    return shards;
  }

  private CompletableFuture<Response> call(int node, Request request, BodyDestination destination) {
    return exchange.call(nodes.get(node), request, destination, timeout);
  }

  private static Response join(CompletableFuture<Response> call) {
    try {
      return call.get();
    } catch (ExecutionException e) {
      throw RemoteCalls.storageError(e) instanceof TqException tq
          ? tq
          : new TqException(ErrorCode.INTERNAL, e.toString(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TqException(ErrorCode.CLOSED, "interrupted while waiting for a store node", e);
    }
  }

  /**
   * The per-key code of a request that failed as a whole: {@code RPC_TIMEOUT} when the node did not
   * answer by the deadline, {@code RPC_FAIL} when it could not be reached or the connection broke
   * (both worth a retry).
   *
   * @throws TqException {@code e} itself for any other failure (too long a frame, a refused token,
   *     a protocol violation, a closed client): retrying the same request cannot succeed
   */
  private static int failureCode(TqException e) {
    int code = transientCode(e);
    if (code == 0) {
      throw e;
    }
    return code;
  }

  /** {@code RPC_TIMEOUT} or {@code RPC_FAIL} for a failure worth retrying, else 0. */
  private static int transientCode(TqException e) {
    if (e instanceof DeadlineExceededException) {
      return RPC_TIMEOUT;
    }
    return e.code() == ErrorCode.CONNECTION_FAILED ? RPC_FAIL : 0;
  }

  /**
   * Collects the failures of the requests of one batch that retrying cannot mend, so that every
   * reply is still read and released before the first of them is thrown.
   */
  private static final class Failures {
    private TqException first;

    /** The per-key code of a failed request; remembers a failure that is not transient. */
    int code(TqException e) {
      int code = transientCode(e);
      if (code != 0) {
        return code;
      }
      if (first == null) {
        first = e;
      } else if (first != e) {
        first.addSuppressed(e);
      }
      return RPC_FAIL;
    }

    /** Throws the first remembered failure, if any. */
    void rethrow() {
      if (first != null) {
        throw first;
      }
    }
  }

  private static void fill(int[] codes, int[] positions, int code) {
    for (int i : positions) {
      codes[i] = code;
    }
  }

  private static void fill(long[] codes, int[] positions, long code) {
    for (int i : positions) {
      codes[i] = code;
    }
  }

  @Override
  public String toString() {
    return "RemoteObjectStore[nodes=" + nodes + "]";
  }
}
