package org.transferqueue.controller;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.transferqueue.Clock;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.SamplerState;
import org.transferqueue.sampler.SamplingRequest;
import org.transferqueue.sampler.SequentialSampler;

/**
 * The in-process controller: the single authority over partitions, global indexes, production and
 * consumption status, field schemas, tags, keys and the sampler.
 *
 * <h2>Design note (concurrency)</h2>
 *
 * <p>All mutable state (the partitions and the index allocator in {@code ControllerTables}, the
 * sampler and its caches, the controller id) is guarded by one {@link ReentrantLock}; every public
 * operation runs entirely under it, so each operation is atomic and linearises at the moment it
 * takes the lock. Samplers run inside the critical section (see below). A blocking fetch that
 * cannot be served waits on a condition of that lock with its deadline: waiting releases the lock,
 * so notifications, queries, clears and other fetches proceed meanwhile. A fetch cannot be served
 * while fewer than its batch size of samples are ready, or while the sampler returns nothing from
 * what is ready (a {@code GrpoGroupNSampler} that finds no complete group). Production updates,
 * consumption resets, clears, restores and sampler replacement signal the condition; a waiting
 * fetch also wakes once per {@link ControllerOptions#checkInterval()}, for samplers whose answer
 * depends on time. A woken fetch re-scans (an O(1) size check of the maintained ready set, then the
 * sampler once enough samples are ready) and, at the deadline, checks once more before failing with
 * {@link DeadlineExceededException}.
 *
 * <p><b>The sampler runs under the lock.</b> {@code SamplingStep} calls the {@link Sampler} (the
 * configured one, or the token-budget sampler) with the controller's lock held, so that the ready
 * set it reads, the consumption it causes and the batch it produces are one atomic step. A user
 * sampler must therefore be quick and self-contained: it must not block (no I/O, no sleeps, no
 * waiting on other threads), must not call this controller or any client of it (the lock is
 * re-entrant, so a call from the sampler's thread would change the tables in the middle of the
 * fetch, and a call that waits on another thread that needs the lock deadlocks), and must not keep
 * the {@link SamplingRequest}'s lazy views after it returns. An exception it throws fails only that
 * fetch, wrapped as below, and consumes nothing.
 *
 * <p>Requests are validated before any state changes, so a rejected request leaves no trace: every
 * partition id, task name, field name and key argument must follow {@link Names} (non-empty, valid
 * Unicode; a partition id may be null only where null means "every partition"), else the request
 * fails with {@link ErrorCode#INVALID_ARGUMENT}, whether it came from this process or from a remote
 * client. Any failure reaches the caller as a {@link TqException}: unexpected runtime exceptions
 * (for example from a user sampler) are wrapped with {@link ErrorCode#INTERNAL} or {@link
 * ErrorCode#INVALID_ARGUMENT}, and the controller keeps serving.
 *
 * <p><b>Durability.</b> A controller opened with {@link #recover} journals every change: the
 * operation appends its record under the lock right after the change ({@code ChangeRecorder},
 * {@code ControllerRecords}), leaves the lock, and waits until the journal holds the record durably
 * before it returns; every operation, reads included, waits for the records appended before it left
 * the lock, so no reply shows a change that a crash could take back ({@code ControllerJournal}).
 * Without a journal nothing of this runs.
 *
 * <h2>Cost</h2>
 *
 * <p>A fetch costs O(batch x fields) plus the sampler's own work: ready sets per (task, field set)
 * are maintained incrementally by notifications, consumption, resets and clears, and the sampler
 * sees them as a lazy ascending list. A notification costs O(indexes x (fields + ready sets)).
 * Force fetch, status queries and statistics are O(partition).
 *
 * <pre>{@code
 * Controller controller = new Controller(ControllerOptions.defaults());
 * BatchMeta slots = controller.getMetadata(GetMetadataRequest.insert("train", fields, 32));
 * // ... storage stores the data, then notifies:
 * controller.updateProductionStatus(ProductionUpdate.of("train", slots.globalIndexes(), schema));
 * BatchMeta batch = controller.getMetadata(GetMetadataRequest.fetch("train", fields, "actor", 8));
 * }</pre>
 */
