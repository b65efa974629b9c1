package org.transferqueue.objectstore.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * The entries of a {@link StoreMaster} with a pending write, in the order their writes began: an
 * intrusive doubly linked list through {@link StoreMaster.Entry}'s {@code writingPrev}, {@code
 * writingNext} and {@code inWriting}, so that starting and ending a write allocate nothing. The
 * master's sweep walks it oldest first to reclaim abandoned writes.
 *
 * <p>Not thread-safe: used only under {@code StoreMaster.lock}, like the entries it links.
 */
final class PendingWriteList {
  private StoreMaster.Entry head;
  private StoreMaster.Entry tail;

  /** Appends an entry, unless it is on the list (then it keeps its place). */
  void link(StoreMaster.Entry entry) {
    if (entry.inWriting) {
      return;
    }
    entry.inWriting = true;
    entry.writingPrev = tail;
    entry.writingNext = null;
    if (tail == null) {
      head = entry;
    } else {
      tail.writingNext = entry;
    }
    tail = entry;
  }

  /** Takes an entry off the list, if it is on it. */
  void unlink(StoreMaster.Entry entry) {
    if (!entry.inWriting) {
      return;
    }
    if (entry.writingPrev == null) {
      head = entry.writingNext;
    } else {
      entry.writingPrev.writingNext = entry.writingNext;
    }
    if (entry.writingNext == null) {
      tail = entry.writingPrev;
    } else {
      entry.writingNext.writingPrev = entry.writingPrev;
    }
    entry.writingPrev = null;
    entry.writingNext = null;
    entry.inWriting = false;
  }

  /**
   * The entries on the list now, oldest write first, as a copy the caller may change the list while
   * walking.
   *
   * @return the entries
   */
  List<StoreMaster.Entry> snapshot() {
    List<StoreMaster.Entry> entries = new ArrayList<>();
    for (StoreMaster.Entry entry = head; entry != null; entry = entry.writingNext) {
      entries.add(entry);
    }
    return entries;
  }
}
