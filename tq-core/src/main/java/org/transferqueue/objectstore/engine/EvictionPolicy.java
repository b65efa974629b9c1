package org.transferqueue.objectstore.engine;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Which objects a {@link StoreMaster} evicts, and when.
 *
 * <p><b>Rules.</b> Only complete objects with no write in progress and no active lease are
 * candidates, oldest lease first; hard-pinned objects never are. Soft-pinned objects whose pin has
 * not expired are taken only in a second pass, and only when {@link
 * MasterConfig#allowEvictSoftPinned()} allows it. After a write ends, usage above the high
 * watermark is brought down to the low one ({@link #maybeEvict}); an allocation that does not fit
 * evicts until it does ({@link #evictUntil}).
 *
 * <p>It also counts the objects that are not hard-pinned: when there are none (the usual state of a
 * TransferQueue store, which hard-pins everything) eviction skips its scan.
 *
 * <p>Not thread-safe: used only under {@code StoreMaster.lock}, like the entries it looks at.
 */
final class EvictionPolicy {
  /** What eviction needs of the master, all called under its lock. */
  interface Target {
    /**
     * Every entry of the store.
     *
     * @return the entries, not to be changed while iterating
     */
    Collection<StoreMaster.Entry> entries();

    /**
     * Erases an entry and gives its memory back (at once, unless a reader still holds it).
     *
     * @param victim the entry to evict
     */
    void erase(StoreMaster.Entry victim);
  }

  private final Target target;
  private final LongSupplier usedBytes;
  private final boolean allowEvictSoftPinned;
  private final double highWatermarkBytes;
  private final double lowWatermarkBytes;
  private long unpinnedObjects;
  private long evictedObjects;

  EvictionPolicy(Target target, LongSupplier usedBytes, MasterConfig config, long capacityBytes) {
    this.target = target;
    this.usedBytes = usedBytes;
    this.allowEvictSoftPinned = config.allowEvictSoftPinned();
    this.highWatermarkBytes = config.evictionHighWatermark() * capacityBytes;
    this.lowWatermarkBytes =
        (config.evictionHighWatermark() - config.evictionRatio()) * capacityBytes;
  }

  /** Counts an entry that became present without a hard pin. */
  void unpinnedAdded() {
    unpinnedObjects++;
  }

  /** Counts an entry without a hard pin that was removed or became hard-pinned. */
  void unpinnedRemoved() {
    unpinnedObjects--;
  }

  long unpinnedObjects() {
    return unpinnedObjects;
  }

  long evictedObjects() {
    return evictedObjects;
  }

  /** Evicts down to the low watermark when usage is above the high watermark. */
  void maybeEvict(long now) {
    if (usedBytes.getAsLong() <= highWatermarkBytes) {
      return;
    }
    for (boolean softPass : new boolean[] {false, true}) {
      if (softPass && !allowEvictSoftPinned) {
        break;
      }
      for (StoreMaster.Entry victim : candidates(now, null, softPass)) {
        if (usedBytes.getAsLong() <= lowWatermarkBytes) {
          return;
        }
        evict(victim);
      }
    }
  }

  /**
   * Evicts one candidate after another until {@code attempt} succeeds.
   *
   * @param now the time of the request
   * @param exempt an entry never to evict (the one being upserted), or null
   * @param attempt tries the allocation; null while it does not fit
   * @return the first non-null result of {@code attempt}, or null when nothing more can be evicted
   */
  <T> T evictUntil(long now, StoreMaster.Entry exempt, Supplier<T> attempt) {
    T result = null;
    for (boolean softPass : new boolean[] {false, true}) {
      if (softPass && !allowEvictSoftPinned) {
        break;
      }
      for (StoreMaster.Entry victim : candidates(now, exempt, softPass)) {
        evict(victim);
        result = attempt.get();
        if (result != null) {
          return result;
        }
      }
    }
    return result;
  }

  /**
   * Whether an entry has an active read lease.
   *
   * @param entry the entry
   * @param now the time
   * @return true until its lease deadline
   */
  static boolean leased(StoreMaster.Entry entry, long now) {
    return now - entry.leaseDeadlineNs < 0;
  }

  /**
   * Eviction candidates, oldest lease first: complete, not hard-pinned, unleased objects with no
   * write in progress; soft-pinned ones (pin not yet expired) only in the soft pass.
   */
  private List<StoreMaster.Entry> candidates(long now, StoreMaster.Entry exempt, boolean softPass) {
    if (unpinnedObjects == 0) {
      return List.of();
    }
    List<StoreMaster.Entry> candidates = new ArrayList<>();
    for (StoreMaster.Entry entry : target.entries()) {
      boolean softPinned = entry.softPinned && now - entry.softPinDeadlineNs < 0;
      if (entry != exempt
          && entry.pending == null
          && !entry.hardPinned
          && !leased(entry, now)
          && softPinned == softPass) {
        candidates.add(entry);
      }
    }
    candidates.sort(Comparator.comparingLong(entry -> entry.leaseDeadlineNs - now));
    return candidates;
  }

  private void evict(StoreMaster.Entry victim) {
    target.erase(victim);
    evictedObjects++;
  }
}