public final class Controller implements ControllerApi, AutoCloseable {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition stateChanged = lock.newCondition();
  private final ControllerOptions config;
  private final Clock clock;

  // Guarded by lock.
  private final ControllerTables tables;
  private final SamplingStep sampling;
  private Sampler sampler;
  private String controllerId;

  // Written by whoever starts the process's metrics endpoint, read by any request thread.
  private volatile String metricsEndpoint;

  // Runs the journaled table operations; holds the journal (none unless recover() attached one).
  private final ChangeRecorder changes;

  /**
   * Creates a controller with the system clock and the sequential sampler.
   *
   * @param config the settings
   */
  public Controller(ControllerOptions config) {
    this(config, new SequentialSampler(), Clock.SYSTEM);
  }

  /**
   * Creates a controller.
   *
   * @param config the settings
   * @param sampler the sampler; the controller calls it under its lock (see the design note for
   *     what it may not do)
   * @param clock the time source
   */
  public Controller(ControllerOptions config, Sampler sampler, Clock clock) {
    this.config = Objects.requireNonNull(config, "config");
    this.sampler = Objects.requireNonNull(sampler, "sampler");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.tables = new ControllerTables(config, clock);
    this.sampling = new SamplingStep(tables);
    this.changes = new ChangeRecorder(tables, config);
    this.controllerId =
        "TQ_CONTROLLER_" + String.format("%08x", ThreadLocalRandom.current().nextInt());
  }

