package org.transferqueue.objectstore.engine;

import java.lang.foreign.MemorySegment;

/**
 * A batch read started with {@link EmbeddedObjectStore#startReads}: every key found can be read
 * straight from the store's segment ({@link #source}) until {@link #close}. Until then its memory
 * is neither freed nor reused, even if the key is removed or overwritten meanwhile (the store frees
 * it when the last reader closes), so a store node can write a READ reply from the segment itself
 * instead of copying every object into a reply buffer first.
 *
 * <pre>{@code
 * try (PendingReads reads = store.startReads(keys, capacities)) {
 *   for (int i = 0; i < reads.size(); i++) {
 *     if (reads.result(i) >= 0) { send(reads.source(i)); }
 *   }
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one owner at a time, which may hand it to another thread (a transport closes
 * it once the reply is written). {@link #close} is idempotent and works after the store closed.
 */
public final class PendingReads implements AutoCloseable {
  private final StoreMaster master;
  private final StoreMaster.ReadTicket[] tickets;
  private final long[] results;
  private boolean closed;

  /**
   * The reads of {@code tickets}, released through {@code master} (null when no ticket was
   * granted), which keeps working after the store closed.
   */
  PendingReads(StoreMaster master, StoreMaster.ReadTicket[] tickets, long[] results) {
    this.master = master;
    this.tickets = tickets;
    this.results = results;
  }

  /**
   * The number of keys of the batch.
   *
   * @return the key count
   */
  public int size() {
    return results.length;
  }

  /**
   * The outcome of key {@code i}'s read.
   *
   * @param i the key's position in the batch
   * @return the object's size in bytes, or its Mooncake error code as {@link
   *     EmbeddedObjectStore#batchGetInto} would give it ({@code -704} not found, {@code -600} an
   *     invalid key or a capacity below the size, {@code -703} a write not yet committed)
   */
  public long result(int i) {
    return results[i];
  }

  /**
   * Key {@code i}'s bytes in the store.
   *
   * @param i the key's position in the batch
   * @return a read-only segment of exactly the object's size, valid until {@link #close}; null when
   *     the key was not read (see {@link #result})
   * @throws IllegalStateException after {@link #close}
   */
  public MemorySegment source(int i) {
    if (closed) {
      throw new IllegalStateException("the pending reads were closed");
    }
    StoreMaster.ReadTicket ticket = tickets[i];
    return ticket == null ? null : ticket.allocation().memory.asReadOnly();
  }

  /** Ends every read: the store may free or reuse the objects' memory from now on. Idempotent. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      if (master != null) {
        master.releaseReads(tickets);
      }
    }
  }
}
