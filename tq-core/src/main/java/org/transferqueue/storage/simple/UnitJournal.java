package org.transferqueue.storage.simple;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.Threads;
import org.transferqueue.TqException;
import org.transferqueue.journal.Journal;
import org.transferqueue.journal.JournalCheckpoints;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.journal.JournalStatistics;
import org.transferqueue.journal.Recovery;
import org.transferqueue.storage.checkpoint.DigestFile;
import org.transferqueue.storage.checkpoint.FileDigest;

/**
 * The write-ahead journal of one {@link StorageUnit}: every put, rollback and clear is in the
 * journal before the unit's call returns (so before a server replies), and a unit restarted on the
 * same directory recovers the last checkpoint plus the journal after it.
 *
 * <pre>{@code
 * StorageUnit unit = new StorageUnit(id, capacity, allocator, limit);
 * try (UnitJournal journal = UnitJournal.open(unit, settings, "storage-unit-0", Clock.SYSTEM)) {
 *   // serve the unit; puts, rollbacks and clears are journaled
 * }  // a clean close writes a checkpoint, so the next start replays nothing
 * }</pre>
 *
 * <p>Design note. The unit numbers each change under its write lock ({@link
 * Journal#append(org.transferqueue.journal.JournalRecord)} there), so LSN order is the order of its
 * changes, and waits for durability after releasing the lock. Compaction runs on its own thread
 * when the journal passes half of {@code max_bytes}: it takes the unit's cell references and the
 * last LSN together under the unit's read lock (writers wait only for that lookup, not for the
 * copy), writes them outside the lock as a storage-unit checkpoint file (docs/CHECKPOINT.md) into
 * {@code <dir>/checkpoint-<LSN>/} ({@link JournalCheckpoints}), then truncates the journal through
 * that LSN. Thread-safe.
 */
