package org.transferqueue.controller;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;

/** The checks of a generation column shared by the controller's request records. Stateless. */
final class Generations {
  private Generations() {}

  /**
   * A copy of a generation column aligned with {@code size} indexes; null gives every sample {@link
   * BatchMeta#UNKNOWN_GENERATION}.
   *
   * @throws TqException with {@code INVALID_ARGUMENT} for another length, a null entry or a
   *     generation below -1
   */
  static List<Long> aligned(List<Long> generations, int size, String what) {
    if (generations == null) {
      return Collections.nCopies(size, BatchMeta.UNKNOWN_GENERATION);
    }
    if (generations.size() != size) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          what + ": " + generations.size() + " generations for " + size + " global indexes");
    }
    List<Long> copy = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      Long generation = generations.get(i);
      if (generation == null || generation < BatchMeta.UNKNOWN_GENERATION) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            what + ": generation at position " + i + " is " + generation + " (must be >= -1)");
      }
      copy.add(generation);
    }
    return Collections.unmodifiableList(copy);
  }
}
