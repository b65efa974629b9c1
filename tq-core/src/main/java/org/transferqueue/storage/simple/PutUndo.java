package org.transferqueue.storage.simple;

/**
 * What a committed put to one storage unit replaced, so that the put can be taken back when a later
 * step of the same request fails (another unit, or the controller notification).
 *
 * <p>Exactly one of {@link #rollback()} or {@link #close()} must be called; both release the
 * references the record holds. Not thread-safe; owned by the request that made it.
 */
interface PutUndo extends AutoCloseable {
  /** An undo record for a put that changed nothing. */
  PutUndo NONE =
      new PutUndo() {
        @Override
        public void rollback() {
          // nothing was committed
        }

        @Override
        public void close() {
          // nothing is held
        }
      };

  /**
   * Restores every cell the put replaced, unless a later put has replaced it again (last write
   * wins), and removes samples and fields the put created that hold nothing any more.
   */
  void rollback();

  /** Keeps the put and frees what it replaced. */
  @Override
  void close();
}
