package org.transferqueue.remote;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.FileDigest;
import org.transferqueue.transport.ReceivedRequest;
import org.transferqueue.transport.Reply;

/**
 * The checkpoint messages of one storage server (a storage unit or an object-store node): save a
 * file, then the two phases of a load across servers.
 *
 * <pre>{@code
 * SAVE     [path]                          -> [size, crc32c]   file written on this host
 * PREPARE  [token, path, size, crc32c]     -> []               read, verify and stage; nothing applied
 * COMMIT   [token]                         -> []               apply the staged load (cannot fail)
 * ABORT    [token]                         -> []               discard it (unknown tokens ignored)
 * }</pre>
 *
 * A size of -1 in PREPARE checks only the file's structure. The client chooses the token, so that
 * it can abort a prepare whose reply it never received. A server stages at most one load: a new
 * PREPARE discards the one before (a client that died between the phases leaves no memory behind
 * beyond the next load), and closing discards it too. Thread-safe (methods are synchronized;
 * reading the file happens outside the lock).
 */
public final class StagedCheckpointLoads implements AutoCloseable {
  private final String server;
  private final Function<Path, FileDigest> save;
  private final BiFunction<Path, FileDigest, StorageManager.PreparedLoad> prepare;
  private long stagedToken;
  private StorageManager.PreparedLoad staged;
  private boolean closed;

  /**
   * Creates the handler state.
   *
   * @param server names the server in errors
   * @param save writes the server's checkpoint file and returns its digest
   * @param prepare reads, verifies and stages a file (expected digest or null)
   */
  public StagedCheckpointLoads(
      String server,
      Function<Path, FileDigest> save,
      BiFunction<Path, FileDigest, StorageManager.PreparedLoad> prepare) {
    this.server = server;
    this.save = save;
    this.prepare = prepare;
  }

  /**
   * SAVE: creates the file's directory, writes the file, replies with its digest.
   *
   * @param request the request
   * @return the reply
   */
  public Reply onSave(ReceivedRequest request) {
    String path =
        CheckpointMessages.Save.decode(request.metadata(), server + " checkpoint save").path();
    Path file = Path.of(path);
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
    } catch (IOException e) {
      throw new StorageException(
          ErrorCode.STORAGE_ERROR, "cannot create the directory of " + file + ": " + e, e);
    }
    FileDigest digest = save.apply(file);
    return Reply.of(CheckpointMessages.encodeDigest(digest));
  }

  /**
   * PREPARE: discards any earlier staged load, then stages this one.
   *
   * @param request the request
   * @return the reply
   */
  public Reply onPrepare(ReceivedRequest request) {
    CheckpointMessages.Prepare prepared =
        CheckpointMessages.Prepare.decode(request.metadata(), server + " checkpoint prepare");
    long token = prepared.token();
    Path file = Path.of(prepared.path());
    FileDigest expected = prepared.expected();
    discard();
    StorageManager.PreparedLoad load = prepare.apply(file, expected);
    synchronized (this) {
      if (closed) {
        load.close();
        throw new StorageException(ErrorCode.CLOSED, server + " is closing");
      }
      discardLocked();
      stagedToken = token;
      staged = load;
    }
    return Reply.empty();
  }

  /**
   * COMMIT: applies the load staged under the token.
   *
   * @param request the request
   * @return the reply
   */
  public synchronized Reply onCommit(ReceivedRequest request) {
    long token = token(request, "commit");
    if (staged == null || stagedToken != token) {
      throw new StorageException(
          ErrorCode.ILLEGAL_STATE,
          server
              + " has no checkpoint load staged under token "
              + token
              + " (aborted or replaced)");
    }
    StorageManager.PreparedLoad load = staged;
    staged = null;
    try (load) {
      load.commit();
    }
    return Reply.empty();
  }

  /**
   * ABORT: discards the load staged under the token, if any.
   *
   * @param request the request
   * @return the reply
   */
  public synchronized Reply onAbort(ReceivedRequest request) {
    long token = token(request, "abort");
    if (staged != null && stagedToken == token) {
      discardLocked();
    }
    return Reply.empty();
  }

  private long token(ReceivedRequest request, String what) {
    return CheckpointMessages.Token.decode(request.metadata(), server + " checkpoint " + what)
        .token();
  }

  private synchronized void discard() {
    discardLocked();
  }

  private void discardLocked() {
    if (staged != null) {
      StorageManager.PreparedLoad load = staged;
      staged = null;
      load.close();
    }
  }

  /** Discards a staged load; later prepares fail with {@code CLOSED}. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    discardLocked();
  }
}
