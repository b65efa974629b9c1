package org.transferqueue.server.stress;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which rows of the shared partition were written and not yet read, so that every read row can be
 * matched to exactly one write. A row is known by {@code (client id, sequence)}. A writer announces
 * its rows before the put (a reader may fetch them the moment storage notifies the controller,
 * before the writer's put returns), records each row's global index once the put returned, and
 * marks the rows uncertain when the put failed. A reader claims each row it read: the claim fails
 * for a row never written or already read (misdelivery), and for a row read under another global
 * index than the one its put returned. Thread-safe.
 */
final class SharedLedger {
  /** The global index of a row whose put has not returned yet. */
  private static final long UNPLACED = -1;

  private final Map<Long, Long> pending = new ConcurrentHashMap<>();
  private final Set<Long> uncertain = ConcurrentHashMap.newKeySet();

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

  /** Rows written and acknowledged that nobody read (yet). */
  int unread() {
    return pending.size();
  }

  /** A few unread rows, for the report. */
  List<String> sampleUnread(int max) {
    return pending.keySet().stream()
        .limit(max)
        .map(id -> "client " + (id >>> 40) + " sequence " + (id & ((1L << 40) - 1)))
        .toList();
  }
}
