package org.transferqueue.remote;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongFunction;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.storage.StorageManager;

/**
 * A checkpoint load across several storage servers in two phases: every server reads, verifies and
 * stages its own file (prepare), and only when all of them succeeded does any of them apply it
 * (commit); if one fails, every server discards what it staged (abort) and nothing changed.
 *
 * <pre>{@code
 * client            unit 0           unit 1
 *   |-- PREPARE ------>|                |      read + CRC32C + stage, nothing applied
 *   |-- PREPARE ---------------------->|
 *   |<-- ok -----------|<-- ok ---------|
 *   |   (controller state replaced by the caller here)
 *   |-- COMMIT ------->|-- COMMIT ----->|      swap staged data in
 *
 * any PREPARE failing:  ABORT to every server, the first failure is thrown
 * }</pre>
 *
 * <p>A commit only swaps staged memory in, so it fails only when a server dies or becomes
 * unreachable between the phases; the other servers still commit, and the error names the server.
 * Not thread-safe beyond {@link #commit} and {@link #close} being synchronized.
 */
public final class DistributedCheckpointLoad implements StorageManager.PreparedLoad {
  /**
   * One server taking part: its name and its three calls, each with the load's token.
   *
   * @param name names the server in errors
   * @param prepare reads, verifies and stages the server's file under the token
   * @param commit applies what the server staged under the token
   * @param abort discards what the server staged under the token
   */
  public record Participant(
      String name,
      LongFunction<CompletableFuture<Void>> prepare,
      LongFunction<CompletableFuture<Void>> commit,
      LongFunction<CompletableFuture<Void>> abort) {}

  private final List<Participant> participants;
  private final long token;
  private boolean done;

  private DistributedCheckpointLoad(List<Participant> participants, long token) {
    this.participants = participants;
    this.token = token;
  }

  /**
   * Runs the prepare phase on every participant in parallel.
   *
   * @param participants the servers
   * @return the load, staged everywhere
   * @throws TqException the first failure (naming its server), after every participant was told to
   *     abort
   */
  public static DistributedCheckpointLoad prepare(List<Participant> participants) {
    long token = ThreadLocalRandom.current().nextLong();
    List<CompletableFuture<Void>> calls = new ArrayList<>();
    for (Participant p : participants) {
      calls.add(p.prepare().apply(token));
    }
    RuntimeException failure =
        RemoteCalls.joinAll(calls, (i, e) -> named(participants.get(i), "prepare", e));
    DistributedCheckpointLoad load =
        new DistributedCheckpointLoad(List.copyOf(participants), token);
    if (failure != null) {
      load.abortAll(failure);
      throw failure;
    }
    return load;
  }

  private static RuntimeException named(Participant p, String phase, RuntimeException e) {
    ErrorCode code = e instanceof TqException tq ? tq.code() : ErrorCode.STORAGE_ERROR;
    return new StorageException(
        code, p.name() + " failed to " + phase + " the checkpoint load: " + e.getMessage(), e);
  }

  /**
   * Makes every participant apply its staged load.
   *
   * @throws StorageException {@code ILLEGAL_STATE} if already committed or closed; the first
   *     failing server's error otherwise (the others committed)
   */
  @Override
  public synchronized void commit() {
    if (done) {
      throw new StorageException(ErrorCode.ILLEGAL_STATE, "checkpoint load already finished");
    }
    done = true;
    List<CompletableFuture<Void>> calls = new ArrayList<>();
    for (Participant p : participants) {
      calls.add(p.commit().apply(token));
    }
    RuntimeException failure =
        RemoteCalls.joinAll(calls, (i, e) -> named(participants.get(i), "commit", e));
    if (failure != null) {
      throw failure;
    }
  }

  /** Tells every participant to discard its staged load, unless committed. Idempotent. */
  @Override
  public synchronized void close() {
    if (!done) {
      done = true;
      abortAll(null);
    }
  }

  private void abortAll(RuntimeException primary) {
    List<CompletableFuture<Void>> calls = new ArrayList<>();
    for (Participant p : participants) {
      calls.add(p.abort().apply(token));
    }
    for (CompletableFuture<Void> call : calls) {
      try {
        RemoteCalls.join(call);
      } catch (RuntimeException e) {
        // A server that cannot be reached discards its staged load at its next prepare or close.
        if (primary != null) {
          primary.addSuppressed(e);
        }
      }
    }
  }
}
