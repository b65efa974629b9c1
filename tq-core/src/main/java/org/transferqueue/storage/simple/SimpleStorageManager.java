package org.transferqueue.storage.simple;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.SortedMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.transferqueue.Closeables;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.storage.ClearResult;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.storage.FieldSchemas;
import org.transferqueue.storage.PartitionGroup;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.ProductionUpdates;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerFactory;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;

/**
 * The SimpleStorage backend with embedded storage units: routes sample {@code gi} to unit {@code gi
 * mod N} and runs put, get and clear on the involved units in parallel.
 *
 * <p>A put runs in four steps:
 *
 * <pre>
 *  1. check     batch size = meta size, distinct indexes, dtypes agree with meta's schema
 *               (with a data parser: after step 2, on the schema of the parsed cells)
 *  2. stage     per (partition, unit), in parallel: copy the unit's rows into new cell blocks
 *  3. commit    per (partition, unit): publish the blocks under the unit's lock (capacity checked)
 *  4. notify    per partition, in order of first appearance
 * </pre>
 *
 * A failure in steps 1-3 leaves nothing written (committed parts are rolled back). A notification
 * rejected in step 4 fails the put with {@code NOTIFICATION_FAILED} and rolls back that partition
 * and the ones after it; partitions accepted before it stay stored (the error names them), so
 * storage and the controller always agree. Each sample's cells live on one unit, so a concurrent
 * get sees every sample either before or after a put, never half of it.
 *
 * <p>Tensor bytes are copied once per direction: from the caller's column into a cell block, and
 * from cell blocks into the result's memory. Object cells are kept as frozen Java values (see
 * {@link ObjectCells}). Thread-safe; {@link #close()} must follow the last request.
 */
