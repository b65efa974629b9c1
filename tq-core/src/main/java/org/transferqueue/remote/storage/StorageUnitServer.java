package org.transferqueue.remote.storage;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.LongConsumer;
import org.transferqueue.Closeables;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.remote.CommonMessages;
import org.transferqueue.remote.StagedCheckpointLoads;
import org.transferqueue.remote.StorageHandlers;
import org.transferqueue.remote.Wire;
import org.transferqueue.storage.simple.CellColumn;
import org.transferqueue.storage.simple.HeldPut;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.storage.simple.UnitCells;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.ReceivedRequest;
import org.transferqueue.transport.Reply;
import org.transferqueue.transport.RequestBodyAllocator;
import org.transferqueue.transport.SharedMemoryStats;
import org.transferqueue.transport.TransportConfig;
import org.transferqueue.transport.TransportServer;

/**
 * Serves one {@link StorageUnit} over the transport: one handler per entry of {@link
 * StorageUnitProtocol} (put, get, clear, statistics, held-put decisions and checkpoints).
 *
 * <p>Data path: a put's row bodies are read from the socket straight into buffers of the unit's
 * allocator, which the unit keeps as its cells ({@link StorageUnit#putCells}; that read is the only
 * copy on this hop); a get's reply is written straight from the stored cells ({@link
 * StorageUnit#readCells}), which stay retained until the reply has been written. Same host (shared
 * memory, docs/PROTOCOL.md section 4.2): a put's rows that the client wrote back to back into a
 * granted region are kept there as the cells (no copy on the server; the unit accounts them), and a
 * get lends such cells to the client in place, the cells staying retained until the client releases
 * the lease. A malformed request gets a {@code PROTOCOL_ERROR} reply and changes nothing; unit
 * errors ({@code CAPACITY_EXCEEDED}, {@code UNKNOWN_FIELD}, ...) travel with their codes.
 *
 * <p>Held puts wait for a FINISH naming the token the router chose for them; a FINISH may come
 * before or without the put's own reply (for example after its deadline), and tokens it names that
 * are not held are ignored, except by a rollback: a rollback may overtake its PUT (a client that
 * gave up on a put by its deadline sends the rollback while the PUT still waits in this server's
 * socket, and the two are handled on their own threads), so the server remembers the last {@value
 * #MAX_EARLY_ROLLBACKS} tokens a rollback named before their put arrived and takes such a put back
 * as soon as it arrives. Those still undecided when the server closes are kept. The server does not
 * own the unit: close the server first, then the unit. Thread-safe.
 */
public final class StorageUnitServer implements AutoCloseable {
  /** How many tokens of rollbacks that overtook their puts the server remembers. */
  static final int MAX_EARLY_ROLLBACKS = 4096;

  private final StorageUnit unit;
  private final BufferAllocator replyAllocator;
  private final TransportServer server;
  private final Map<Long, HeldPut> held = new ConcurrentHashMap<>();
  // Guarded by decisions, as are the hold and decide steps on held: tokens a rollback named before
  // their put arrived, oldest first.
  private final Object decisions = new Object();
  private final LinkedHashSet<Long> rolledBackEarly = new LinkedHashSet<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final StagedCheckpointLoads checkpoints;

  private StorageUnitServer(
      StorageUnit unit,
      TransportConfig config,
      BufferAllocator allocator,
      StorageRequests requests) {
    this.unit = Objects.requireNonNull(unit, "unit");
    this.replyAllocator = Objects.requireNonNull(allocator, "allocator");
    Objects.requireNonNull(requests, "requests");
    this.checkpoints =
        new StagedCheckpointLoads(
            "storage unit " + unit.id(), unit::saveCheckpoint, unit::prepareLoadCheckpoint);
    TransportServer.Builder b =
        TransportServer.builder(config, allocator).name("storage-unit-server:" + unit.id());
    StorageHandlers.bind(
        b,
        StorageUnitProtocol.values(),
        this::handler,
        StorageUnitProtocol.PUT,
        this::placePut,
        requests);
    this.server = b.start();
  }

