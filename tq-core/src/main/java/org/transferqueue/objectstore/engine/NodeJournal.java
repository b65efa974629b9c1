package org.transferqueue.objectstore.engine;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.Threads;
import org.transferqueue.TqException;
import org.transferqueue.journal.Journal;
import org.transferqueue.journal.JournalCheckpoints;
import org.transferqueue.journal.JournalRecord;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.journal.JournalStatistics;
import org.transferqueue.journal.RecordHeader;
import org.transferqueue.journal.Recovery;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.storage.checkpoint.DigestFile;
import org.transferqueue.storage.checkpoint.FileDigest;

/**
 * The write-ahead journal of one {@link EmbeddedObjectStore} (a store node): every write that
 * becomes visible and every key that loses its value (removed, evicted, replaced by a write of
 * another size) is in the journal before the store's call returns; a store restarted on the same
 * directory recovers the last checkpoint plus the journal after it.
 *
 * <pre>
 *  WRITE (1)   header = key str | flags u8 (bit 0 hard pin, bit 1 soft pin); payload = the bytes
 *  REMOVE (2)  header = key str; no payload
 * </pre>
 *
 * <p>Design note. The master reports changes under its lock ({@link StoreMaster.ChangeLog}), where
 * they are numbered, so LSN order is the order of the changes; a write's record is checksummed
 * before the lock by the caller where it can be, and its allocation stays pinned until the journal
 * wrote it (a remove meanwhile never lets the bytes be reused). Callers wait for durability after
 * the lock ({@link Journal#awaitDurable}). Compaction, on its own thread once the journal passes
 * half of {@code max_bytes}, pins every readable object and reads the last LSN at the same instant
 * under the master's lock, writes them outside it as a store-node checkpoint file
 * (docs/CHECKPOINT.md) into {@code <dir>/checkpoint-<LSN>/}, then truncates the journal. Soft pins
 * are replayed as of the write (their lifetime starts again at recovery). Thread-safe.
 */
