package org.transferqueue.server.stress;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Which rows of the shared partition were written and not yet read, so that every read row can be
 * matched to exactly one write. A row is known by {@code (client id, sequence)}. A writer announces
 * its rows before the put (a reader may fetch them the moment storage notifies the controller,
 * before the writer's put returns), records each row's global index once the put returned, and
 * marks the rows uncertain when the put failed. A reader claims each row it read: the claim fails
 * for a row never written or already read (misdelivery), and for a row read under another global
 * index than the one its put returned. Thread-safe.
 *
 * <p>Across crashes: a row whose put failed is uncertain (it may or may not have been stored, so
 * reading it once is fine and not reading it is too). A fetch that failed because its role was
 * unreachable may have consumed rows whose metadata never reached a client (the controller recorded
 * the consumption, then died before its reply left); such rows are never fetched again, but they
 * are not lost if they still read back by index after the run. Each such failed fetch, and each
 * read given up after a fetch, adds its batch size to {@link #strandedAllowance()}: at most that
 * many rows may end up {@link #stranded} rather than read; the rest are lost. A row read twice is
 * always wrong: the controller journals a consumption before its reply leaves, so a consumption a
 * client saw is never undone by a crash.
 */
final class SharedLedger {
  /** The global index of a row whose put has not returned yet. */
  private static final long UNPLACED = -1;

  private final Map<Long, Long> pending = new ConcurrentHashMap<>();
  private final Set<Long> uncertain = ConcurrentHashMap.newKeySet();
  private final LongAdder strandedAllowance = new LongAdder();
  private final LongAdder stranded = new LongAdder();

  /** What a claim found. */
  enum Claim {
    /** Written, unread, at the expected index. */
    OK,
    /** Its put failed: whether it was stored is unknown, so reading it is neither good nor bad. */
    UNCERTAIN,
    /** Never written, or read before. */
    NOT_PENDING,
    /** Read under another global index than its put returned. */
    WRONG_INDEX
  }

  static long rowId(long clientId, long sequence) {
    return (clientId << 40) | sequence;
  }

  void announce(long clientId, long firstSequence, int rows) {
    for (int i = 0; i < rows; i++) {
      pending.put(rowId(clientId, firstSequence + i), UNPLACED);
    }
  }

  void placed(long clientId, long firstSequence, List<Long> globalIndexes) {
    for (int i = 0; i < globalIndexes.size(); i++) {
      // A reader may have claimed the row already: then there is nothing to place.
      pending.replace(rowId(clientId, firstSequence + i), UNPLACED, globalIndexes.get(i));
    }
  }

  void failed(long clientId, long firstSequence, int rows) {
    for (int i = 0; i < rows; i++) {
      long id = rowId(clientId, firstSequence + i);
      uncertain.add(id);
      pending.remove(id);
    }
  }

  Claim claim(long clientId, long sequence, long globalIndex) {
    long id = rowId(clientId, sequence);
    Long placedAt = pending.remove(id);
    if (placedAt == null) {
      return uncertain.remove(id) ? Claim.UNCERTAIN : Claim.NOT_PENDING;
    }
    return placedAt == UNPLACED || placedAt == globalIndex ? Claim.OK : Claim.WRONG_INDEX;
  }

  /**
   * A fetch failed with its role unreachable, or a read after a fetch was given up: up to {@code
   * rows} rows may be consumed without any client having read them.
   */
  void mayHaveConsumed(int rows) {
    strandedAllowance.add(rows);
  }

  /** The rows failed fetches and given-up reads could have consumed unread. */
  long strandedAllowance() {
    return strandedAllowance.sum();
  }

  /**
   * A pending row read back intact by its index after the run: acknowledged and kept, but consumed
   * without reaching a reader. Claims it.
   *
   * @return whether the row was pending at that index
   */
  boolean stranded(long clientId, long sequence, long globalIndex) {
    long id = rowId(clientId, sequence);
    if (pending.remove(id, globalIndex)) {
      stranded.increment();
      return true;
    }
    return false;
  }

  /** Rows found {@link #stranded}. */
  long strandedRows() {
    return stranded.sum();
  }

  /**
   * The pending rows by the global index their put returned.
   *
   * @return global index to row id ({@link #writer} and {@link #sequence} take it apart)
   */
  Map<Long, Long> pendingByIndex() {
    Map<Long, Long> out = new HashMap<>();
    pending.forEach(
        (id, index) -> {
          if (index != UNPLACED) {
            out.put(index, id);
          }
        });
    return out;
  }

  static long writer(long rowId) {
    return rowId >>> 40;
  }

  static long sequence(long rowId) {
    return rowId & ((1L << 40) - 1);
  }

  /** Rows written and acknowledged that nobody read (yet). */
  int unread() {
    return pending.size();
  }

  /** A few unread rows, for the report. */
  List<String> sampleUnread(int max) {
    return pending.keySet().stream()
        .limit(max)
        .map(id -> "client " + writer(id) + " sequence " + sequence(id))
        .toList();
  }
}