  /** What the server does with each message of {@link StorageUnitProtocol}. */
  private BiFunction<ReceivedRequest, LongConsumer, Reply> handler(StorageUnitProtocol type) {
    return switch (type) {
      case PUT -> this::onPut;
      case GET -> this::onGet;
      case CLEAR -> this::onClear;
      case STATS -> (r, n) -> onStats(r);
      case FINISH -> (r, n) -> onFinish(r);
      case SAVE_CHECKPOINT -> (r, n) -> checkpoints.onSave(r);
      case PREPARE_LOAD -> (r, n) -> checkpoints.onPrepare(r);
      case COMMIT_LOAD -> (r, n) -> checkpoints.onCommit(r);
      case ABORT_LOAD -> (r, n) -> checkpoints.onAbort(r);
    };
  }

  /**
   * Starts serving {@code unit} on {@code config}'s bind address.
   *
   * @param unit the unit to serve; not owned, must outlive the server
   * @param config bind address, token and limits
   * @param allocator the parent of the server's connection allocators (request bodies)
   * @return the running server; the caller closes it
   * @throws org.transferqueue.TqException with {@code CONNECTION_FAILED} if binding fails
   */
  public static StorageUnitServer start(
      StorageUnit unit, TransportConfig config, BufferAllocator allocator) {
    return new StorageUnitServer(unit, config, allocator, StorageRequests.NOOP);
  }

  /**
   * Starts serving {@code unit} and measures its PUT, GET and CLEAR requests ({@code op_type}
   * {@code PUT_DATA}, {@code GET_DATA}, {@code CLEAR_DATA}, samples = rows named).
   *
   * @param unit the unit to serve; not owned, must outlive the server
   * @param config bind address, token and limits
   * @param allocator the parent of the server's connection allocators (request bodies)
   * @param requests where requests are measured ({@link StorageRequests#NOOP} for none)
   * @return the running server; the caller closes it
   * @throws org.transferqueue.TqException with {@code CONNECTION_FAILED} if binding fails
   */
  public static StorageUnitServer start(
      StorageUnit unit,
      TransportConfig config,
      BufferAllocator allocator,
      StorageRequests requests) {
    return new StorageUnitServer(unit, config, allocator, requests);
  }

  /** The transport server, for protocol tests that call its handlers in-process. */
  TransportServer transport() {
    return server;
  }

  /**
   * The address the server listens on (the real port when the config asked for port 0).
   *
   * @return the address
   */
  public HostPort address() {
    return server.address();
  }

  /**
   * The unit served.
   *
   * @return the unit, not owned by the server
   */
  public StorageUnit unit() {
    return unit;
  }

