package org.transferqueue;

import java.util.Arrays;

/**
 * Finds repeated elements, such as duplicate keys in a batch, by sorting one copy instead of
 * filling a hash set: one array for the whole check instead of an entry per element, which matters
 * on paths that check every batch.
 */
public final class Distinct {
  private Distinct() {}

  /**
   * Sorts {@code values} in place and returns the smallest element that occurs more than once.
   *
   * @param values a copy the caller owns (for example {@code keys.toArray()}); every element
   *     non-null and comparable with the others, such as strings
   * @return the smallest repeated element, or null when all are distinct
   * @throws ClassCastException when the elements are not mutually comparable
   */
  public static Object firstRepeated(Object[] values) {
    Arrays.sort(values);
    for (int i = 1; i < values.length; i++) {
      if (values[i].equals(values[i - 1])) {
        return values[i];
      }
    }
    return null;
  }
}