public final class UnitJournal implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(UnitJournal.class.getName());
  static final String CHECKPOINT_FILE = "unit.ckpt";
  private static final Duration DURABLE_TIMEOUT = Duration.ofSeconds(60);

  private final StorageUnit unit;
  private final Journal journal;
  private final Recovery recovery;
  private final long recoveredFromLsn;
  private final AtomicBoolean compacting = new AtomicBoolean();

  /** How long a close waits for a compaction in progress. */
  private static final java.time.Duration COMPACTION_WAIT = java.time.Duration.ofSeconds(60);

  private final ExecutorService compactor;
  private final Object checkpointLock = new Object();
  private volatile boolean closed;

  private UnitJournal(StorageUnit unit, Journal journal, Recovery recovery, long fromLsn) {
    this.unit = unit;
    this.journal = journal;
    this.recovery = recovery;
    this.recoveredFromLsn = fromLsn;
    this.compactor =
        Executors.newSingleThreadExecutor(Threads.namedDaemon("tq-unit-compaction-" + unit.id()));
  }

  /**
   * Opens the journal in {@code settings.directory()}, rebuilds the unit's state from the last
   * checkpoint and the journal after it, and journals the unit's changes from then on.
   *
   * @param unit a freshly created, empty unit
   * @param settings the journal's directory and policies
   * @param role the journal's role name (segment file prefix), such as {@code storage-unit-0}
   * @param clock time source of the sync interval
   * @return the journal, attached to the unit; the caller closes it before the unit
   * @throws TqException {@link ErrorCode#CORRUPT_DATA} naming file and offset when the journal or
   *     checkpoint is damaged (the unit is then emptied again), {@link ErrorCode#ILLEGAL_STATE}
   *     when another process uses the directory
   */
  public static UnitJournal open(
      StorageUnit unit, JournalSettings settings, String role, Clock clock) {
    Journal journal = Journal.open(settings, role, clock);
    try {
      Optional<JournalCheckpoints.Checkpoint> checkpoint =
          JournalCheckpoints.latest(settings.directory());
      long after = 0;
      if (checkpoint.isPresent()) {
        Path dir = checkpoint.get().directory();
        unit.install(
            UnitCheckpoints.read(unit, dir.resolve(CHECKPOINT_FILE), DigestFile.read(dir)));
        after = checkpoint.get().lsn();
      }
      Recovery recovery =
          journal.recover(
              after,
              (lsn, type, header, payload) -> UnitRecords.apply(unit, lsn, type, header, payload));
      UnitJournal attached = new UnitJournal(unit, journal, recovery, after);
      unit.attachJournal(attached);
      LOG.log(
          System.Logger.Level.INFO,
          "storage unit {0} recovered from {1}: checkpoint at LSN {2}, {3} journal records"
              + " replayed, {4} samples",
          unit.id(),
          settings.directory(),
          after,
          recovery.replayed(),
          unit.stats().samples());
      return attached;
    } catch (RuntimeException e) {
      journal.close();
      try {
        unit.install(new UnitCheckpoint.Contents(unit.id(), -1, java.util.List.of(), Map.of()));
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /**
   * What the recovery at {@link #open} found.
   *
   * @return the journal's recovery figures
   */
  public Recovery recovery() {
    return recovery;
  }

  /**
   * The LSN of the checkpoint the recovery started from (0 without checkpoint).
   *
   * @return the LSN
   */
  public long recoveredFromLsn() {
    return recoveredFromLsn;
  }

  /**
   * The journal's counters.
   *
   * @return appends, groups, bytes, fsyncs, disk use
   */
  public JournalStatistics statistics() {
    return journal.statistics();
  }

  /**
   * Numbers a record; called by the unit under its write lock. A refusal (journal full, closed,
   * failed) is thrown here, before the unit changes anything, and releases the record.
   */
  CompletableFuture<Long> append(UnitRecords.Prepared prepared) {
    CompletableFuture<Long> appended;
    try {
      appended = journal.append(prepared.record());
    } catch (RuntimeException e) {
      prepared.release();
      throw e;
    }
    appended.whenComplete((lsn, error) -> prepared.release());
    if (appended.isCompletedExceptionally()) {
      journal.await(appended, DURABLE_TIMEOUT); // throws the refusal
    }
    return appended;
  }

  /** Waits until an append is durable; then starts a compaction if the journal is half full. */
  void awaitDurable(CompletableFuture<Long> appended) {
    try {
      journal.await(appended, DURABLE_TIMEOUT);
    } catch (TqException e) {
      throw new StorageException(
          e.code(), "storage unit " + unit.id() + ": the change is not durable: " + e.getMessage());
    }
    maybeCompact();
  }

  private void maybeCompact() {
    if (closed
        || journal.diskBytes() <= journal.settings().maxBytes() / 2
        || !compacting.compareAndSet(false, true)) {
      return;
    }
    try {
      compactor.execute(
          () -> {
            try {
              checkpoint();
            } catch (RuntimeException e) {
              LOG.log(System.Logger.Level.ERROR, "storage unit " + unit.id() + " compaction", e);
            } finally {
              compacting.set(false);
            }
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      compacting.set(false);
    }
  }

  /**
   * Writes a checkpoint of the unit now and truncates the journal through it. Writers keep going
   * while the file is written.
   *
   * @return the LSN the checkpoint covers
   * @throws TqException {@link ErrorCode#STORAGE_ERROR} when the checkpoint cannot be written (the
   *     previous checkpoint and the whole journal stay)
   */
  public long checkpoint() {
    synchronized (checkpointLock) {
      long[] lsn = new long[1];
      try (UnitCheckpoint.Contents contents =
          unit.checkpointContents(() -> lsn[0] = journal.lastLsn())) {
        JournalCheckpoints.write(
            journal.directory(),
            dir -> {
              FileDigest digest =
                  UnitCheckpoint.write(dir.resolve(CHECKPOINT_FILE), contents, unit.allocator());
              DigestFile.write(dir, Map.of(CHECKPOINT_FILE, digest));
              return lsn[0];
            });
      }
      long freed = journal.truncateThrough(lsn[0]);
      LOG.log(
          System.Logger.Level.DEBUG,
          "storage unit {0}: checkpoint at LSN {1}, {2} journal bytes freed",
          unit.id(),
          lsn[0],
          freed);
      return lsn[0];
    }
  }

  /**
   * Waits for a compaction in progress, so that it never deletes segments under the next journal
   * opened on this directory (the lock is released by the close that follows).
   */
  private void awaitCompaction() {
    if (!Threads.awaitTermination(compactor, COMPACTION_WAIT)) {
      LOG.log(
          System.Logger.Level.WARNING,
          "a journal compaction did not end within " + COMPACTION_WAIT);
    }
  }

  /**
   * Stops journaling without a final checkpoint, as a killed process would (what was appended is
   * still written): for tests of recovery. The unit keeps its memory state.
   */
  void abandon() {
    closed = true;
    compactor.shutdownNow();
    awaitCompaction();
    unit.detachJournal(this);
    journal.close();
  }

  /**
   * Writes a final checkpoint (so that the next start replays nothing), detaches from the unit and
   * closes the journal. Idempotent; close it before the unit.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    compactor.shutdown();
    awaitCompaction();
    try {
      checkpoint();
    } catch (RuntimeException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "storage unit " + unit.id() + ": no checkpoint at close; the journal is replayed instead",
          e);
    } finally {
      unit.detachJournal(this);
      journal.close();
    }
  }
}
