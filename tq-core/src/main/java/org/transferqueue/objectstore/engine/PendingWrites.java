package org.transferqueue.objectstore.engine;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.objectstore.StoreStatus;

/**
 * A batch write started with {@link EmbeddedObjectStore#startWrites}: every accepted key has memory
 * in the store's segment that the caller fills (for example a transport reading a request body
 * straight into it), and no key is visible until {@link #commit}. {@link #close} revokes whatever
 * was not committed, so a write that fails half-way gives its memory back and stays invisible.
 *
 * <pre>{@code
 * try (PendingWrites writes = store.startWrites(keys, sizes, config, false)) {
 *   for (int i = 0; i < keys.size(); i++) {
 *     if (writes.destination(i) != null) { fill(writes.destination(i)); }
 *   }
 *   int[] codes = writes.commit();
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one owner at a time, which may hand it to another thread (the calls take the
 * store's lifecycle lock themselves). The store must stay open until the writes are committed or
 * closed; after the store closed, {@link #commit} reports {@code -600} for every accepted key.
 */
public final class PendingWrites implements AutoCloseable {
  private static final int OK = StoreStatus.OK.code();

  private final EmbeddedObjectStore store;
  private final StoreMaster.WriteTicket[] tickets;
  private final int[] codes;
  private boolean finished;

  PendingWrites(EmbeddedObjectStore store, StoreMaster.WriteTicket[] tickets, int[] codes) {
    this.store = store;
    this.tickets = tickets;
    this.codes = codes;
  }

  /**
   * The number of keys of the batch.
   *
   * @return the key count
   */
  public int size() {
    return codes.length;
  }

  /**
   * Where key {@code i}'s bytes go.
   *
   * @param i the key's position in the batch
   * @return a segment of exactly the key's size inside the store, or null when the key was refused
   *     (see {@link #code})
   */
  public MemorySegment destination(int i) {
    StoreMaster.WriteTicket ticket = tickets[i];
    return ticket == null ? null : ticket.allocation().memory;
  }

  /**
   * The result of starting key {@code i}'s write.
   *
   * @param i the key's position in the batch
   * @return 0 when the key has a destination, else its Mooncake error code ({@code -600} for an
   *     invalid or repeated key or an empty value, {@code -705} for a put on a present key, {@code
   *     -200} when no memory is left)
   */
  public int code(int i) {
    return codes[i];
  }

  /**
   * Makes every accepted key visible (put or upsert as started), as the end of a batch write.
   *
   * @return one Mooncake result code per key: the start's code of a refused key, else the commit's
   * @throws IllegalStateException when already committed or closed
   */
  public int[] commit() {
    boolean[] all = new boolean[tickets.length];
    Arrays.fill(all, true);
    return finish(all);
  }

  /**
   * Commits the keys whose bytes arrived and revokes the others ({@code -800}, transfer failed).
   *
   * @param received per key, whether its destination was filled
   * @return one Mooncake result code per key
   * @throws IllegalStateException when already committed or closed
   */
  public int[] commit(boolean[] received) {
    if (received.length != tickets.length) {
      throw new IllegalArgumentException(
          "received has " + received.length + " entries for " + tickets.length + " keys");
    }
    return finish(received.clone());
  }

  private int[] finish(boolean[] commit) {
    if (finished) {
      throw new IllegalStateException("the pending writes were already finished");
    }
    finished = true;
    int[] result = codes.clone();
    store.finishWrites(tickets, commit, result);
    for (int i = 0; i < tickets.length; i++) {
      if (tickets[i] != null && !commit[i] && result[i] == OK) {
        result[i] = StoreStatus.TRANSFER_FAIL.code();
      }
    }
    return result;
  }

  /** Revokes every write not yet committed: those keys stay invisible. Idempotent. */
  @Override
  public void close() {
    if (!finished) {
      finished = true;
      store.finishWrites(tickets, new boolean[tickets.length], codes.clone());
    }
  }

  /** The keys' destinations for a log line. */
  @Override
  public String toString() {
    return "PendingWrites" + List.of(Arrays.stream(codes).boxed().toArray());
  }
}
