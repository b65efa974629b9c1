package org.transferqueue.remote.storage;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.transferqueue.Clock;
import org.transferqueue.DistinctErrorLog;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.remote.DistributedCheckpointLoad;
import org.transferqueue.remote.RemoteCalls;
import org.transferqueue.storage.ClearResult;
import org.transferqueue.storage.PartitionGroup;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.ProductionUpdates;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.checkpoint.FileDigest;
import org.transferqueue.storage.simple.PutPlan;
import org.transferqueue.storage.simple.RoutingGroup;
import org.transferqueue.storage.simple.SimpleStorageCheckpoints;
import org.transferqueue.storage.simple.StorageUnitStats;
import org.transferqueue.storage.simple.UnitRouter;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.transport.BodyDestination;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * The SimpleStorage backend over remote storage units ({@link StorageUnitServer}s): routes sample
 * {@code gi} to unit {@code gi mod N}, in the order of the configured addresses, and runs put, get
 * and clear on the involved units in parallel.
 *
 * <p>A put runs in the same four steps as with embedded units, with the units holding their part
 * until the router decides:
 *
 * <pre>
 *  1. check     batch size = meta size, distinct indexes, dtypes agree with meta's schema
 *  2. put       per (partition, unit), in parallel: PUT held under a token the router chose
 *               (each unit atomic on its own)
 *  3. decide    a failed part: FINISH rollback on every part (a part whose reply was lost by its
 *               deadline is taken back too), rethrow the failure
 *  4. notify    per partition, in order; then FINISH keep (rollback for rejected partitions)
 * </pre>
 *
 * The manager itself notifies the controller, never the units. A failure in steps 1-3 leaves
 * nothing written; a notification rejected in step 4 fails the put with {@code
 * NOTIFICATION_FAILED}, and partitions accepted before it stay stored, as with embedded units.
 *
 * <p>One put, one deadline: a put ends within one call timeout ({@code
 * backend.SimpleStorage.send_recv_timeout}) of its start, plus the notification. Its PUTs have that
 * deadline; the FINISH decisions that follow wait only for what is left of it. A decision not
 * answered by then (a unit that stopped reading made the PUT use up the whole budget) goes on in
 * the background under its own call deadline, and the put returns (or throws its error) without
 * waiting for it; a background decision that fails is logged and counted ({@link
 * #failedDecisions()}), and a unit that receives a rollback before its PUT takes the put back when
 * it arrives ({@link StorageUnitServer}). A FINISH keep that fails does not fail the put: its cells
 * are stored and the controller was notified; the unit only keeps the cells the put replaced until
 * it closes.
 *
 * <p>A get whose metadata gives every field's dtype and shapes (regular and nested tensor fields,
 * as the controller reports them) allocates the result columns first and has each unit's reply read
 * straight into their rows ({@link ExpectedColumns}); otherwise, or when a unit's cells turn out to
 * differ from the metadata, the replies are read into buffers and each row is copied once into the
 * result, with the column-kind rules of the embedded units.
 *
 * <p>Errors of a unit ({@code CAPACITY_EXCEEDED}, {@code UNKNOWN_FIELD}, {@code NOT_FOUND}, ...)
 * arrive as {@link StorageException}s with the unit's code. Data parsers are not supported (the
 * default of {@link StorageManager}). Checkpoints are written by each unit on its own host. Owns
 * its transport client. Thread-safe; {@link #close()} must follow the last request.
 */
public final class RemoteSimpleStorageManager implements StorageManager {
  private final String id;
  private final TransportClient client;
  private final List<RemoteStorageUnit> units;
  private final ProductionNotifier notifier;
  private final BufferAllocator allocator;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicLong directReads = new AtomicLong();
  private final TransportConfig limits;
  private final Duration timeout;
  private final Clock nanoClock;
  private final DistinctErrorLog decisionErrors =
      new DistinctErrorLog(System.getLogger(RemoteSimpleStorageManager.class.getName()));

  /**
   * Creates the router; it connects to the units on first use.
   *
   * @param unitAddresses the units in routing order; at least one
   * @param config transport settings (token, limits, call deadline)
   * @param allocator where transport scratch memory and received reply bodies come from; not closed
   * @param notifier where production updates go
   * @throws StorageException with {@code INVALID_ARGUMENT} for an empty address list
   */
  public RemoteSimpleStorageManager(
      List<HostPort> unitAddresses,
      TransportConfig config,
      BufferAllocator allocator,
      ProductionNotifier notifier) {
    this(unitAddresses, config, allocator, notifier, Clock.SYSTEM);
  }

  /** As the public constructor, with the monotonic clock that puts measure their deadline by. */
  RemoteSimpleStorageManager(
      List<HostPort> unitAddresses,
      TransportConfig config,
      BufferAllocator allocator,
      ProductionNotifier notifier,
      Clock nanoClock) {
    Objects.requireNonNull(unitAddresses, "unitAddresses");
    Objects.requireNonNull(config, "config");
    if (unitAddresses.isEmpty()) {
      throw new StorageException(ErrorCode.INVALID_ARGUMENT, "no storage unit addresses");
    }
    this.allocator = Objects.requireNonNull(allocator, "allocator");
    this.notifier = Objects.requireNonNull(notifier, "notifier");
    this.id = "TQ_STORAGE_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    this.limits = config;
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    this.client = new TransportClient(config, allocator);
    this.timeout = config.defaultCallTimeout();
    this.units =
        unitAddresses.stream().map(a -> new RemoteStorageUnit(client, a, timeout)).toList();
  }

  @Override
  public String backendName() {
    return StorageManagerRegistry.SIMPLE_STORAGE;
  }

  /**
   * The manager's id, {@code TQ_STORAGE_} and 8 hex digits.
   *
   * @return the id
   */
  public String id() {
    return id;
  }

  /**
   * The units in routing order.
   *
   * @return the remote units
   */
  public List<RemoteStorageUnit> units() {
    return units;
  }

  /**
   * The statistics of every unit, in routing order.
   *
   * @return one snapshot per unit
   */
  public List<StorageUnitStats> unitStats() {
    ensureOpen();
    return units.stream().map(RemoteStorageUnit::stats).toList();
  }

  /**
   * The deadline of every call to a unit, which is also the budget of one put.
   *
   * @return the transport's call timeout
   */
  @Override
  public Optional<Duration> requestTimeout() {
    return Optional.of(timeout);
  }

  /**
   * The number of FINISH decisions that failed without failing their put: those that went on after
   * their put had returned (the unit did not answer within their own deadline, or the manager
   * closed first) and keeps; each distinct kind is also logged once.
   *
   * @return the count
   */
  public long failedDecisions() {
    return decisionErrors.errorCount();
  }

  @Override
  public PutResult put(Batch batch, BatchMeta meta) {
    ensureOpen();
    long deadlineNs = nanoClock.nanoTime() + timeout.toNanos();
    PutPlan plan = PutPlan.of(batch, meta);
    if (plan.isEmpty()) {
      return new PutResult(plan.schema(), List.of());
    }
    long[] gis = plan.globalIndexes();
    SortedMap<String, FieldSchema> schema = plan.schema();
    List<PartitionGroup> partitions = plan.partitions();
    List<Part> parts = plan(partitions, gis, batch);
    long[] generations = meta.generationArray();
    long[] tokens = new long[parts.size()];
    List<CompletableFuture<Void>> calls = new ArrayList<>(parts.size());
    for (int i = 0; i < parts.size(); i++) {
      tokens[i] = newToken();
      Part part = parts.get(i);
      long[] partGenerations = RoutingGroup.pick(generations, part.positions());
      calls.add(
          units
              .get(part.unit())
              .putAsync(
                  part.gis(), partGenerations, batch, part.positions(), tokens[i], allocator));
    }
    awaitPuts(parts, tokens, calls, deadlineNs);
    ProductionUpdates.publishAll(
        notifier,
        meta,
        partitions,
        schema,
        firstRejected -> {
          RuntimeException failure =
              awaitDecisions(
                  decide(parts, tokens, part -> part.partition() >= firstRejected),
                  deadlineNs,
                  "rollback of a rejected partition");
          if (failure != null) {
            throw failure;
          }
        });
    RuntimeException keep =
        awaitDecisions(decide(parts, tokens, part -> false), deadlineNs, "keep");
    if (keep != null) {
      // The cells are stored and notified: a keep that fails only leaves the put undecided.
      decisionErrors.onError(id + ": FINISH (keep) of a put", keep);
    }
    return new PutResult(schema, List.of());
  }

  private static long newToken() {
    long token;
    do {
      token = ThreadLocalRandom.current().nextLong();
    } while (token == 0);
    return token;
  }

  /**
   * Waits for every part (each ends by its call deadline); on any failure takes every part back
   * within what is left of the put's deadline, or in the background, and rethrows.
   */
  private void awaitPuts(
      List<Part> parts, long[] tokens, List<CompletableFuture<Void>> calls, long deadlineNs) {
    RuntimeException failure = RemoteCalls.joinAll(calls, (i, e) -> e);
    if (failure != null) {
      RuntimeException rollback =
          awaitDecisions(decide(parts, tokens, part -> true), deadlineNs, "rollback");
      if (rollback != null) {
        failure.addSuppressed(rollback);
      }
      throw failure;
    }
  }

  /**
   * Waits for FINISH calls until the put's deadline.
   *
   * @return the first failure (later ones suppressed) if every call ended by the deadline and one
   *     failed; null if all succeeded, or if some were still running at the deadline: those go on
   *     under their own call deadline and report a failure to the decision error log
   */
  private RuntimeException awaitDecisions(
      List<CompletableFuture<Void>> calls, long deadlineNs, String what) {
    CompletableFuture<Void> all =
        CompletableFuture.allOf(calls.toArray(CompletableFuture<?>[]::new));
    if (!decisionErrors.awaitWithin(
        all, deadlineNs - nanoClock.nanoTime(), id + ": FINISH (" + what + ") of a put")) {
      return null;
    }
    return RemoteCalls.joinAll(calls, (i, e) -> e);
  }

  /**
   * Sends one FINISH per unit and decision; parts matching {@code rollback} are taken back.
   *
   * @return the calls
   */
  private List<CompletableFuture<Void>> decide(
      List<Part> parts, long[] tokens, Predicate<Part> rollback) {
    List<CompletableFuture<Void>> calls = new ArrayList<>();
    for (int u = 0; u < units.size(); u++) {
      for (boolean back : new boolean[] {true, false}) {
        List<Long> chosen = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
          Part part = parts.get(i);
          if (part.unit() == u && tokens[i] != 0 && rollback.test(part) == back) {
            chosen.add(tokens[i]);
          }
        }
        if (!chosen.isEmpty()) {
          long[] ids = chosen.stream().mapToLong(Long::longValue).toArray();
          calls.add(units.get(u).finishAsync(ids, back));
        }
      }
    }
    return calls;
  }

  /**
   * Splits a put into parts per (partition group, unit), in partition order: one part each, or
   * several where one request would exceed the transport's limits ({@link RoutePieces}).
   */
  private List<Part> plan(List<PartitionGroup> partitions, long[] gis, Batch batch) {
    List<Part> parts = new ArrayList<>();
    for (int p = 0; p < partitions.size(); p++) {
      int[] rows = partitions.get(p).positions();
      for (RoutingGroup route : UnitRouter.route(gis, rows, units.size())) {
        for (RoutingGroup piece : RoutePieces.ofPut(route, batch, limits)) {
          parts.add(new Part(p, piece.unit(), piece.globalIndexes(), piece.positions()));
        }
      }
    }
    return parts;
  }

  /** The requests of a get: the routes, each split where one reply would exceed the limits. */
  private List<RoutingGroup> getRequests(BatchMeta meta, long[] gis, List<String> fields) {
    List<RoutingGroup> requests = new ArrayList<>();
    for (RoutingGroup route : UnitRouter.route(gis, units.size())) {
      requests.addAll(RoutePieces.ofGet(route, meta, fields, limits));
    }
    return requests;
  }

  @Override
  public Batch get(BatchMeta meta, BufferAllocator allocator) {
    ensureOpen();
    Objects.requireNonNull(allocator, "allocator");
    List<String> fields = meta.fieldNames();
    if (meta.isEmpty() || fields.isEmpty()) {
      return Batch.builder().rowCount(meta.size()).build();
    }
    long[] gis = meta.globalIndexArray();
    List<RoutingGroup> routes = getRequests(meta, gis, fields);
    Batch direct = getIntoExpected(meta, fields, routes, allocator);
    if (direct != null) {
      return direct;
    }
    long[] generations = meta.generationArray();
    List<CompletableFuture<UnitRows>> calls = new ArrayList<>(routes.size());
    for (RoutingGroup route : routes) {
      long[] routeGenerations = RoutingGroup.pick(generations, route.positions());
      calls.add(
          units
              .get(route.unit())
              .getAsync(route.globalIndexes(), routeGenerations, fields, this.allocator));
    }
    List<UnitRows> replies = new ArrayList<>(routes.size());
    RuntimeException failure = null;
    for (CompletableFuture<UnitRows> call : calls) {
      try {
        replies.add(RemoteCalls.join(call));
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    try {
      if (failure != null) {
        throw failure;
      }
      return assemble(fields, gis.length, routes, replies, allocator);
    } finally {
      replies.forEach(UnitRows::close);
    }
  }

  /**
   * The direct read: when the metadata gives every field's kind and shapes, the result is allocated
   * first and each unit's reply is read straight into its rows. Returns null (having freed what it
   * allocated) when the metadata does not say enough or a unit's cells differ from it, so that the
   * caller reads the general way.
   */
  private Batch getIntoExpected(
      BatchMeta meta, List<String> fields, List<RoutingGroup> routes, BufferAllocator allocator) {
    try (ExpectedColumns expected = ExpectedColumns.of(meta, allocator)) {
      if (expected == null) {
        return null;
      }
      long[] generations = meta.generationArray();
      List<CompletableFuture<UnitRows>> calls = new ArrayList<>(routes.size());
      for (RoutingGroup route : routes) {
        BodyDestination into = BodyDestination.into(expected.targets(route.positions()));
        long[] routeGenerations = RoutingGroup.pick(generations, route.positions());
        calls.add(
            units
                .get(route.unit())
                .getAsync(route.globalIndexes(), routeGenerations, fields, into));
      }
      boolean matches = true;
      RuntimeException failure = null;
      for (int r = 0; r < calls.size(); r++) {
        try (UnitRows reply = RemoteCalls.join(calls.get(r))) {
          matches &= expected.matches(reply, routes.get(r).positions());
        } catch (StorageException e) {
          if (e.code() == ErrorCode.SHAPE_MISMATCH) {
            matches = false; // a stored cell is larger than the metadata said
          } else if (failure == null) {
            failure = e;
          } else {
            failure.addSuppressed(e);
          }
        } catch (RuntimeException e) {
          if (failure == null) {
            failure = e;
          } else {
            failure.addSuppressed(e);
          }
        }
      }
      if (failure != null) {
        throw failure;
      }
      if (!matches) {
        return null;
      }
      directReads.incrementAndGet();
      return expected.toBatch();
    }
  }

  private static Batch assemble(
      List<String> fields,
      int rowCount,
      List<RoutingGroup> routes,
      List<UnitRows> replies,
      BufferAllocator allocator) {
    List<Column> built = new ArrayList<>(fields.size());
    try {
      Batch.Builder builder = Batch.builder().rowCount(rowCount);
      for (int f = 0; f < fields.size(); f++) {
        Column column =
            ColumnAssembler.assemble(fields.get(f), f, rowCount, routes, replies, allocator);
        built.add(column);
        builder.add(fields.get(f), column);
      }
      return builder.build();
    } catch (RuntimeException e) {
      built.forEach(Column::close);
      throw e;
    }
  }

  /** The number of gets read straight into columns allocated from the expected shapes. */
  long directReads() {
    return directReads.get();
  }

  @Override
  public ClearResult clear(BatchMeta meta) {
    ensureOpen();
    if (meta.isEmpty()) {
      return ClearResult.complete(0);
    }
    long[] gis = meta.globalIndexArray();
    List<RoutingGroup> routes = UnitRouter.route(gis, units.size());
    long[] generations = meta.generationArray();
    List<CompletableFuture<Long>> calls = new ArrayList<>(routes.size());
    for (RoutingGroup route : routes) {
      long[] routeGenerations = RoutingGroup.pick(generations, route.positions());
      calls.add(units.get(route.unit()).clearAsync(route.globalIndexes(), routeGenerations));
    }
    long cleared = 0;
    List<ClearResult.Failure> failures = new ArrayList<>();
    for (int i = 0; i < routes.size(); i++) {
      try {
        cleared += RemoteCalls.join(calls.get(i));
      } catch (RuntimeException e) {
        List<Long> failed = Arrays.stream(routes.get(i).globalIndexes()).boxed().toList();
        String unit = units.get(routes.get(i).unit()).address().toString();
        failures.add(new ClearResult.Failure(unit, failed, e.toString()));
      }
    }
    return new ClearResult(cleared, failures);
  }

  /**
   * Makes every unit save its cells to {@code directory/simple_storage/su_<position>_<unitId>.ckpt}
   * on its own host, in parallel, then writes {@code storage_unit_info.json} here: the layout of
   * embedded SimpleStorage, so the directory must be the same path for this process and every unit
   * (a shared filesystem). Puts and gets may continue; each unit's file is one instant of it. Each
   * unit computes its file's CRC32C while writing and returns it, so nobody reads the file back.
   *
   * @param directory the checkpoint directory as every host sees it
   * @param digests receives every unit file's digest
   * @throws StorageException with the code of the first unit that failed
   */
  @Override
  public void saveCheckpoint(Path directory, CheckpointDigests digests) {
    ensureOpen();
    Path base = directory.resolve(SimpleStorageCheckpoints.CHECKPOINT_DIRECTORY);
    List<String> ids = new ArrayList<>();
    List<Path> files = new ArrayList<>();
    List<CompletableFuture<FileDigest>> calls = new ArrayList<>();
    for (int u = 0; u < units.size(); u++) {
      String unitId = units.get(u).stats().unitId();
      ids.add(unitId);
      Path file = base.resolve(SimpleStorageCheckpoints.unitFileName(u, unitId));
      files.add(file);
      calls.add(units.get(u).saveCheckpointAsync(file.toString()));
    }
    for (int u = 0; u < units.size(); u++) {
      digests.record(files.get(u), RemoteCalls.join(calls.get(u)));
    }
    SimpleStorageCheckpoints.writeUnitManifest(base, ids);
  }

  /**
   * Checks the checkpoint's unit list against the running units, then runs the first phase of a
   * two-phase load on every unit in parallel: each unit reads its own file on its host, verifies it
   * against the manifest's size and CRC32C in the same pass and stages its cells, changing nothing.
   * If any unit fails, every unit discards what it staged and the first failure is thrown (nothing
   * changed anywhere). {@link PreparedLoad#commit()} makes every unit swap its staged cells in;
   * {@link PreparedLoad#close()} before that discards them.
   *
   * @param directory the directory given to {@link #saveCheckpoint}
   * @param digests the manifest's digests; the unit files are marked verified
   * @return the load, staged on every unit
   * @throws StorageException {@code NOT_FOUND} for a missing manifest or unit file, {@code
   *     INVALID_ARGUMENT} for another unit count, {@code CORRUPT_DATA} naming the unit and file
   */
  @Override
  public PreparedLoad prepareLoadCheckpoint(Path directory, CheckpointDigests digests) {
    ensureOpen();
    Path base = directory.resolve(SimpleStorageCheckpoints.CHECKPOINT_DIRECTORY);
    Map<Integer, String> saved = SimpleStorageCheckpoints.readUnitManifest(base, units.size());
    List<DistributedCheckpointLoad.Participant> participants = new ArrayList<>();
    for (Map.Entry<Integer, String> e : saved.entrySet()) {
      Path file = base.resolve(SimpleStorageCheckpoints.unitFileName(e.getKey(), e.getValue()));
      RemoteStorageUnit unit = units.get(e.getKey());
      FileDigest expected = digests.expected(file);
      participants.add(
          new DistributedCheckpointLoad.Participant(
              "storage unit " + e.getKey() + " (" + unit.address() + ", file " + file + ")",
              token -> unit.prepareLoadAsync(token, file.toString(), expected),
              unit::commitLoadAsync,
              unit::abortLoadAsync));
    }
    DistributedCheckpointLoad load = DistributedCheckpointLoad.prepare(participants);
    for (Map.Entry<Integer, String> e : saved.entrySet()) {
      Path file = base.resolve(SimpleStorageCheckpoints.unitFileName(e.getKey(), e.getValue()));
      if (digests.expected(file) != null) {
        digests.verified(file);
      }
    }
    return load;
  }

  /**
   * Closes the transport client (failing calls still in flight, background FINISH decisions
   * included, which are then counted in {@link #failedDecisions()}). Idempotent.
   */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      client.close();
    }
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new StorageException(ErrorCode.CLOSED, "storage manager " + id + " is closed");
    }
  }

  @Override
  public String toString() {
    return "RemoteSimpleStorageManager[id=" + id + ", units=" + units.size() + "]";
  }

  /**
   * The rows of one partition group routed to one unit.
   *
   * @param partition the index of the partition group
   * @param unit the unit's position
   * @param gis the rows' global indexes
   * @param positions the rows' batch positions, ascending
   */
  private record Part(int partition, int unit, long[] gis, int[] positions) {}
}