  /**
   * The number of held puts not yet decided by a FINISH.
   *
   * @return the count
   */
  public int heldPuts() {
    return held.size();
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
   * Transport-level errors so far (malformed frames, failed writes).
   *
   * @return the count
   */
  public long errorCount() {
    return server.errorCount();
  }

  /**
   * Where a PUT's bodies are read into: the rows of each tensor field back to back in one buffer of
   * the unit's allocator, which the unit then keeps as the field's cell block (one copy on this
   * hop, from the socket); object frames one buffer each from the connection. A request whose
   * metadata does not parse gets the connection's buffers and {@link #onPut} reports it.
   */
  private RequestBodyAllocator.Placed placePut(
      byte[] metadata, long[] lengths, BufferAllocator connection) {
    List<int[]> groups = new ArrayList<>(); // [first body, count, 1 if tensor rows]
    try (Wire.Reader in = new Wire.Reader(metadata, "storage-unit PUT")) {
      if (in.array() != 4) {
        return null;
      }
      in.i64();
      in.longs(StorageUnitProtocol.MAX_ROWS);
      in.longs(StorageUnitProtocol.MAX_ROWS);
      int fieldCount = in.array(StorageUnitProtocol.MAX_FIELDS);
      int body = 0;
      for (int f = 0; f < fieldCount; f++) {
        if (in.array() != 4) {
          return null;
        }
        in.str();
        int kind = in.i32();
        int count;
        boolean tensor = kind != ColumnKind.OBJECT.ordinal();
        if (tensor) {
          in.str();
          count = in.array(StorageUnitProtocol.MAX_ROWS);
          for (int j = 0; j < count; j++) {
            in.longs(StorageUnitProtocol.MAX_RANK);
          }
        } else {
          in.i64();
          count = 1 + in.i32();
        }
        if (count < 0 || (long) body + count > lengths.length) {
          return null;
        }
        groups.add(new int[] {body, count, tensor ? 1 : 0});
        body += count;
      }
      if (body != lengths.length) {
        return null;
      }
    } catch (RuntimeException e) {
      // Malformed: onPut parses the same metadata again and answers with the error.
      return null;
    }
    MemorySegment[] segments = new MemorySegment[lengths.length];
    List<NativeBuffer> owned = new ArrayList<>();
    try {
      for (int[] group : groups) {
        if (group[2] == 1) {
          long total = 0;
          for (int i = group[0]; i < group[0] + group[1]; i++) {
            total += lengths[i];
          }
          NativeBuffer rows = unit.allocator().allocate(total);
          owned.add(rows);
          long offset = 0;
          for (int i = group[0]; i < group[0] + group[1]; i++) {
            segments[i] = rows.segment().asSlice(offset, lengths[i]);
            offset += lengths[i];
          }
        } else {
          for (int i = group[0]; i < group[0] + group[1]; i++) {
            NativeBuffer frame = connection.allocate(lengths[i]);
            owned.add(frame);
            segments[i] = frame.segment();
          }
        }
      }
    } catch (RuntimeException e) {
      owned.forEach(NativeBuffer::close);
      throw e;
    }
    return new RequestBodyAllocator.Placed(Arrays.asList(segments), owned);
  }

  private Reply onPut(ReceivedRequest request, LongConsumer samples) {
    List<NativeBuffer> kept = new ArrayList<>();
    try {
      return put(request, samples, kept);
    } finally {
      kept.forEach(NativeBuffer::close);
    }
  }

  /**
   * The buffer a tensor field's rows are kept in without a copy: for rows received into the unit's
   * allocator (placePut), that buffer; for rows a same-host client wrote back to back into a shared
   * region, a buffer of the unit's allocator over exactly those bytes, which holds the region until
   * the cells go (so the unit accounts them like its own, and a read lends them in place). Null
   * when the rows must be copied.
   *
   * @param kept collects the wrapping buffers this call creates, closed when the put is done
   */
  private NativeBuffer backingOf(
      ReceivedRequest request,
      Map<Long, NativeBuffer> byAddress,
      List<MemorySegment> rows,
      List<NativeBuffer> kept) {
    if (rows.isEmpty()) {
      return null;
    }
    if (!request.sharedBodies()) {
      return byAddress.get(rows.getFirst().address());
    }
    NativeBuffer region = request.bodyBuffers().getFirst();
    MemorySegment whole = region.segment();
    long start = rows.getFirst().address() - whole.address();
    long end = start;
    for (MemorySegment row : rows) {
      if (row.address() - whole.address() != end) {
        return null; // not back to back: the unit copies them into a block of its own
      }
      end += row.byteSize();
    }
    if (start < 0 || end > whole.byteSize() || end == start) {
      return null;
    }
    NativeBuffer hold = region.retain();
    try {
      NativeBuffer wrapped =
          unit.allocator().wrapForeign(whole.asSlice(start, end - start), end - start, hold::close);
      kept.add(wrapped);
      return wrapped;
    } catch (RuntimeException e) {
      hold.close();
      throw e;
    }
  }

  private Reply put(ReceivedRequest request, LongConsumer samples, List<NativeBuffer> kept) {
    List<CellColumn> columns = new ArrayList<>();
    // The buffers placePut allocated from the unit's allocator hold whole fields; the unit keeps
    // them instead of copying (CellBlock checks that the rows really lie in them).
    Map<Long, NativeBuffer> byAddress = new HashMap<>();
    for (NativeBuffer buffer : request.bodyBuffers()) {
      byAddress.put(buffer.segment().address(), buffer);
    }
    long token;
    long[] gis;
    long[] generations;
    try (Wire.Reader in = new Wire.Reader(request.metadata(), "storage-unit PUT")) {
      if (in.array() != 4) {
        throw in.malformed("expected [token, gis, generations, fields]");
      }
      token = in.i64();
      gis = in.longs(StorageUnitProtocol.MAX_ROWS);
      samples.accept(gis.length);
      generations = StorageUnitProtocol.readGenerations(in, gis);
      int fieldCount = in.array(StorageUnitProtocol.MAX_FIELDS);
      int body = 0;
      for (int f = 0; f < fieldCount; f++) {
        if (in.array() != 4) {
          throw in.malformed("field " + f + " is not [name, kind, a, b]");
        }
        String name = in.str();
        int kindOrdinal = in.i32();
        if (kindOrdinal < 0 || kindOrdinal >= ColumnKind.values().length) {
          throw in.malformed("field '" + name + "' has kind=" + kindOrdinal);
        }
        ColumnKind kind = ColumnKind.values()[kindOrdinal];
        if (kind == ColumnKind.OBJECT) {
          long mainBytes = in.i64();
          int auxCount = in.i32();
          if (auxCount < 0) {
            throw in.malformed("field '" + name + "' has auxCount=" + auxCount);
          }
          List<MemorySegment> frames = bodies(request, in, body, 1 + auxCount);
          body += frames.size();
          MemorySegment main = frames.getFirst();
          if (main.byteSize() != mainBytes) {
            throw in.malformed(
                "field '"
                    + name
                    + "' main frame is "
                    + main.byteSize()
                    + " bytes, not "
                    + mainBytes);
          }
          List<MemorySegment> aux = frames.subList(1, frames.size());
          List<Object> values = ValueDecoder.decodeColumn(main, aux, "field '" + name + "'");
          columns.add(CellColumn.objects(name, values));
        } else {
          DType dtype = DType.fromName(in.str());
          int rows = in.array(StorageUnitProtocol.MAX_ROWS);
          List<long[]> shapes = new ArrayList<>(rows);
          for (int j = 0; j < rows; j++) {
            shapes.add(in.longs(StorageUnitProtocol.MAX_RANK));
          }
          List<MemorySegment> segments = bodies(request, in, body, rows);
          body += rows;
          columns.add(
              CellColumn.tensors(
                  name,
                  kind,
                  dtype,
                  shapes,
                  segments,
                  backingOf(request, byAddress, segments, kept)));
        }
      }
      if (body != request.bodyCount()) {
        throw in.malformed("bodies=" + request.bodyCount() + " but the fields name " + body);
      }
    }
    HeldPut put = unit.putCells(gis, generations, columns);
    if (token == 0 || closed.get()) {
      put.close();
    } else {
      hold(token, put);
    }
    return Reply.of(StorageUnitProtocol.encodeHeld(token != 0));
  }

  /**
   * Holds a put under its token; takes it back at once when the token is in use or a rollback named
   * it before the put arrived.
   */
  private void hold(long token, HeldPut put) {
    String rejected;
    synchronized (decisions) {
      if (rolledBackEarly.remove(token)) {
        rejected = "held put token=" + token + " was rolled back before it arrived";
      } else if (held.putIfAbsent(token, put) != null) {
        rejected = "held put token=" + token + " is already in use";
      } else {
        return;
      }
    }
    put.rollback();
    throw new StorageException(ErrorCode.INVALID_ARGUMENT, rejected);
  }

  private static List<MemorySegment> bodies(
      ReceivedRequest request, Wire.Reader in, int from, int count) {
    if (count < 0 || (long) from + count > request.bodyCount()) {
      throw in.malformed(
          "bodies " + from + ".." + ((long) from + count) + " of " + request.bodyCount());
    }
    List<MemorySegment> out = new ArrayList<>(count);
    for (int i = from; i < from + count; i++) {
      out.add(request.body(i));
    }
    return out;
  }

  private Reply onGet(ReceivedRequest request, LongConsumer samples) {
    StorageUnitProtocol.Get get = StorageUnitProtocol.Get.decode(request.metadata(), samples);
    long[] gis = get.gis();
    long[] generations = get.generations();
    List<String> fields = get.fields();
    UnitCells cells = unit.readCells(gis, generations, fields);
    List<AutoCloseable> release = new ArrayList<>();
    release.add(cells);
    try {
      Wire.Writer out = new Wire.Writer().array(fields.size());
      List<MemorySegment> bodies = new ArrayList<>();
      for (int f = 0; f < fields.size(); f++) {
        writeField(cells, f, out, bodies, release);
      }
      return new Reply(out.toBytes(), bodies, release);
    } catch (RuntimeException e) {
      Closeables.closeAll(release);
      throw e;
    }
  }

  /**
   * Writes field {@code f} of {@code cells}: tensor rows as bodies straight from the cells; an
   * object column encoded into one native buffer (released with the reply), so that its bytes, long
   * strings above all, reach the socket without a heap array the channel would copy again.
   */
  private void writeField(
      UnitCells cells,
      int f,
      Wire.Writer out,
      List<MemorySegment> bodies,
      List<AutoCloseable> release) {
    int rows = cells.rowCount();
    int objects = 0;
    for (int j = 0; j < rows; j++) {
      if (cells.kind(f, j) == ColumnKind.OBJECT) {
        objects++;
      }
    }
    if (objects > 0 && objects < rows) {
      throw StorageUnitProtocol.conflict(cells.fields().get(f), "tensor and non-tensor cells");
    }
    if (rows > 0 && objects == rows) {
      List<Object> values = new ArrayList<>(rows);
      for (int j = 0; j < rows; j++) {
        values.add(cells.value(f, j));
      }
      EncodedValue encoded = ValueEncoder.encodeColumn(values);
      NativeBuffer frame = encoded.copyMainFrame(replyAllocator);
      release.add(frame);
      out.array(3).bool(true).i64(frame.lengthBytes()).i64(encoded.auxTensors().size());
      bodies.add(frame.segment());
      for (Tensor aux : encoded.auxTensors()) {
        bodies.add(aux.segment());
      }
      return;
    }
    out.array(2).bool(false).array(rows);
    for (int j = 0; j < rows; j++) {
      out.array(3)
          .i64(cells.kind(f, j).ordinal())
          .str(cells.dtype(f, j).torchName())
          .longs(cells.shape(f, j));
      bodies.add(cells.bytes(f, j));
    }
  }

  private Reply onClear(ReceivedRequest request, LongConsumer samples) {
    StorageUnitProtocol.Clear clear = StorageUnitProtocol.Clear.decode(request.metadata(), samples);
    int removed = unit.clear(clear.gis(), clear.generations());
    return Reply.of(CommonMessages.count(removed));
  }

  private Reply onStats(ReceivedRequest request) {
    CommonMessages.checkNoArguments(request.metadata(), "storage-unit STATS");
    return Reply.of(StorageUnitProtocol.encodeStats(unit.stats()));
  }

  private Reply onFinish(ReceivedRequest request) {
    StorageUnitProtocol.Finish finish = StorageUnitProtocol.Finish.decode(request.metadata());
    boolean rollback = finish.rollback();
    long[] tokens = finish.tokens();
    List<HeldPut> puts = new ArrayList<>(tokens.length);
    synchronized (decisions) {
      for (long token : tokens) {
        HeldPut put = held.remove(token);
        if (put != null) {
          puts.add(put);
        } else if (rollback && token != 0) {
          rememberEarlyRollback(token);
        }
      }
    }
    for (HeldPut put : puts) {
      if (rollback) {
        put.rollback();
      } else {
        put.close();
      }
    }
    return Reply.of(CommonMessages.count(puts.size()));
  }

  private void rememberEarlyRollback(long token) {
    rolledBackEarly.remove(token);
    rolledBackEarly.add(token);
    if (rolledBackEarly.size() > MAX_EARLY_ROLLBACKS) {
      Iterator<Long> oldest = rolledBackEarly.iterator();
      oldest.next();
      oldest.remove();
    }
  }

  /**
   * Stops serving (waiting for running requests), then keeps every undecided held put and discards
   * a staged checkpoint load.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      server.close();
    } finally {
      checkpoints.close();
      for (Long token : List.copyOf(held.keySet())) {
        HeldPut put = held.remove(token);
        if (put != null) {
          put.close();
        }
      }
    }
  }

  @Override
  public String toString() {
    return "StorageUnitServer[unit=" + unit.id() + ", address=" + server.address() + "]";
  }
}
