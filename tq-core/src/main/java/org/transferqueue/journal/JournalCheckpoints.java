package org.transferqueue.journal;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.transferqueue.DurableFiles;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The checkpoints a role keeps next to its journal: {@code <dir>/checkpoint-<LSN, 20 digits>/},
 * each holding the role's state as of that LSN in the role's own checkpoint format.
 *
 * <p>A checkpoint is written into {@code <dir>/.checkpoint-<LSN>.tmp/}, which the writer callback
 * fills and fsyncs file by file; then the directory is fsynced, renamed atomically to its final
 * name and the parent fsynced. Only then are older checkpoints (and leftovers of interrupted
 * writes) deleted, and the caller may {@link Journal#truncateThrough truncate the journal}. So at
 * every instant the newest complete checkpoint plus the journal after it hold every acknowledged
 * change.
 */
public final class JournalCheckpoints {
  private static final System.Logger LOG = System.getLogger(JournalCheckpoints.class.getName());
  private static final Pattern NAME = Pattern.compile("checkpoint-(\\d{20})");
  private static final String TEMP_PREFIX = ".checkpoint-";

  private JournalCheckpoints() {}

  /** Writes a role's state into a fresh directory. */
  @FunctionalInterface
  public interface StateWriter {
    /**
     * Writes (and fsyncs) the state's files into {@code directory}.
     *
     * @param directory an empty directory
     * @throws IOException on a write error
     */
    void write(Path directory) throws IOException;
  }

  /** Writes a role's state into a fresh directory and says which LSN the state covers. */
  @FunctionalInterface
  public interface SnapshotWriter {
    /**
     * Writes (and fsyncs) the state's files into {@code directory}.
     *
     * @param directory an empty directory
     * @return the journal LSN the written state covers (read at the instant the state was taken)
     * @throws IOException on a write error
     */
    long write(Path directory) throws IOException;
  }

  /**
   * One complete checkpoint.
   *
   * @param directory its directory
   * @param lsn the journal LSN it covers
   */
  public record Checkpoint(Path directory, long lsn) {}

  /**
   * The newest complete checkpoint in a journal directory.
   *
   * @param journalDir the role's journal directory (absent: none)
   * @return the checkpoint, or empty
   */
  public static Optional<Checkpoint> latest(Path journalDir) {
    return list(journalDir).stream().reduce((a, b) -> b);
  }

  private static List<Checkpoint> list(Path journalDir) {
    if (!Files.isDirectory(journalDir)) {
      return List.of();
    }
    try (Stream<Path> entries = Files.list(journalDir)) {
      return entries
          .map(
              path -> {
                Matcher matcher = NAME.matcher(path.getFileName().toString());
                return matcher.matches() && Files.isDirectory(path)
                    ? new Checkpoint(path, Long.parseLong(matcher.group(1)))
                    : null;
              })
          .filter(c -> c != null)
          .sorted((a, b) -> Long.compare(a.lsn(), b.lsn()))
          .toList();
    } catch (IOException e) {
      throw new TqException(
          ErrorCode.STORAGE_ERROR, "cannot list checkpoints in " + journalDir + ": " + e, e);
    }
  }

  /**
   * Writes a checkpoint covering {@code lsn} and deletes the older ones. The journal is not
   * touched: call {@link Journal#truncateThrough(long)} with the same LSN afterwards.
   *
   * @param journalDir the role's journal directory
   * @param lsn the LSN the state covers
   * @param writer writes the state's files
   * @return the new checkpoint
   * @throws TqException {@link ErrorCode#STORAGE_ERROR} on an I/O error (the temporary directory is
   *     deleted; the previous checkpoint stays)
   */
  public static Checkpoint write(Path journalDir, long lsn, StateWriter writer) {
    return write(
        journalDir,
        directory -> {
          writer.write(directory);
          return lsn;
        });
  }

  /**
   * Writes a checkpoint whose LSN the writer determines while it takes the state (under the lock
   * that orders the role's changes), and deletes the older ones.
   *
   * @param journalDir the role's journal directory
   * @param writer writes the state's files and returns the LSN they cover
   * @return the new checkpoint
   * @throws TqException {@link ErrorCode#STORAGE_ERROR} on an I/O error (the temporary directory is
   *     deleted; the previous checkpoint stays)
   */
  public static Checkpoint write(Path journalDir, SnapshotWriter writer) {
    Path temp = journalDir.resolve(TEMP_PREFIX + "pending.tmp");
    Path target = null;
    long lsn;
    try {
      DurableFiles.deleteTree(temp);
      Files.createDirectories(temp);
      lsn = writer.write(temp);
      target = journalDir.resolve("checkpoint-" + String.format("%020d", lsn));
      if (Files.exists(target)) {
        // The same LSN was checkpointed before: that state is this one; keep the complete copy.
        DurableFiles.deleteTree(temp);
        return new Checkpoint(target, lsn);
      }
      DurableFiles.syncDirectory(temp);
      try {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temp, target);
      }
      DurableFiles.syncDirectory(journalDir);
    } catch (IOException | RuntimeException e) {
      try {
        DurableFiles.deleteTree(temp);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      if (e instanceof TqException tq) {
        throw tq;
      }
      throw new TqException(
          ErrorCode.STORAGE_ERROR,
          "cannot write checkpoint " + (target == null ? temp : target) + ": " + e,
          e);
    }
    deleteOlder(journalDir, lsn);
    return new Checkpoint(target, lsn);
  }

  private static void deleteOlder(Path journalDir, long lsn) {
    try (Stream<Path> entries = Files.list(journalDir)) {
      for (Path path : entries.toList()) {
        String file = path.getFileName().toString();
        Matcher matcher = NAME.matcher(file);
        boolean older = matcher.matches() && Long.parseLong(matcher.group(1)) < lsn;
        boolean leftover = file.startsWith(TEMP_PREFIX) && file.endsWith(".tmp");
        if (older || leftover) {
          DurableFiles.deleteTree(path);
        }
      }
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot delete old checkpoints in " + journalDir, e);
    }
  }
}
