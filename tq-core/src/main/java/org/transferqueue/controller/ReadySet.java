package org.transferqueue.controller;

import java.util.AbstractList;
import java.util.BitSet;
import java.util.List;
import java.util.RandomAccess;

/**
 * The samples of one partition that are ready for one (task, field set): active, produced for every
 * field of the set and not consumed by the task.
 *
 * <p>Maintained incrementally by {@link Partition} on every notification, consumption, reset and
 * clear, so that a fetch costs time proportional to its batch rather than to the partition. A
 * low-water hint skips the consumed prefix, which makes sequential sampling O(batch). Not
 * thread-safe: used only under the controller lock.
 */
final class ReadySet {
  private final BitSet bits = new BitSet();
  private int count;
  private int lowHint;

  void add(int index) {
    if (!bits.get(index)) {
      bits.set(index);
      count++;
      if (index < lowHint) {
        lowHint = index;
      }
    }
  }

  void remove(int index) {
    if (bits.get(index)) {
      bits.clear(index);
      count--;
    }
  }

  void clear() {
    bits.clear();
    count = 0;
    lowHint = 0;
  }

  int size() {
    return count;
  }

  /** The first member, or -1; advances the low-water hint past removed members. */
  int first() {
    int next = bits.nextSetBit(lowHint);
    lowHint = next < 0 ? bits.length() : next;
    return next;
  }

  /**
   * A read-only ascending list view, valid until the set next changes. Sequential access from the
   * front is O(1) per element; random access scans from the nearest remembered position.
   */
  List<Long> view() {
    return new View();
  }

  private final class View extends AbstractList<Long> implements RandomAccess {
    private final int size = count;
    private int cursorPos = -1;
    private int cursorBit = -1;

    @Override
    public Long get(int position) {
      if (position < 0 || position >= size) {
        throw new IndexOutOfBoundsException("position=" + position + " size=" + size);
      }
      if (cursorPos < 0 || position < cursorPos) {
        cursorPos = 0;
        cursorBit = first();
      }
      while (cursorPos < position) {
        cursorBit = bits.nextSetBit(cursorBit + 1);
        cursorPos++;
      }
      return (long) cursorBit;
    }

    @Override
    public int size() {
      return size;
    }
  }
}
