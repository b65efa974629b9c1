package org.transferqueue.client;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The acknowledgement side of a {@link StreamingLoader}: the delivered micro-batches not yet
 * acknowledged, each with its deadline. An expired one goes back to the front of the loader's
 * delivery queue as a redelivery (its data read anew, its attempt incremented); an acknowledged one
 * is forgotten, together with a redelivery of it that is still queued. With no timeout
 * (acknowledgements off) nothing is tracked and delivery is at most once.
 *
 * <p>Not thread-safe: guarded by the loader's lock, under which every method is called.
 */
final class Redeliveries {
  private final long timeoutNs;
  private final LinkedHashMap<Long, Pending> unacked = new LinkedHashMap<>();

  /**
   * Creates the tracker.
   *
   * @param timeoutNs the acknowledgement deadline after a delivery in nanoseconds; 0 for none
   */
  Redeliveries(long timeoutNs) {
    this.timeoutNs = timeoutNs;
  }

  /** Whether deliveries must be acknowledged. */
  boolean enabled() {
    return timeoutNs > 0;
  }

  /** Records a delivery at {@code now}, when acknowledgements are on. */
  void delivered(StreamingLoader.Item item, long now) {
    if (enabled()) {
      unacked.put(item.id(), new Pending(item, now + timeoutNs));
    }
  }

  /**
   * Moves the deliveries whose deadline passed to the front of {@code queue}, in delivery order, as
   * redeliveries.
   *
   * @param now the current time of the loader's clock
   * @param queue the loader's delivery queue
   * @return the earliest deadline still pending, or {@link Long#MAX_VALUE} when none is
   */
  long requeueExpired(long now, ArrayDeque<StreamingLoader.Item> queue) {
    long earliest = Long.MAX_VALUE;
    List<StreamingLoader.Item> expired = new ArrayList<>();
    Iterator<Pending> it = unacked.values().iterator();
    while (it.hasNext()) {
      Pending pending = it.next();
      if (pending.deadline() - now <= 0) {
        expired.add(pending.item().redelivery());
        it.remove();
      } else {
        earliest = Math.min(earliest, pending.deadline());
      }
    }
    for (StreamingLoader.Item item : expired.reversed()) {
      queue.addFirst(item);
    }
    return earliest;
  }

  /**
   * Forgets an acknowledged delivery and a queued redelivery of it.
   *
   * @param itemId the micro-batch's id
   * @param queue the loader's delivery queue
   */
  void acknowledge(long itemId, ArrayDeque<StreamingLoader.Item> queue) {
    unacked.remove(itemId);
    queue.removeIf(item -> item.id() == itemId && item.data() == null);
  }

  /** Whether no delivery awaits its acknowledgement. */
  boolean isEmpty() {
    return unacked.isEmpty();
  }

  /** Forgets every delivery (reset, step, close). */
  void clear() {
    unacked.clear();
  }

  /** A delivered, unacknowledged micro-batch and its deadline. */
  private record Pending(StreamingLoader.Item item, long deadline) {}
}
