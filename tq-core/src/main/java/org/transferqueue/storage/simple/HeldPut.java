package org.transferqueue.storage.simple;

/**
 * A put committed to one storage unit whose outcome its caller still decides: {@link #close()}
 * keeps it, {@link #rollback()} takes it back (unless a later put replaced the cells again). Used
 * when a request spans several units, or a notification follows, so that a failure later in the
 * request leaves nothing half written.
 *
 * <p>Exactly one of {@link #rollback()} or {@link #close()} decides; later calls do nothing. Until
 * then the put keeps the cells it replaced alive. Thread-safe.
 */
public final class HeldPut implements AutoCloseable {
  private final PutUndo undo;
  private boolean done;

  HeldPut(PutUndo undo) {
    this.undo = undo;
  }

  /** Takes the put back; does nothing if it was already decided. */
  public synchronized void rollback() {
    if (!done) {
      done = true;
      undo.rollback();
    }
  }

  /** Keeps the put and frees what it replaced; does nothing if it was already decided. */
  @Override
  public synchronized void close() {
    if (!done) {
      done = true;
      undo.close();
    }
  }
}