public final class NodeJournal implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(NodeJournal.class.getName());
  static final short WRITE = 1;
  static final short REMOVE = 2;
  static final String CHECKPOINT_FILE = "node.ckpt";
  private static final int HARD_PIN = 1;
  private static final int SOFT_PIN = 2;
  private static final Duration DURABLE_TIMEOUT = Duration.ofSeconds(60);

  private final EmbeddedObjectStore store;
  private final Journal journal;
  private final Recovery recovery;
  private final long recoveredFromLsn;
  private final AtomicBoolean compacting = new AtomicBoolean();
  private final AtomicLong unjournaledRemovals = new AtomicLong();

  /** How long a close waits for a compaction in progress. */
  private static final java.time.Duration COMPACTION_WAIT = java.time.Duration.ofSeconds(60);

  private final ExecutorService compactor;
  private final Object checkpointLock = new Object();
  private volatile boolean closed;

  private NodeJournal(
      EmbeddedObjectStore store, Journal journal, Recovery recovery, long recoveredFromLsn) {
    this.store = store;
    this.journal = journal;
    this.recovery = recovery;
    this.recoveredFromLsn = recoveredFromLsn;
    this.compactor =
        Executors.newSingleThreadExecutor(
            Threads.namedDaemon("tq-node-compaction-" + store.hostname()));
  }

  /**
   * Opens the journal in {@code settings.directory()}, rebuilds the store's objects from the last
   * checkpoint and the journal after it, and journals the store's changes from then on.
   *
   * @param store a store that is set up and empty
   * @param settings the journal's directory and policies
   * @param role the journal's role name (segment file prefix), such as {@code store-node-0}
   * @param clock time source of the sync interval
   * @return the journal, attached to the store; the caller closes it before the store
   * @throws TqException {@link ErrorCode#CORRUPT_DATA} naming file and offset when the journal or
   *     checkpoint is damaged (the store is emptied again), {@link ErrorCode#ILLEGAL_STATE} when
   *     another process uses the directory, {@code CLOSED} when the store is not set up
   */
  public static NodeJournal open(
      EmbeddedObjectStore store, JournalSettings settings, String role, Clock clock) {
    Journal journal = Journal.open(settings, role, clock);
    try {
      Optional<JournalCheckpoints.Checkpoint> checkpoint =
          JournalCheckpoints.latest(settings.directory());
      long after = 0;
      if (checkpoint.isPresent()) {
        Path dir = checkpoint.get().directory();
        Path file = dir.resolve(CHECKPOINT_FILE);
        var digests = DigestFile.read(dir);
        store.prepareCheckpointFile(file, digests.expected(file), digests).commit();
        after = checkpoint.get().lsn();
      }
      Recovery recovery =
          journal.recover(
              after, (lsn, type, header, payload) -> apply(store, lsn, type, header, payload));
      NodeJournal attached = new NodeJournal(store, journal, recovery, after);
      store.attachJournal(attached);
      LOG.log(
          System.Logger.Level.INFO,
          "store node {0} recovered from {1}: checkpoint at LSN {2}, {3} journal records replayed,"
              + " {4} objects",
          store.hostname(),
          settings.directory(),
          after,
          recovery.replayed(),
          store.statistics().objects());
      return attached;
    } catch (RuntimeException e) {
      journal.close();
      store.removeAll(true);
      throw e;
    }
  }

  private static void apply(
      EmbeddedObjectStore store, long lsn, short type, ByteBuffer header, MemorySegment payload) {
    RecordHeader.Reader in = new RecordHeader.Reader(header, "store node journal record " + lsn);
    String key = in.string();
    switch (type) {
      case WRITE -> {
        int flags = in.u8();
        ReplicateConfig config =
            ReplicateConfig.builder()
                .withHardPin((flags & HARD_PIN) != 0)
                .withSoftPin((flags & SOFT_PIN) != 0)
                .build();
        int code = store.replayWrite(key, config, payload);
        if (code != 0) {
          throw new StorageException(
              ErrorCode.STORAGE_ERROR,
              "store node cannot replay journal record "
                  + lsn
                  + " (write of '"
                  + key
                  + "', "
                  + payload.byteSize()
                  + " bytes): code "
                  + code);
        }
      }
      case REMOVE -> store.replayRemove(key);
      default -> throw in.malformed("has the unknown type " + type);
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

  /** Prepares the WRITE record of a ticket, outside the master's lock where possible. */
  JournalRecord prepare(StoreMaster.WriteTicket ticket) {
    ReplicateConfig config = ticket.config();
    int flags = (config.withHardPin() ? HARD_PIN : 0) | (config.withSoftPin() ? SOFT_PIN : 0);
    byte[] header = new RecordHeader().string(ticket.key()).u8(flags).toBytes();
    return JournalRecord.of(WRITE, header, List.of(ticket.allocation().memory));
  }

  /** The master's view of this journal; its methods run under the master's lock. */
  StoreMaster.ChangeLog changeLog(StoreMaster master) {
    return new StoreMaster.ChangeLog() {
      @Override
      public boolean visible(StoreMaster.WriteTicket ticket, Object prepared) {
        JournalRecord record = prepared != null ? (JournalRecord) prepared : prepare(ticket);
        CompletableFuture<Long> appended = journal.append(record);
        if (appended.isCompletedExceptionally()) {
          LOG.log(
              System.Logger.Level.WARNING,
              "store node journal refused the write of '" + ticket.key() + "'");
          return false;
        }
        StoreMaster.Allocation allocation = ticket.allocation();
        master.pin(allocation);
        appended.whenComplete((lsn, error) -> master.unpin(allocation));
        return true;
      }

      @Override
      public void removed(String key) {
        byte[] header = new RecordHeader().string(key).toBytes();
        CompletableFuture<Long> appended = journal.append(REMOVE, header, List.of());
        if (appended.isCompletedExceptionally()) {
          unjournaledRemovals.incrementAndGet();
          LOG.log(
              System.Logger.Level.ERROR,
              "store node journal refused the removal of '"
                  + key
                  + "': it is not durable (journal full or failed)");
        }
      }
    };
  }

  /**
   * Waits until everything journaled so far is durable; then starts a compaction when the journal
   * is half full.
   *
   * @return true when durable, false when the journal failed or timed out (logged)
   */
  boolean awaitDurable() {
    try {
      journal.awaitDurable(journal.lastLsn(), DURABLE_TIMEOUT);
    } catch (TqException e) {
      LOG.log(System.Logger.Level.ERROR, "store node journal: changes not durable", e);
      return false;
    }
    maybeCompact();
    return true;
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
              LOG.log(System.Logger.Level.ERROR, "store node compaction failed", e);
            } finally {
              compacting.set(false);
            }
          });
    } catch (RejectedExecutionException e) {
      compacting.set(false);
    }
  }

  /**
   * Writes a checkpoint of every readable object now and truncates the journal through it. Requests
   * keep going while the file is written.
   *
   * @return the LSN the checkpoint covers
   * @throws TqException {@code STORAGE_ERROR} when the checkpoint cannot be written (the previous
   *     checkpoint and the whole journal stay)
   */
  public long checkpoint() {
    synchronized (checkpointLock) {
      long lsn =
          JournalCheckpoints.write(
                  journal.directory(),
                  dir -> {
                    long[] covered = new long[1];
                    FileDigest digest =
                        store.saveCheckpointFile(
                            dir.resolve(CHECKPOINT_FILE), () -> covered[0] = journal.lastLsn());
                    DigestFile.write(dir, Map.of(CHECKPOINT_FILE, digest));
                    return covered[0];
                  })
              .lsn();
      journal.truncateThrough(lsn);
      return lsn;
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

  /** Stops journaling without a final checkpoint, as a killed process would; for tests. */
  void abandon() {
    closed = true;
    compactor.shutdownNow();
    awaitCompaction();
    store.detachJournal(this);
    journal.close();
  }

  /**
   * Writes a final checkpoint (so that the next start replays nothing), detaches from the store and
   * closes the journal. Idempotent; close it before the store.
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
          "store node: no checkpoint at close; the journal is replayed instead",
          e);
    } finally {
      store.detachJournal(this);
      journal.close();
    }
  }
}