  /**
   * Opens a durable controller: restores the newest checkpoint in {@code journal.directory()},
   * replays the journal after it, and from then on journals every change before it acknowledges it
   * (docs/RELIABILITY.md, 5.7). A directory without a journal starts an empty controller. Close the
   * controller to take a last checkpoint and release the directory.
   *
   * @param config the settings
   * @param sampler the sampler; it must be the one the journal was written with for its cached
   *     results to be recovered
   * @param clock the time source
   * @param journal the journal's settings; its directory is the controller's own ({@code
   *     <durability.journal_dir>/controller})
   * @return the recovered controller; the caller closes it
   * @throws TqException {@code CORRUPT_DATA} naming the file and record when the checkpoint or the
   *     journal is damaged (nothing is served then), {@code ILLEGAL_STATE} when another process
   *     holds the directory, {@code INVALID_CONFIGURATION} for a checkpoint of another sampler
   */
  public static Controller recover(
      ControllerOptions config, Sampler sampler, Clock clock, JournalSettings journal) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(sampler, "sampler");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(journal, "journal");
    return ControllerJournal.recover(config, sampler, clock, journal);
  }

  /**
   * Whether this controller journals its changes ({@link #recover}).
   *
   * @return true for a durable controller
   */
  public boolean durable() {
    return changes.journal() != null;
  }

  /**
   * Takes a checkpoint of a durable controller now and truncates the journal it covers; writers go
   * on meanwhile. A controller without a journal does nothing.
   *
   * @return the LSN the checkpoint covers, or -1 without a journal
   */
  public long checkpoint() {
    ControllerJournal j = changes.journal();
    return j == null ? -1 : j.checkpoint(this);
  }

  /**
   * Closes a durable controller: takes a last checkpoint and releases the journal directory. Every
   * later request fails with {@code ILLEGAL_STATE}. A controller without a journal has nothing to
   * close. Idempotent.
   */
  @Override
  public void close() {
    ControllerJournal j = changes.journal();
    if (j != null) {
      j.close(this);
    }
  }

  /** Releases the journal without a last checkpoint, as a killed process leaves it (tests). */
  void abandon() {
    ControllerJournal j = changes.journal();
    if (j != null) {
      j.close();
    }
  }

  /** The bytes of the journal's segment files, 0 without a journal (tests, diagnostics). */
  long journalBytes() {
    ControllerJournal j = changes.journal();
    return j == null ? 0 : j.diskBytes();
  }

  /**
   * The settings this controller runs with.
   *
   * @return the configuration
   */
  public ControllerOptions config() {
    return config;
  }

  @Override
  public String controllerId() {
    return locked(() -> controllerId);
  }

  // ---- partitions ---------------------------------------------------------------------------

  @Override
  public boolean createPartition(String partitionId) {
    Names.checkPartitionId(partitionId);
    return locked(() -> changes.createPartition(partitionId));
  }

  @Override
  public List<String> listPartitions() {
    return locked(tables::partitionIds);
  }

  @Override
  public IndexSet getPartitionIndexRange(String partitionId) {
    Names.checkPartitionId(partitionId);
    return locked(() -> tables.indexesOf(partitionId));
  }

  /**
   * A deep copy of one partition's state.
   *
   * @param partitionId the partition
   * @return the state, or empty if unknown
   */
  public Optional<PartitionState> partitionSnapshot(String partitionId) {
    return locked(() -> tables.partitionSnapshot(partitionId));
  }

  // ---- production ---------------------------------------------------------------------------

  @Override
  public void updateProductionStatus(ProductionUpdate update) {
    Objects.requireNonNull(update, "update");
    Names.checkPartitionId(update.partitionId());
    update.fields().keySet().forEach(Names::checkFieldName);
    ControllerRecords.Entry entry = journaling() ? ControllerRecords.production(update) : null;
    locked(
        () -> {
          tables.updateProduction(update);
          changes.record(entry);
          stateChanged.signalAll();
          return null;
        });
  }

  @Override
  public void checkPut(
      String partitionId, Map<String, FieldSchema> fields, long[] indexes, long[] generations) {
    Names.checkPartitionId(partitionId);
    Objects.requireNonNull(fields, "fields");
    Names.checkFieldNames(fields.keySet());
    if (indexes.length != generations.length) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          generations.length + " generations for " + indexes.length + " global indexes");
    }
    locked(
        () -> {
          tables.checkPut(partitionId, fields, indexes, generations);
          return null;
        });
  }

  @Override
  public Optional<ProductionStatus> getProductionStatus(String partitionId, List<String> fields) {
    Names.checkPartitionId(partitionId);
    Objects.requireNonNull(fields, "fields");
    Names.checkFieldNames(fields);
    return locked(() -> tables.productionStatus(partitionId, fields));
  }

  @Override
  public IndexSet scanReady(String partitionId, List<String> fields, String taskName) {
    if (fields == null || fields.isEmpty() || taskName == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "scan needs fields and a task: fields=" + fields + " task=" + taskName);
    }
    Names.checkPartitionId(partitionId);
    Names.checkFieldNames(fields);
    Names.checkTaskName(taskName);
    return locked(() -> changes.scanReady(partitionId, fields, taskName));
  }

  // ---- consumption --------------------------------------------------------------------------

  @Override
  public Optional<ConsumptionStatus> getConsumptionStatus(String partitionId, String taskName) {
    Names.checkPartitionId(partitionId);
    Names.checkTaskName(taskName);
    return locked(() -> changes.consumptionStatus(partitionId, taskName));
  }

  @Override
  public boolean resetConsumption(String partitionId, String taskName) {
    Names.checkPartitionId(partitionId);
    if (taskName != null) {
      Names.checkTaskName(taskName);
    }
    return locked(
        () -> {
          boolean reset = changes.resetConsumption(partitionId, taskName);
          stateChanged.signalAll();
          return reset;
        });
  }

  // ---- getMetadata --------------------------------------------------------------------------

  @Override
  public BatchMeta getMetadata(GetMetadataRequest request) {
    Objects.requireNonNull(request, "request");
    return switch (request.mode()) {
      case INSERT -> locked(() -> changes.insert(request));
      case FORCE_FETCH ->
          locked(() -> tables.forceFetch(request.partitionId(), request.fields(), false));
      case FETCH -> {
        SamplingStep.Outcome outcome = serve(request);
        if (outcome.meta() != null) {
          yield outcome.meta();
        }
        if (config.pollingMode()) {
          yield BatchMeta.empty();
        }
        throw notReady(request, outcome);
      }
    };
  }

  /**
   * {@inheritDoc}
   *
   * <p>A blocking fetch waits as {@link #getMetadata} does and answers empty at its deadline
   * instead of failing; no exception is made on the way.
   */
  @Override
  public Optional<BatchMeta> tryGetMetadata(GetMetadataRequest request) {
    Objects.requireNonNull(request, "request");
    return switch (request.mode()) {
      case INSERT -> Optional.of(locked(() -> changes.insert(request)));
      case FORCE_FETCH ->
          locked(() -> tables.forceFetchIfPresent(request.partitionId(), request.fields()));
      case FETCH -> Optional.ofNullable(serve(request).meta());
    };
  }

  @Override
  public Optional<BatchMeta> getPartitionMeta(String partitionId) {
    Names.checkPartitionId(partitionId);
    return locked(() -> tables.partitionMeta(partitionId));
  }

  @Override
  public BatchMeta getSampleMeta(String partitionId, List<Long> indexes, List<String> fields) {
    if (indexes == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "indexes must not be null: partition_id=" + partitionId);
    }
    return locked(() -> tables.sampleMeta(partitionId, indexes, fields));
  }

  /**
   * Serves a fetch: one {@link SamplingStep} attempt, then, in blocking mode, one more after every
   * state change (or check interval) until the deadline.
   *
   * @return the outcome with a batch, or the last attempt's outcome when none could be served (at
   *     once in polling mode, at the deadline in blocking mode)
   */
  private SamplingStep.Outcome serve(GetMetadataRequest request) {
    long timeoutNs = timeoutNanos(request);
    List<String> sortedFields = Partition.sortedFields(request.fields());
    long checkIntervalNs = config.checkInterval().toNanos();
    ControllerJournal j = changes.journal();
    CompletableFuture<Long> durable = null;
    SamplingStep.Outcome outcome;
    if (j != null) {
      j.makeRoom(this);
    }
    lock.lock();
    try {
      if (j != null) {
        j.requireHealthy();
      }
      long deadline = clock.nanoTime() + timeoutNs;
      while (true) {
        outcome = changes.attempt(sampling, request, sortedFields, sampler);
        if (outcome.meta() != null || config.pollingMode()) {
          break;
        }
        long remaining = deadline - clock.nanoTime();
        if (remaining <= 0) {
          break;
        }
        // Woken by every state change; the check interval bounds the sleep for samplers whose
        // answer changes with time although nothing in the controller does.
        stateChanged.awaitNanos(Math.min(remaining, checkIntervalNs));
      }
      if (j != null) {
        durable = j.last();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TqException(
          ErrorCode.ILLEGAL_STATE, "interrupted while waiting for data: " + request, e);
    } catch (TqException e) {
      throw e;
    } catch (RuntimeException e) {
      throw wrap(e);
    } finally {
      lock.unlock();
    }
    if (durable != null) {
      j.await(durable, this);
    }
    return outcome;
  }

  /** Whether this controller journals (the journal is attached before it serves). */
  private boolean journaling() {
    return changes.journal() != null;
  }

  private long timeoutNanos(GetMetadataRequest request) {
    return (request.timeout() != null ? request.timeout() : config.fetchTimeout()).toNanos();
  }

  /** The error of a blocking fetch that found no batch by its deadline. */
  private DeadlineExceededException notReady(
      GetMetadataRequest request, SamplingStep.Outcome outcome) {
    String samplerName = locked(() -> SamplingStep.samplerFor(request, sampler).name());
    return new DeadlineExceededException(
        "Timeout while waiting for sufficient data: partition="
            + request.partitionId()
            + " task="
            + request.taskName()
            + " fields="
            + request.fields()
            + " after "
            + Duration.ofNanos(timeoutNanos(request))
            + ". Required: "
            + (request.tokenBudget() != null
                ? "token_budget=" + request.tokenBudget()
                : request.batchSize())
            + ", Available: "
            + outcome.available()
            + (outcome.declined()
                ? " (the sampler " + samplerName + " served no batch from them)"
                : ""));
  }

  // ---- tags ---------------------------------------------------------------------------------

  @Override
  public int setTags(TagUpdate update) {
    Objects.requireNonNull(update, "update");
    ControllerRecords.Entry entry = journaling() ? ControllerRecords.tags(update) : null;
    return locked(
        () -> {
          int written = tables.setTags(update);
          if (written > 0) {
            changes.record(entry);
          }
          return written;
        });
  }

  @Override
  public Map<Long, Map<String, Object>> getTags(String partitionId, List<Long> indexes) {
    requireIndexes(partitionId, indexes);
    return locked(() -> tables.tags(partitionId, indexes));
  }

  @Override
  public Map<Long, Map<String, Object>> getBackendMeta(
      String partitionId, List<Long> indexes, List<String> fields) {
    if (fields != null) {
      Names.checkFieldNames(fields);
    }
    requireIndexes(partitionId, indexes);
    return locked(() -> tables.backendMeta(partitionId, indexes, fields));
  }

  /** Checked before the lock: a null argument is the caller's error, not a broken invariant. */
  private static void requireIndexes(String partitionId, List<Long> indexes) {
    Names.checkPartitionId(partitionId);
    if (indexes == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "indexes must not be null: partition_id=" + partitionId);
    }
  }

  // ---- clearing -----------------------------------------------------------------------------

  @Override
  public boolean clearPartition(String partitionId) {
    Names.checkPartitionId(partitionId);
    return locked(
        () -> {
          if (!changes.clearPartition(partitionId)) {
            return false;
          }
          sampler.clearCache(partitionId);
          stateChanged.signalAll();
          return true;
        });
  }

  @Override
  public int markClearing(ClearSamplesRequest request) {
    Objects.requireNonNull(request, "request");
    ControllerRecords.Entry entry =
        journaling() ? ControllerRecords.clear(ControllerRecords.MARK_CLEARING, request) : null;
    return locked(
        () -> {
          int marked = tables.markClearing(request);
          if (marked > 0) {
            changes.record(entry);
          }
          return marked;
        });
  }

  @Override
  public int clearSamples(ClearSamplesRequest request) {
    Objects.requireNonNull(request, "request");
    ControllerRecords.Entry entry =
        journaling() ? ControllerRecords.clear(ControllerRecords.CLEAR_SAMPLES, request) : null;
    return locked(
        () -> {
          int cleared = tables.clearSamples(request);
          if (cleared > 0) {
            changes.record(entry);
            stateChanged.signalAll();
          }
          return cleared;
        });
  }

  // ---- keys ---------------------------------------------------------------------------------

  @Override
  public BatchMeta resolveKeys(String partitionId, List<String> keys, boolean create) {
    ResolveKeysRequest request = new ResolveKeysRequest(partitionId, keys);
    if (!create) {
      return locked(() -> tables.resolveKeys(request.partitionId(), request.keys(), false));
    }
    return locked(() -> changes.resolveKeysCreating(request));
  }

  @Override
  public KeyResolution resolveKeysForPut(
      String partitionId, List<String> keys, Map<String, FieldSchema> fields, int sampleCount) {
    Objects.requireNonNull(fields, "fields");
    ResolveKeysRequest request = new ResolveKeysRequest(partitionId, keys);
    Names.checkFieldNames(fields.keySet());
    return locked(() -> changes.resolveKeysForPut(request, fields, sampleCount));
  }

  @Override
  public List<String> resolveIndexes(String partitionId, List<Long> indexes) {
    Names.checkPartitionId(partitionId);
    if (indexes == null || indexes.isEmpty()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "global indexes must be a non-empty list: " + indexes);
    }
    return locked(() -> tables.resolveIndexes(partitionId, indexes));
  }

  @Override
  public KvListing listKeys(String partitionId) {
    if (partitionId != null) {
      Names.checkPartitionId(partitionId);
    }
    return locked(() -> tables.listKeys(partitionId));
  }

  // ---- statistics, sampler, checkpoint -------------------------------------------------------

  @Override
  public Optional<PartitionStatistics> partitionStatistics(String partitionId) {
    Names.checkPartitionId(partitionId);
    return locked(() -> tables.partitionStatistics(partitionId));
  }

  @Override
  public ControllerStatistics statistics() {
    return locked(tables::statistics);
  }

  /**
   * Replaces the sampler; the old sampler's cache is discarded and waiting fetches re-check.
   *
   * @param newSampler the sampler; the controller calls it under its lock (see the design note for
   *     what it may not do)
   */
  public void registerSampler(Sampler newSampler) {
    Objects.requireNonNull(newSampler, "sampler");
    locked(
        () -> {
          sampler = newSampler;
          stateChanged.signalAll();
          return null;
        });
  }

  @Override
  public ControllerState snapshotState() {
    return locked(this::stateUnderLock);
  }

  private ControllerState stateUnderLock() {
    return new ControllerState(
        controllerId,
        tables.snapshotPartitions(),
        tables.allocatorSnapshot(),
        sampler.name(),
        sampler.saveState());
  }

  /**
   * A checkpoint's cut: the state and the future of the last record it includes, taken under one
   * lock.
   *
   * @param state the state
   * @param lsn completes with the LSN of the last record the state includes once it is durable
   */
  record Cut(ControllerState state, CompletableFuture<Long> lsn) {}

  /** Takes a checkpoint's cut (a journaling controller only). */
  Cut cut() {
    lock.lock();
    try {
      return new Cut(stateUnderLock(), changes.journal().last());
    } finally {
      lock.unlock();
    }
  }

  /** The replay of journal records into this controller, before it serves. */
  ControllerReplay replay() {
    return new ControllerReplay(
        tables,
        sampling,
        sampler,
        id -> {
          lock.lock();
          try {
            controllerId = id;
          } finally {
            lock.unlock();
          }
        },
        this::restoreState);
  }

  /**
   * Starts journaling into a recovered journal; a new journal first records the controller's id.
   */
  void attach(ControllerJournal recovered, boolean fresh) {
    lock.lock();
    try {
      changes.attach(recovered);
      if (fresh) {
        recovered.append(ControllerRecords.identity(controllerId, sampler.name()));
      }
    } finally {
      lock.unlock();
    }
    if (fresh) {
      recovered.await(recovered.last(), this);
    }
  }

  @Override
  public void restoreState(ControllerState state) {
    Objects.requireNonNull(state, "state");
    ControllerRecords.Entry entry = journaling() ? ControllerRecords.restore(state) : null;
    locked(
        () -> {
          if (!sampler.name().equals(state.samplerType())) {
            throw new TqException(
                ErrorCode.INVALID_CONFIGURATION,
                "checkpoint of sampler '"
                    + state.samplerType()
                    + "' cannot be loaded into '"
                    + sampler.name()
                    + "'");
          }
          if (state.samplerState() instanceof SamplerState samplerState) {
            sampler.loadState(samplerState);
          }
          tables.restore(state.partitions(), state.allocator());
          controllerId = state.controllerId();
          changes.record(entry);
          stateChanged.signalAll();
          return null;
        });
  }

  /**
   * Records where this controller's process serves its Prometheus endpoint; {@link
   * #metricsEndpoint()} answers it to every client from then on.
   *
   * @param address {@code host:port} that other processes can reach, or null when the endpoint
   *     stopped
   */
  public void publishMetricsEndpoint(String address) {
    this.metricsEndpoint = address;
  }

  @Override
  public Optional<String> metricsEndpoint() {
    return Optional.ofNullable(metricsEndpoint);
  }

  // ---- plumbing -----------------------------------------------------------------------------

  /**
   * Runs an operation under the lock; with a journal, then waits outside the lock until every
   * record appended up to the operation's end is durable, so its reply never shows a change that a
   * crash could take back.
   */
  private <T> T locked(Supplier<T> body) {
    ControllerJournal j = changes.journal();
    CompletableFuture<Long> durable = null;
    T result;
    if (j != null) {
      j.makeRoom(this);
    }
    lock.lock();
    try {
      if (j != null) {
        j.requireHealthy();
      }
      result = body.get();
      if (j != null) {
        durable = j.last();
      }
    } catch (TqException e) {
      throw e;
    } catch (RuntimeException e) {
      throw wrap(e);
    } finally {
      lock.unlock();
    }
    if (durable != null) {
      j.await(durable, this);
    }
    return result;
  }

  private static TqException wrap(RuntimeException e) {
    ErrorCode code =
        e instanceof IllegalArgumentException ? ErrorCode.INVALID_ARGUMENT : ErrorCode.INTERNAL;
    return new TqException(code, e.getClass().getSimpleName() + ": " + e.getMessage(), e);
  }

  /** The number of fetches currently waiting for data (for tests and diagnostics). */
  int waitingFetches() {
    lock.lock();
    try {
      return lock.getWaitQueueLength(stateChanged);
    } finally {
      lock.unlock();
    }
  }

  /** Runs invariant checks over the whole state (tests only); throws AssertionError on failure. */
  void checkInvariants() {
    locked(
        () -> {
          tables.checkInvariants();
          return null;
        });
  }
}
