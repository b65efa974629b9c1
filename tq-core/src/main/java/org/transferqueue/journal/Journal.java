package org.transferqueue.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;
import org.transferqueue.Clock;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A write-ahead journal of one role: numbered records in segment files, appended in groups by one
 * writer thread and synced by the {@link SyncPolicy}.
 *
 * <pre>{@code
 * try (Journal journal = Journal.open(settings, "storage-unit-0", Clock.SYSTEM)) {
 *   journal.recover(checkpointLsn, (lsn, type, header, payload) -> apply(type, header, payload));
 *   long lsn = journal.appendAndAwait(PUT, header, List.of(cell.segment()), Duration.ofSeconds(5));
 *   ...
 *   journal.truncateThrough(newCheckpointLsn); // after that checkpoint is safely on disk
 * }
 * }</pre>
 *
 * <p>Design note. Threads: any thread appends; one platform thread (the writer, {@code
 * tq-journal-<role>}) owns the active segment's file channel, writes, rolls and syncs; any thread
 * may call {@link #truncateThrough}, which asks the writer to roll and deletes old segments under
 * the segment lock. Linearisation: a record's LSN is assigned, and the record queued, under {@code
 * appendLock}, so queue order is LSN order and a caller that appends under its own lock gets LSNs
 * in the order of its changes. The writer drains everything queued into one group: one sequence of
 * gathering writes from the caller's segments (no heap copy of payloads) and, under {@link
 * SyncPolicy#FSYNC}, one {@code fsync} before any of the group's futures completes. States: opened
 * (appends refused until {@link #recover} ran), running, failed (an I/O error of the writer: every
 * later append fails with {@link ErrorCode#STORAGE_ERROR}), closed. Disk bound: bytes are reserved
 * at append time, so a full journal refuses an append with {@link ErrorCode#CAPACITY_EXCEEDED}
 * before it is numbered and the LSNs stay gapless.
 */
public final class Journal implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(Journal.class.getName());
  private static final String LOCK_FILE = "LOCK";

  private final JournalSettings settings;
  private final String role;
  private final Path directory;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final Object appendLock = new Object();
  private final Object segmentLock = new Object();
  private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
  private final JournalWriter writer;
  private final Thread writerThread;
  private final AtomicLong appends = new AtomicLong();
  private final AtomicLong rejected = new AtomicLong();

  /** Guarded by {@code segmentLock}; the last one is the active segment. */
  private final List<Segment> segments = new ArrayList<>();

  /** Guarded by {@code appendLock}: the last LSN handed out. */
  private long assignedLsn;

  /** Guarded by {@code appendLock}: bytes on disk plus bytes queued. */
  private long reservedBytes;

  /** Guarded by {@code appendLock}. */
  private boolean recovered;

  /** Guarded by {@code appendLock}. */
  private boolean closed;

  private volatile TqException failure;

  // The LSN through which every record is durable per the policy; waiters wait on durableLock.
  private final ReentrantLock durableLock = new ReentrantLock();
  private final Condition durableAdvanced = durableLock.newCondition();
  private volatile long durableLsn;

  private Journal(
      JournalSettings settings, String role, Clock clock, FileChannel lockChannel, FileLock lock) {
    this.settings = settings;
    this.role = role;
    this.directory = settings.directory();
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.writer = new JournalWriter(this, settings, clock);
    this.writerThread = Thread.ofPlatform().name("tq-journal-" + role).daemon().unstarted(writer);
  }

  /**
   * Opens (creating when absent) the journal directory of a role and takes its lock file. Call
   * {@link #recover} next: appends are refused until then.
   *
   * @param settings directory and policies
   * @param role the role's name, used in segment file names (such as {@code storage-unit-0})
   * @param clock the time source of the sync interval
   * @return the journal; the caller closes it
   * @throws TqException {@link ErrorCode#ILLEGAL_STATE} when another process (or another journal of
   *     this process) holds the directory; {@link ErrorCode#STORAGE_ERROR} on an I/O error
   */
  public static Journal open(JournalSettings settings, String role, Clock clock) {
    JournalDescriptor.checkRole(role);
    Objects.requireNonNull(clock, "clock");
    Path dir = settings.directory();
    FileChannel channel = null;
    try {
      Files.createDirectories(dir);
      channel =
          FileChannel.open(
              dir.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null;
      }
      if (lock == null) {
        throw new TqException(
            ErrorCode.ILLEGAL_STATE,
            "journal directory " + dir + " is in use by another journal (its LOCK file is held)");
      }
      Journal journal = new Journal(settings, role, clock, channel, lock);
      journal.listSegments();
      return journal;
    } catch (IOException e) {
      closeQuietly(channel);
      throw new TqException(ErrorCode.STORAGE_ERROR, "cannot open journal " + dir + ": " + e, e);
    } catch (RuntimeException e) {
      closeQuietly(channel);
      throw e;
    }
  }

  private void listSegments() throws IOException {
    List<Segment> found = new ArrayList<>();
    try (Stream<Path> files = Files.list(directory)) {
      for (Path file : files.toList()) {
        long firstLsn = JournalDescriptor.firstLsnOf(role, file.getFileName().toString());
        if (firstLsn >= 0) {
          found.add(new Segment(file, firstLsn, Files.size(file)));
        }
      }
    }
    found.sort((a, b) -> Long.compare(a.firstLsn, b.firstLsn));
    synchronized (segmentLock) {
      segments.addAll(found);
    }
  }

  /**
   * Replays the records after a checkpoint, checking every record, and readies the journal for
   * appends. Call once, before the first append.
   *
   * <p>A torn last record (incomplete, or zeros, at the end of the last segment: a write the
   * process did not finish) is cut off with a warning naming file and offset. Any other damage (a
   * checksum mismatch, a malformed record, a gap in the LSNs such as a missing segment file) fails
   * with {@link ErrorCode#CORRUPT_DATA} naming file and offset; records before the damage have been
   * visited by then, so the caller discards what it rebuilt and does not start.
   *
   * @param afterLsn the LSN the caller's checkpoint covers (0 without checkpoint): records up to it
   *     are checked but not visited
   * @param visitor applies each later record, in LSN order, on the calling thread
   * @return what was found
   * @throws TqException {@link ErrorCode#CORRUPT_DATA} as above; {@link ErrorCode#ILLEGAL_STATE}
   *     when called twice; {@link ErrorCode#STORAGE_ERROR} on an I/O error
   */
  public Recovery recover(long afterLsn, RecordVisitor visitor) {
    Objects.requireNonNull(visitor, "visitor");
    synchronized (appendLock) {
      if (recovered || closed) {
        throw new TqException(ErrorCode.ILLEGAL_STATE, "journal " + directory + " recovered");
      }
      try {
        Recovery recovery = scanAndOpen(afterLsn, visitor);
        assignedLsn = recovery.lastLsn();
        durableLsn = assignedLsn;
        reservedBytes = diskBytes();
        recovered = true;
        writerThread.start();
        return recovery;
      } catch (IOException e) {
        throw new TqException(
            ErrorCode.STORAGE_ERROR, "cannot recover journal " + directory + ": " + e, e);
      }
    }
  }

  private Recovery scanAndOpen(long afterLsn, RecordVisitor visitor) throws IOException {
    List<Segment> all;
    synchronized (segmentLock) {
      all = List.copyOf(segments);
    }
    if (all.isEmpty()) {
      if (afterLsn > 0) {
        throw new TqException(
            ErrorCode.CORRUPT_DATA,
            "journal "
                + directory
                + " has no segment files but its checkpoint covers LSN "
                + afterLsn
                + ": the journal's files are missing; refusing to start");
      }
      writer.startSegment(1);
      return new Recovery(0, 0, 0, 0, 0);
    }
    Recovery recovery = new SegmentScanner(role, afterLsn, visitor).scan(all);
    if (recovery.lastLsn() < afterLsn) {
      // The checkpoint is newer than the journal's end (records the OS lost under the interval
      // policy, all of them in the checkpoint): start after the checkpoint, keep no older segment.
      LOG.log(
          System.Logger.Level.WARNING,
          "journal {0} ends at LSN {1} before its checkpoint at LSN {2}; continuing after the"
              + " checkpoint",
          directory,
          recovery.lastLsn(),
          afterLsn);
      writer.startSegment(afterLsn + 1);
      deleteSegmentsBefore(afterLsn + 1);
      return new Recovery(
          recovery.replayed(),
          recovery.skipped(),
          afterLsn,
          recovery.truncatedBytes(),
          recovery.segments());
    }
    writer.continueSegment(all.getLast());
    return recovery;
  }

  /**
   * Prepares and appends one record; see {@link #append(JournalRecord)}.
   *
   * @param type the role's record type
   * @param header the role's header bytes
   * @param payload payload segments, kept alive and unchanged by the caller until completion
   * @return completes with the record's LSN once it is durable per the sync policy
   */
  public CompletableFuture<Long> append(short type, byte[] header, List<MemorySegment> payload) {
    return append(JournalRecord.of(type, header, payload));
  }

  /**
   * Numbers and queues a prepared record for the writer thread. Cheap (no I/O, no pass over the
   * payload): callers may append under the lock that orders their changes, so that LSN order is
   * their order. The future completes on the writer thread (dependent actions must not block).
   *
   * @param record the prepared record
   * @return completes with the record's LSN once durable per the sync policy, or exceptionally with
   *     a {@link TqException}: {@link ErrorCode#CAPACITY_EXCEEDED} when the journal is full, {@link
   *     ErrorCode#CLOSED} after {@link #close()}, {@link ErrorCode#STORAGE_ERROR} after a write
   *     error, {@link ErrorCode#ILLEGAL_STATE} before {@link #recover}
   */
  public CompletableFuture<Long> append(JournalRecord record) {
    CompletableFuture<Long> done = new CompletableFuture<>();
    synchronized (appendLock) {
      TqException refusal = refusal(record);
      if (refusal != null) {
        done.completeExceptionally(refusal);
        return done;
      }
      long lsn = ++assignedLsn;
      reservedBytes += record.fileBytes();
      queue.add(new JournalWriter.Pending(record, lsn, record.seal(lsn), done));
    }
    return done;
  }

  private TqException refusal(JournalRecord record) {
    if (closed) {
      return new TqException(ErrorCode.CLOSED, "journal " + directory + " is closed");
    }
    if (!recovered) {
      return new TqException(
          ErrorCode.ILLEGAL_STATE, "journal " + directory + " must be recovered before appending");
    }
    TqException failed = failure;
    if (failed != null) {
      return new TqException(failed.code(), failed.getMessage(), failed);
    }
    if (reservedBytes + record.fileBytes() > settings.maxBytes()) {
      rejected.incrementAndGet();
      return new TqException(
          ErrorCode.CAPACITY_EXCEEDED,
          "journal full: "
              + reservedBytes
              + " bytes of max "
              + settings.maxBytes()
              + " in "
              + directory
              + " (a record of "
              + record.fileBytes()
              + " bytes does not fit)");
    }
    return null;
  }

  /**
   * Appends one record and waits until it is durable per the sync policy.
   *
   * @param type the role's record type
   * @param header the role's header bytes
   * @param payload payload segments
   * @param timeout how long to wait
   * @return the record's LSN
   * @throws TqException the append's error, or {@link ErrorCode#DEADLINE_EXCEEDED} when the timeout
   *     passes first (the record may still become durable)
   */
  public long appendAndAwait(
      short type, byte[] header, List<MemorySegment> payload, Duration timeout) {
    return await(append(type, header, payload), timeout);
  }

  /**
   * Waits for an append's future.
   *
   * @param appended a future of {@link #append}
   * @param timeout how long to wait
   * @return the LSN
   * @throws TqException the append's error or {@link ErrorCode#DEADLINE_EXCEEDED}
   */
  public long await(CompletableFuture<Long> appended, Duration timeout) {
    try {
      return appended.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new DeadlineExceededException(
          "journal " + directory + ": append not durable within " + timeout);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof TqException tq) {
        throw new TqException(tq.code(), tq.getMessage(), tq);
      }
      throw new TqException(ErrorCode.STORAGE_ERROR, "journal append failed: " + e.getCause(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TqException(ErrorCode.CLOSED, "interrupted while waiting for the journal", e);
    }
  }

  /**
   * Waits until every record up to {@code lsn} is durable per the sync policy (for callers that
   * appended without keeping the futures, such as under a lock in several places of one request).
   *
   * @param lsn an LSN handed out by this journal, such as {@link #lastLsn()}
   * @param timeout how long to wait
   * @throws TqException {@link ErrorCode#DEADLINE_EXCEEDED}, or the writer's failure
   */
  public void awaitDurable(long lsn, Duration timeout) {
    if (durableLsn >= lsn) {
      return;
    }
    long remainingNs = timeout.toNanos();
    durableLock.lock();
    try {
      while (durableLsn < lsn) {
        TqException failed = failure;
        if (failed != null) {
          throw new TqException(failed.code(), failed.getMessage(), failed);
        }
        if (remainingNs <= 0) {
          throw new DeadlineExceededException(
              "journal " + directory + ": LSN " + lsn + " not durable within " + timeout);
        }
        remainingNs = durableAdvanced.awaitNanos(remainingNs);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TqException(ErrorCode.CLOSED, "interrupted while waiting for the journal", e);
    } finally {
      durableLock.unlock();
    }
  }

  /** Called by the writer once every record up to {@code lsn} is durable (or it failed). */
  void durableThrough(long lsn) {
    durableLock.lock();
    try {
      if (lsn > durableLsn) {
        durableLsn = lsn;
      }
      durableAdvanced.signalAll();
    } finally {
      durableLock.unlock();
    }
  }

  /**
   * Forces everything written so far to disk (under either policy) and waits.
   *
   * @param timeout how long to wait
   * @throws TqException {@link ErrorCode#DEADLINE_EXCEEDED}, or the writer's failure
   */
  public void sync(Duration timeout) {
    CompletableFuture<Long> done = new CompletableFuture<>();
    synchronized (appendLock) {
      if (closed || !recovered) {
        return;
      }
      queue.add(new JournalWriter.Sync(done));
    }
    await(done, timeout);
  }

  /**
   * Deletes the segment files whose records all have LSNs up to {@code lsn}; call it once a
   * checkpoint covering {@code lsn} is safely on disk. When the active segment holds only such
   * records the writer first starts a new segment, so that it can go too.
   *
   * @param lsn the LSN the checkpoint covers
   * @return bytes freed
   */
  public long truncateThrough(long lsn) {
    Segment active;
    synchronized (segmentLock) {
      active = segments.isEmpty() ? null : segments.getLast();
    }
    if (active != null
        && active.firstLsn <= lsn
        && writer.writtenLsn() <= lsn
        && writer.writtenLsn() >= active.firstLsn) {
      CompletableFuture<Long> rolled = new CompletableFuture<>();
      boolean queued = false;
      synchronized (appendLock) {
        if (!closed && recovered && failure == null) {
          queue.add(new JournalWriter.Roll(lsn, rolled));
          queued = true;
        }
      }
      if (queued) {
        await(rolled, Duration.ofSeconds(60));
      }
    }
    return deleteSegmentsBefore(lsn + 1);
  }

  /** Deletes every segment but the last whose successor starts at or before {@code limitLsn}. */
  private long deleteSegmentsBefore(long limitLsn) {
    long freed = 0;
    synchronized (segmentLock) {
      while (segments.size() > 1 && segments.get(1).firstLsn <= limitLsn) {
        Segment old = segments.removeFirst();
        try {
          Files.deleteIfExists(old.path);
        } catch (IOException e) {
          segments.addFirst(old);
          throw new TqException(
              ErrorCode.STORAGE_ERROR, "cannot delete journal segment " + old.path + ": " + e, e);
        }
        freed += old.bytes;
      }
    }
    synchronized (appendLock) {
      reservedBytes -= freed;
    }
    return freed;
  }

  /**
   * Bytes of all segment files now.
   *
   * @return the sum of the segment sizes
   */
  public long diskBytes() {
    synchronized (segmentLock) {
      long total = 0;
      for (Segment segment : segments) {
        total += segment.bytes;
      }
      return total;
    }
  }

  /**
   * The LSN of the last record appended (queued) or recovered.
   *
   * @return the LSN, 0 for an empty journal
   */
  public long lastLsn() {
    synchronized (appendLock) {
      return assignedLsn;
    }
  }

  /**
   * The settings the journal was opened with.
   *
   * @return the settings
   */
  public JournalSettings settings() {
    return settings;
  }

  /**
   * The journal's directory.
   *
   * @return the directory
   */
  public Path directory() {
    return directory;
  }

  /**
   * Counters since the journal was opened.
   *
   * @return the counters
   */
  public JournalStatistics statistics() {
    return new JournalStatistics(
        appends.get(),
        writer.groups(),
        writer.bytes(),
        writer.fsyncs(),
        rejected.get(),
        diskBytes(),
        lastLsn());
  }

  /**
   * Writes what is queued, syncs, stops the writer and releases the lock file. Appends made after
   * this call fail with {@link ErrorCode#CLOSED}. Idempotent.
   */
  @Override
  public void close() {
    boolean started;
    synchronized (appendLock) {
      if (closed) {
        return;
      }
      closed = true;
      started = recovered;
      if (started) {
        queue.add(JournalWriter.STOP);
      }
    }
    try {
      if (started) {
        writerThread.join();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      writer.closeChannel();
      try {
        lock.release();
      } catch (IOException e) {
        LOG.log(System.Logger.Level.WARNING, "cannot release journal lock " + directory, e);
      }
      closeQuietly(lockChannel);
    }
  }

  // ---- called by the writer thread ----

  LinkedBlockingQueue<Object> queue() {
    return queue;
  }

  String role() {
    return role;
  }

  void addSegment(Segment segment) {
    synchronized (segmentLock) {
      segments.add(segment);
    }
  }

  void grow(Segment active, long bytes) {
    synchronized (segmentLock) {
      active.bytes += bytes;
    }
  }

  void reserveHeader(long bytes) {
    synchronized (appendLock) {
      reservedBytes += bytes;
    }
  }

  void completed(int records) {
    appends.addAndGet(records);
  }

  void fail(TqException error) {
    failure = error;
    durableThrough(0);
  }

  private static void closeQuietly(FileChannel channel) {
    if (channel == null) {
      return;
    }
    try {
      channel.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
