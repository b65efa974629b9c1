package org.transferqueue.controller;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32C;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.journal.Journal;
import org.transferqueue.journal.JournalCheckpoints;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.journal.Recovery;
import org.transferqueue.sampler.Sampler;

/**
 * The controller's write-ahead journal: appends one {@link ControllerRecords} record per
 * acknowledged change, lets replies wait until their change is durable, recovers a controller from
 * its last checkpoint plus the journal tail, and compacts the journal with concurrent checkpoints.
 *
 * <h2>Design note (ordering and durability)</h2>
 *
 * <p>A record is appended under the controller's lock, right after the change it describes, so the
 * journal's order is the order in which the changes were made; the append only hands the record to
 * the journal's writer thread. The request thread then leaves the lock and waits for the record to
 * become durable ({@link #await}) before it replies, so concurrent callers share one group commit
 * (one write, one fsync) instead of serialising on the disk under the lock. Every operation, reads
 * included, waits for the last record appended before it released the lock: no reply ever shows a
 * change that a crash could still take back. When an append fails (an I/O error, a full journal),
 * the in-memory state is ahead of the journal; the controller then refuses every further request
 * with {@code ILLEGAL_STATE} until it is restarted, which recovers the journaled state (the failed
 * change was never acknowledged).
 *
 * <h2>Compaction</h2>
 *
 * <p>A checkpoint copies the state under the lock together with the last appended record's future
 * (the cut: the state holds exactly the records up to that LSN {@code L}), then, outside the lock,
 * waits for {@code L} to be durable, writes {@code checkpoint-<L>/controller_state.msgpack} ({@link
 * ControllerStateCodec}) into a temporary directory, syncs and renames it into place, deletes older
 * checkpoints and truncates the journal through {@code L}. Writers go on meanwhile. It runs when
 * the journal passes half its {@code max_bytes} and when the controller closes.
 *
 * <p>Thread-safe: {@link #append} and {@link #last} run under the controller's lock; the rest is
 * safe from any thread.
 */