public final class SimpleStorageManager implements StorageManager {
  private final String id;
  private final List<StorageUnit> units;
  private final ProductionNotifier notifier;
  private final DataParserRegistry parsers;
  private final UnitExecutor executor;
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * Creates the manager and its units.
   *
   * @param config unit count, capacity, limits and threads
   * @param allocator the allocator under which every unit gets its own child allocator; not closed
   *     by the manager
   * @param notifier where production updates go
   * @param parsers the data parsers the units may run
   */
  public SimpleStorageManager(
      SimpleStorageSettings config,
      BufferAllocator allocator,
      ProductionNotifier notifier,
      DataParserRegistry parsers) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(allocator, "allocator");
    this.notifier = Objects.requireNonNull(notifier, "notifier");
    this.parsers = Objects.requireNonNull(parsers, "parsers");
    this.id = "TQ_STORAGE_" + randomHex();
    List<StorageUnit> created = new ArrayList<>(config.unitCount());
    try {
      for (int i = 0; i < config.unitCount(); i++) {
        created.add(
            new StorageUnit(
                "TQ_STORAGE_UNIT_" + randomHex(),
                config.unitCapacity(),
                allocator,
                config.unitLimitBytes()));
      }
    } catch (RuntimeException e) {
      created.reversed().forEach(StorageUnit::close);
      throw e;
    }
    this.units = List.copyOf(created);
    this.executor = new UnitExecutor("tq-simple-storage", config.workerThreads());
  }

  /**
   * The factory registered as {@link StorageManagerRegistry#SIMPLE_STORAGE}: each manager it
   * creates has these settings and starts with an empty parser registry.
   *
   * @param settings unit count, capacity, limits and threads
   * @return the factory
   */
  public static StorageManagerFactory factory(SimpleStorageSettings settings) {
    Objects.requireNonNull(settings, "settings");
    return context -> create(context, settings);
  }

  /**
   * Creates a manager with an empty parser registry.
   *
   * @param context allocator and notifier
   * @param settings unit count, capacity, limits and threads
   * @return a manager the caller owns
   */
  public static SimpleStorageManager create(
      StorageContext context, SimpleStorageSettings settings) {
    return new SimpleStorageManager(
        settings, context.allocator(), context.notifier(), new DataParserRegistry());
  }

  private static String randomHex() {
    return HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
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
   * The units in routing order: sample {@code gi} lives on {@code units().get(gi mod N)}.
   *
   * @return the units, owned by this manager
   */
  public List<StorageUnit> units() {
    return units;
  }

  /**
   * The parsers puts may name; register more at any time.
   *
   * @return the registry
   */
  public DataParserRegistry parsers() {
    return parsers;
  }

  /**
   * The statistics of every unit, in routing order.
   *
   * @return one snapshot per unit
   */
  public List<StorageUnitStats> unitStats() {
    return units.stream().map(StorageUnit::stats).toList();
  }

  @Override
  public PutResult put(Batch batch, BatchMeta meta) {
    return store(batch, meta, null);
  }

  @Override
  public PutResult put(Batch batch, BatchMeta meta, DataParserReference parser) {
    return store(batch, meta, Objects.requireNonNull(parser, "parser"));
  }

  private PutResult store(Batch batch, BatchMeta meta, DataParserReference parser) {
    ensureOpen();
    PutPlan plan = parser == null ? PutPlan.of(batch, meta) : PutPlan.unparsed(batch, meta);
    if (plan.isEmpty()) {
      return new PutResult(plan.schema(), List.of());
    }
    SortedMap<String, FieldSchema> schema = plan.schema();
    if (parser != null) {
      parsers.resolve(parser.name());
    }
    List<PartitionGroup> partitions = plan.partitions();
    List<PutTask> tasks = planTasks(plan);
    for (PutTask task : tasks) {
      task.unit().checkCapacity(task.gis(), task.generations());
    }
    String[] fields = batch.fields().toArray(String[]::new);
    List<StagedPut> staged =
        executor.runAll(tasks, task -> stage(task, batch, fields, parser), StagedPut::close);
    if (parser != null) {
      try {
        List<int[]> positions = tasks.stream().map(PutTask::positions).toList();
        schema = ParsedSchema.of(fields, staged, positions, meta.size());
        FieldSchemas.requireCompatible(meta, schema);
      } catch (RuntimeException e) {
        staged.forEach(StagedPut::close);
        throw e;
      }
    }
    List<PutUndo> undos = commitAll(staged);
    try {
      ProductionUpdates.publishAll(
          notifier,
          meta,
          partitions,
          schema,
          firstRejected -> {
            for (int i = undos.size() - 1; i >= 0; i--) {
              if (staged.get(i).partition() >= firstRejected) {
                undos.get(i).rollback();
              }
            }
          });
    } finally {
      undos.forEach(PutUndo::close);
    }
    return new PutResult(schema, List.of());
  }

  /** Splits a put into one task per (partition group, unit), in partition order. */
  private List<PutTask> planTasks(PutPlan plan) {
    List<PutTask> tasks = new ArrayList<>();
    for (int p = 0; p < plan.partitions().size(); p++) {
      for (RoutingGroup group : plan.route(p, units.size())) {
        tasks.add(
            new PutTask(
                p,
                units.get(group.unit()),
                group.globalIndexes(),
                RoutingGroup.pick(plan.generations(), group.positions()),
                group.positions()));
      }
    }
    return tasks;
  }

  private StagedPut stage(PutTask task, Batch batch, String[] fields, DataParserReference parser) {
    if (parser == null) {
      return stageColumns(task, batch, fields, task.positions());
    }
    BufferAllocator allocator = task.unit().allocator();
    try (Batch rows = batch.selectRows(allocator, task.positions())) {
      Batch parsed = parsers.apply(parser, rows, allocator);
      try {
        int[] all = new int[task.gis().length];
        for (int j = 0; j < all.length; j++) {
          all[j] = j;
        }
        return stageColumns(task, parsed, fields, all);
      } finally {
        parsed.close();
      }
    }
  }

  private static StagedPut stageColumns(
      PutTask task, Batch batch, String[] fields, int[] positions) {
    CellBlock[] blocks = new CellBlock[fields.length];
    try {
      for (int f = 0; f < fields.length; f++) {
        Column column = batch.column(fields[f]);
        blocks[f] = CellBlock.copyOf(task.unit().allocator(), fields[f], column, positions);
      }
    } catch (RuntimeException e) {
      for (CellBlock block : blocks) {
        if (block != null) {
          block.release();
        }
      }
      throw e;
    }
    return new StagedPut(
        task.unit(), task.partition(), task.gis(), task.generations(), fields, blocks);
  }

  private static List<PutUndo> commitAll(List<StagedPut> staged) {
    List<PutUndo> undos = new ArrayList<>(staged.size());
    try {
      for (StagedPut part : staged) {
        undos.add(part.commit());
      }
    } catch (RuntimeException e) {
      for (int i = undos.size() - 1; i >= 0; i--) {
        undos.get(i).rollback();
      }
      staged.forEach(StagedPut::close);
      throw e;
    }
    return undos;
  }

  @Override
  public Batch get(BatchMeta meta, BufferAllocator allocator) {
    ensureOpen();
    Objects.requireNonNull(allocator, "allocator");
    List<String> fields = meta.fieldNames();
    if (meta.isEmpty() || fields.isEmpty()) {
      return Batch.builder().rowCount(meta.size()).build();
    }
    List<RoutingGroup> groups = UnitRouter.route(meta.globalIndexArray(), units.size());
    long[] generations = meta.generationArray();
    List<CellSnapshot> snapshots =
        executor.runAll(
            groups,
            g ->
                units
                    .get(g.unit())
                    .snapshot(
                        g.globalIndexes(), RoutingGroup.pick(generations, g.positions()), fields),
            CellSnapshot::close);
    try {
      return ColumnPacker.packBatch(
          fields,
          meta.size(),
          groups,
          snapshots,
          allocator,
          copies -> executor.runAll(copies, copy -> copy.getAsInt(), null));
    } finally {
      snapshots.forEach(CellSnapshot::close);
    }
  }

  @Override
  public ClearResult clear(BatchMeta meta) {
    ensureOpen();
    if (meta.isEmpty()) {
      return ClearResult.complete(0);
    }
    List<RoutingGroup> groups = UnitRouter.route(meta.globalIndexArray(), units.size());
    long[] generations = meta.generationArray();
    List<ClearResult> parts =
        executor.runAll(
            groups,
            g -> {
              StorageUnit unit = units.get(g.unit());
              try {
                long[] unitGenerations = RoutingGroup.pick(generations, g.positions());
                return ClearResult.complete(unit.clear(g.globalIndexes(), unitGenerations));
              } catch (RuntimeException e) {
                List<Long> gis = Arrays.stream(g.globalIndexes()).boxed().toList();
                return new ClearResult(
                    0, List.of(new ClearResult.Failure(unit.id(), gis, e.toString())));
              }
            },
            null);
    long cleared = 0;
    List<ClearResult.Failure> failures = new ArrayList<>();
    for (ClearResult part : parts) {
      cleared += part.clearedSamples();
      failures.addAll(part.failures());
    }
    return new ClearResult(cleared, failures);
  }

  /**
   * Saves every unit, in parallel, under {@code directory/simple_storage/}: one file {@code
   * su_<position>_<unitId>.ckpt} per unit, then the manifest {@code storage_unit_info.json} listing
   * positions and unit ids. Puts and gets may continue; each unit's file is one instant of it.
   *
   * @param directory the checkpoint directory, created if needed
   * @param digests receives each unit file's size and CRC32C, computed while writing
   * @throws StorageException with {@code STORAGE_ERROR} naming the unit and path that failed
   */
  @Override
  public void saveCheckpoint(Path directory, CheckpointDigests digests) {
    ensureOpen();
    SimpleStorageCheckpoints.save(directory, units, executor, digests);
  }

  /**
   * Replaces the state of every unit by a checkpoint saved with {@link #saveCheckpoint}: the file
   * of position {@code p} goes to the unit now at position {@code p}, whatever its id, so routing
   * by {@code gi mod N} stays valid. All files are read before any unit changes; on an error no
   * unit changes.
   *
   * @param directory the directory given to {@link #saveCheckpoint}
   * @throws StorageException with {@code NOT_FOUND} when the manifest is missing, {@code
   *     INVALID_ARGUMENT} when the unit count differs, {@code NOT_FOUND}, {@code CORRUPT_DATA} or
   *     {@code STORAGE_ERROR} naming the unit and file that failed
   */
  @Override
  public void loadCheckpoint(Path directory) {
    ensureOpen();
    SimpleStorageCheckpoints.load(directory, units, executor);
  }

  /**
   * Reads every unit file of a checkpoint into blocks of the units' allocators without changing any
   * unit; {@link PreparedLoad#commit()} then installs them all at once, as {@link #loadCheckpoint}
   * does.
   *
   * @param directory the directory given to {@link #saveCheckpoint}
   * @param digests the manifest's digests: each unit file is verified while it is read
   * @return the read contents; commit or close them
   * @throws StorageException as {@link #loadCheckpoint}; nothing changes then
   */
  @Override
  public PreparedLoad prepareLoadCheckpoint(Path directory, CheckpointDigests digests) {
    ensureOpen();
    return SimpleStorageCheckpoints.prepare(directory, units, executor, digests);
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    List<AutoCloseable> order = new ArrayList<>(units.size() + 1);
    order.add(executor);
    order.addAll(units.reversed());
    Closeables.closeAll(order);
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new StorageException(ErrorCode.CLOSED, "storage manager " + id + " is closed");
    }
  }

  @Override
  public String toString() {
    return "SimpleStorageManager[id=" + id + ", units=" + units.size() + "]";
  }

  /**
   * The rows of one partition group routed to one unit.
   *
   * @param partition the index of the partition group
   * @param unit the unit
   * @param gis the rows' global indexes
   * @param generations the rows' generations, aligned with {@code gis}
   * @param positions the rows' batch positions, ascending
   */
  private record PutTask(
      int partition, StorageUnit unit, long[] gis, long[] generations, int[] positions) {}
}
