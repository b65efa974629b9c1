package org.transferqueue.storage.simple;

import java.util.Arrays;

/**
 * Maps the global indexes held by one storage unit to dense row slots, without boxing.
 *
 * <p>An open-addressing hash table with linear probing from {@code long} global index to {@code
 * int} slot, plus a free list of slots so that the per-field cell arrays of {@link StorageUnit}
 * stay as dense as the number of samples held. Removal uses backward-shift deletion, so there are
 * no tombstones.
 *
 * <p>Not thread-safe: the owning {@link StorageUnit} guards it with its lock.
 */
final class SampleSlots {
  private static final long EMPTY = -1L;
  private static final int MIN_TABLE = 16;

  private long[] keys;
  private int[] values;
  private int size;
  private int mask;

  private int[] freeSlots = new int[MIN_TABLE];
  private int freeCount;
  private int nextSlot;

  SampleSlots() {
    keys = new long[MIN_TABLE];
    values = new int[MIN_TABLE];
    Arrays.fill(keys, EMPTY);
    mask = MIN_TABLE - 1;
  }

  /** Number of samples mapped. */
  int size() {
    return size;
  }

  /** One more than the highest slot ever handed out: the length the slot arrays must have. */
  int slotBound() {
    return nextSlot;
  }

  /** The slot of {@code gi}, or -1 when absent (always for a negative {@code gi}). */
  int get(long gi) {
    if (gi < 0) {
      // Never stored; -1 is also the empty marker, which a probe would take for a match.
      return -1;
    }
    int i = index(gi);
    while (true) {
      long k = keys[i];
      if (k == gi) {
        return values[i];
      }
      if (k == EMPTY) {
        return -1;
      }
      i = (i + 1) & mask;
    }
  }

  /**
   * The slot of {@code gi}, assigning a fresh one if absent.
   *
   * @throws IllegalArgumentException for a negative {@code gi} (callers check global indexes first)
   */
  int getOrAssign(long gi) {
    if (gi < 0) {
      throw new IllegalArgumentException("global index " + gi + " is negative");
    }
    int i = index(gi);
    while (true) {
      long k = keys[i];
      if (k == gi) {
        return values[i];
      }
      if (k == EMPTY) {
        int slot = freeCount > 0 ? freeSlots[--freeCount] : nextSlot++;
        keys[i] = gi;
        values[i] = slot;
        size++;
        if (size * 2 > keys.length) {
          grow();
        }
        return slot;
      }
      i = (i + 1) & mask;
    }
  }

  /**
   * Removes {@code gi}; returns its former slot (now free) or -1 when absent (always for a negative
   * {@code gi}: -1 is the empty marker, and taking an empty entry for it would corrupt the count
   * and the free list until no probe ever ends).
   */
  int remove(long gi) {
    if (gi < 0) {
      return -1;
    }
    int i = index(gi);
    while (keys[i] != gi) {
      if (keys[i] == EMPTY) {
        return -1;
      }
      i = (i + 1) & mask;
    }
    int slot = values[i];
    shiftBack(i);
    size--;
    if (freeCount == freeSlots.length) {
      freeSlots = Arrays.copyOf(freeSlots, freeSlots.length * 2);
    }
    freeSlots[freeCount++] = slot;
    return slot;
  }

  /** Removes every sample and forgets every slot. */
  void clear() {
    Arrays.fill(keys, EMPTY);
    size = 0;
    freeCount = 0;
    nextSlot = 0;
  }

  /** Calls {@code visitor} with every (global index, slot) pair, in no particular order. */
  void forEach(SlotVisitor visitor) {
    for (int i = 0; i < keys.length; i++) {
      if (keys[i] != EMPTY) {
        visitor.visit(keys[i], values[i]);
      }
    }
  }

  /** Receives the pairs of {@link #forEach}. */
  @FunctionalInterface
  interface SlotVisitor {
    void visit(long gi, int slot);
  }

  private void shiftBack(int hole) {
    int i = hole;
    while (true) {
      i = (i + 1) & mask;
      long k = keys[i];
      if (k == EMPTY) {
        keys[hole] = EMPTY;
        return;
      }
      int home = index(k);
      // Move k into the hole unless its home lies cyclically in (hole, i].
      boolean homeBetween = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
      if (!homeBetween) {
        keys[hole] = k;
        values[hole] = values[i];
        hole = i;
      }
    }
  }

  private void grow() {
    long[] oldKeys = keys;
    int[] oldValues = values;
    keys = new long[oldKeys.length * 2];
    values = new int[oldKeys.length * 2];
    Arrays.fill(keys, EMPTY);
    mask = keys.length - 1;
    for (int j = 0; j < oldKeys.length; j++) {
      if (oldKeys[j] != EMPTY) {
        int i = index(oldKeys[j]);
        while (keys[i] != EMPTY) {
          i = (i + 1) & mask;
        }
        keys[i] = oldKeys[j];
        values[i] = oldValues[j];
      }
    }
  }

  private int index(long gi) {
    long h = gi * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32)) & mask;
  }
}