final class ControllerJournal implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ControllerJournal.class.getName());

  /** The role name of the journal's segment files. */
  static final String ROLE = "controller";

  /** The file of a checkpoint directory that holds the state. */
  static final String STATE_FILE = "controller_state.msgpack";

  /**
   * The file of a checkpoint directory with the state file's size and CRC32C ({@code name size
   * crc32c-hex}, the line format of the storage roles' checkpoints).
   */
  static final String DIGESTS_FILE = "DIGESTS";

  /** How long a reply waits for its record to become durable. */
  static final Duration AWAIT_TIMEOUT = Duration.ofSeconds(30);

  private final Journal journal;
  private final JournalSettings settings;
  private final AtomicBoolean compacting = new AtomicBoolean();
  // Serialises checkpoints (they share the journal's temporary checkpoint directory) and close.
  private final Object checkpointLock = new Object();

  // Guarded by the controller's lock: the future of the last record appended.
  private CompletableFuture<Long> last;

  // Set once by the first failed append, read by every request.
  private volatile Throwable failure;
  private volatile boolean closed;

  private ControllerJournal(Journal journal, JournalSettings settings, long lastLsn) {
    this.journal = journal;
    this.settings = settings;
    this.last = CompletableFuture.completedFuture(lastLsn);
  }

  /**
   * Opens the journal in {@code settings.directory()}, restores the newest checkpoint there,
   * replays the journal after it and returns a controller that journals every change from then on.
   *
   * @throws TqException {@code CORRUPT_DATA} naming the file and record when the checkpoint or the
   *     journal is damaged or does not replay; {@code ILLEGAL_STATE} when another process holds the
   *     directory; {@code INVALID_CONFIGURATION} for a checkpoint of another sampler
   */
  static Controller recover(
      ControllerOptions config, Sampler sampler, Clock clock, JournalSettings settings) {
    long startNs = clock.nanoTime();
    Journal journal = Journal.open(settings, ROLE, clock);
    try {
      Path directory = settings.directory();
      Controller controller = new Controller(config, sampler, clock);
      Optional<JournalCheckpoints.Checkpoint> checkpoint = JournalCheckpoints.latest(directory);
      long checkpointLsn = checkpoint.map(JournalCheckpoints.Checkpoint::lsn).orElse(0L);
      if (checkpoint.isPresent()) {
        Path dir = checkpoint.get().directory();
        controller.restoreState(
            ControllerStateCodec.decode(readState(dir), dir.resolve(STATE_FILE).toString()));
      }
      String source = "controller journal " + directory;
      ControllerReplay replay = controller.replay();
      Recovery recovery =
          journal.recover(
              checkpointLsn,
              (lsn, type, header, payload) -> replay.apply(lsn, type, bytes(header), source));
      ControllerJournal owner = new ControllerJournal(journal, settings, recovery.lastLsn());
      controller.attach(owner, checkpoint.isEmpty() && recovery.lastLsn() == 0);
      LOG.log(
          System.Logger.Level.INFO,
          "controller recovered from "
              + directory
              + ": checkpoint lsn="
              + checkpointLsn
              + ", "
              + recovery.replayed()
              + " journal records replayed, last lsn="
              + recovery.lastLsn()
              + " in "
              + Duration.ofNanos(clock.nanoTime() - startNs).toMillis()
              + " ms");
      return controller;
    } catch (RuntimeException e) {
      try {
        journal.close();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private static byte[] bytes(ByteBuffer header) {
    byte[] out = new byte[header.remaining()];
    header.duplicate().get(out);
    return out;
  }

  /**
   * Appends a record; called under the controller's lock right after the change it describes.
   *
   * @return completes with the record's LSN once it is durable
   * @throws TqException {@code ILLEGAL_STATE} when an earlier append failed
   */
  CompletableFuture<Long> append(ControllerRecords.Entry entry) {
    requireHealthy();
    CompletableFuture<Long> appended;
    try {
      appended = journal.append(entry.type(), entry.header(), List.of());
    } catch (RuntimeException e) {
      failure = e;
      throw failed();
    }
    appended.whenComplete(
        (lsn, error) -> {
          if (error != null && failure == null) {
            failure = error;
          }
        });
    last = appended;
    return appended;
  }

  /** The last record appended (under the controller's lock). */
  CompletableFuture<Long> last() {
    return last;
  }

  /**
   * Refuses to go on after a failed append.
   *
   * @throws TqException {@code ILLEGAL_STATE} naming the failure
   */
  void requireHealthy() {
    if (failure != null) {
      throw failed();
    }
    if (closed) {
      throw new TqException(ErrorCode.ILLEGAL_STATE, "the controller is closed");
    }
  }

  private TqException failed() {
    Throwable cause = failure;
    return new TqException(
        ErrorCode.ILLEGAL_STATE,
        "the controller's journal in "
            + settings.directory()
            + " failed ("
            + (cause instanceof TqException t ? t.getMessage() : String.valueOf(cause))
            + "); restart the controller to recover the journaled state",
        cause);
  }

  /**
   * Waits, outside the controller's lock, until a record is durable; then starts a compaction when
   * the journal has grown past half its size limit.
   *
   * @param controller the controller, for the compaction
   * @throws TqException {@code ILLEGAL_STATE} when the append failed, {@code DEADLINE_EXCEEDED}
   *     when it did not become durable within {@link #AWAIT_TIMEOUT}
   */
  void await(CompletableFuture<Long> record, Controller controller) {
    if (!record.isDone()) {
      try {
        record.get(AWAIT_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new TqException(ErrorCode.ILLEGAL_STATE, "interrupted while journaling", e);
      } catch (TimeoutException e) {
        throw new TqException(
            ErrorCode.DEADLINE_EXCEEDED,
            "the controller's journal did not sync a record within " + AWAIT_TIMEOUT,
            e);
      } catch (ExecutionException e) {
        // Recorded as the failure by the completion handler.
      }
    }
    if (record.isCompletedExceptionally()) {
      if (failure == null) {
        failure = record.exceptionNow();
      }
      throw failed();
    }
    if (journal.diskBytes() > settings.maxBytes() / 2 && compacting.compareAndSet(false, true)) {
      // In the background: the reply need not wait for it.
      Thread.ofVirtual()
          .name("tq-controller-compaction")
          .start(
              () -> {
                try {
                  checkpoint(controller);
                } catch (RuntimeException e) {
                  if (!closed) {
                    LOG.log(System.Logger.Level.WARNING, "controller checkpoint failed: " + e, e);
                  }
                } finally {
                  compacting.set(false);
                }
              });
    }
  }

  /**
   * Called before an operation takes the controller's lock: when the journal has passed three
   * quarters of its size limit (the background compaction started at half did not keep up), takes a
   * checkpoint on this thread first, so that appends are not refused for want of space (a refused
   * append stops the controller). Operations that arrive meanwhile wait for it.
   */
  void makeRoom(Controller controller) {
    if (journal.diskBytes() <= settings.maxBytes() / 4 * 3) {
      return;
    }
    synchronized (checkpointLock) {
      if (journal.diskBytes() > settings.maxBytes() / 4 * 3 && failure == null && !closed) {
        checkpoint(controller);
      }
    }
  }

  /**
   * Takes a checkpoint concurrently with writers and truncates the journal it covers.
   *
   * @return the LSN the checkpoint covers
   * @throws TqException {@code STORAGE_ERROR} when the checkpoint cannot be written (the previous
   *     one and the whole journal stay)
   */
  long checkpoint(Controller controller) {
    synchronized (checkpointLock) {
      if (closed) {
        throw new TqException(ErrorCode.ILLEGAL_STATE, "the controller is closed");
      }
      return checkpointNow(controller);
    }
  }

  private long checkpointNow(Controller controller) {
    Controller.Cut cut = controller.cut();
    long lsn = journal.await(cut.lsn(), AWAIT_TIMEOUT);
    byte[] state = ControllerStateCodec.encode(cut.state());
    byte[] digests =
        (STATE_FILE + " " + state.length + " " + String.format("%08x", crc32c(state)) + "\n")
            .getBytes(StandardCharsets.UTF_8);
    JournalCheckpoints.write(
        settings.directory(),
        lsn,
        directory -> {
          writeSynced(directory.resolve(STATE_FILE), state);
          writeSynced(directory.resolve(DIGESTS_FILE), digests);
        });
    journal.truncateThrough(lsn);
    return lsn;
  }

  /** Takes a last checkpoint (when healthy) and closes the journal. Idempotent. */
  void close(Controller controller) {
    synchronized (checkpointLock) {
      if (closed) {
        return;
      }
      try {
        if (failure == null) {
          checkpointNow(controller);
        }
      } finally {
        closed = true;
        journal.close();
      }
    }
  }

  /** Closes the journal without a checkpoint, after a running checkpoint ends. Idempotent. */
  @Override
  public void close() {
    synchronized (checkpointLock) {
      closed = true;
      journal.close();
    }
  }

  /** The bytes the journal's segment files take. */
  long diskBytes() {
    return journal.diskBytes();
  }

  private static void writeSynced(Path file, byte[] content) throws IOException {
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ByteBuffer bytes = ByteBuffer.wrap(content);
      while (bytes.hasRemaining()) {
        channel.write(bytes);
      }
      channel.force(true);
    }
  }

  private static long crc32c(byte[] bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes);
    return crc.getValue();
  }

  /**
   * Reads a checkpoint's state file and checks it against the checkpoint's {@code DIGESTS}.
   *
   * @throws TqException {@code CORRUPT_DATA} naming the file when it is missing, unreadable, or its
   *     size or CRC32C differs from the digest
   */
  private static byte[] readState(Path checkpoint) {
    Path file = checkpoint.resolve(STATE_FILE);
    Path digests = checkpoint.resolve(DIGESTS_FILE);
    try {
      byte[] state = Files.readAllBytes(file);
      String[] line = Files.readString(digests, StandardCharsets.UTF_8).strip().split(" ");
      String found = STATE_FILE + " " + state.length + " " + String.format("%08x", crc32c(state));
      if (line.length != 3 || !String.join(" ", line).equals(found)) {
        throw new TqException(
            ErrorCode.CORRUPT_DATA,
            "controller checkpoint "
                + file
                + " does not match its digest in "
                + digests
                + ": expected '"
                + String.join(" ", line)
                + "', found '"
                + found
                + "'; refusing to start");
      }
      return state;
    } catch (IOException e) {
      throw new TqException(
          ErrorCode.CORRUPT_DATA, "cannot read the controller checkpoint " + file + ": " + e, e);
    }
  }
}
