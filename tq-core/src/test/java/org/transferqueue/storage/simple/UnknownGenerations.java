package org.transferqueue.storage.simple;

import java.util.Arrays;
import org.transferqueue.meta.BatchMeta;

/** Generation columns of samples whose generation a test does not care about. */
final class UnknownGenerations {
  private UnknownGenerations() {}

  /** {@link BatchMeta#UNKNOWN_GENERATION} once per global index: matches any held generation. */
  static long[] of(long[] gis) {
    long[] generations = new long[gis.length];
    Arrays.fill(generations, BatchMeta.UNKNOWN_GENERATION);
    return generations;
  }
}
