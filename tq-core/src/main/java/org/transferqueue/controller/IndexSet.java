package org.transferqueue.controller;

import java.util.Arrays;
import java.util.BitSet;
import java.util.stream.LongStream;

/**
 * An immutable, ascending set of global indexes with value equality.
 *
 * <p>Used in replies and snapshots where a set of samples is returned. Indexes are stored as ints
 * because the controller never hands out an index above {@link IndexAllocator#MAX_INDEX}.
 */
public final class IndexSet {
  private static final IndexSet EMPTY = new IndexSet(new int[0]);

  private final int[] sorted;

  private IndexSet(int[] sorted) {
    this.sorted = sorted;
  }

  /**
   * The empty set.
   *
   * @return a set with no members
   */
  public static IndexSet empty() {
    return EMPTY;
  }

  /**
   * A set of the given indexes; order and duplicates in the input do not matter.
   *
   * @param indexes global indexes, each in {@code [0, MAX_INDEX]}
   * @return the set
   * @throws IllegalArgumentException if an index is out of range
   */
  public static IndexSet of(long... indexes) {
    int[] values = new int[indexes.length];
    for (int i = 0; i < indexes.length; i++) {
      values[i] = IndexAllocator.checkIndex(indexes[i]);
    }
    Arrays.sort(values);
    int n = 0;
    for (int i = 0; i < values.length; i++) {
      if (i == 0 || values[i] != values[i - 1]) {
        values[n++] = values[i];
      }
    }
    return n == 0 ? EMPTY : new IndexSet(Arrays.copyOf(values, n));
  }

  /**
   * The indexes in {@code [from, to)}.
   *
   * @param from first index, inclusive
   * @param to last index, exclusive
   * @return the set
   */
  public static IndexSet range(long from, long to) {
    return of(LongStream.range(from, to).toArray());
  }

  static IndexSet copyOf(BitSet bits) {
    int[] values = bits.stream().toArray();
    return values.length == 0 ? EMPTY : new IndexSet(values);
  }

  /**
   * The number of members.
   *
   * @return the size
   */
  public int size() {
    return sorted.length;
  }

  /**
   * Whether the set has no members.
   *
   * @return true if empty
   */
  public boolean isEmpty() {
    return sorted.length == 0;
  }

  /**
   * The member at an ascending position.
   *
   * @param position 0-based position
   * @return the index
   * @throws IndexOutOfBoundsException if the position is outside {@code [0, size())}
   */
  public long get(int position) {
    return sorted[position];
  }

  /**
   * Whether the index is a member.
   *
   * @param index a global index
   * @return true if present
   */
  public boolean contains(long index) {
    return index >= 0
        && index <= Integer.MAX_VALUE
        && Arrays.binarySearch(sorted, (int) index) >= 0;
  }

  /**
   * The members in ascending order.
   *
   * @return a new array the caller owns
   */
  public long[] toArray() {
    long[] out = new long[sorted.length];
    for (int i = 0; i < sorted.length; i++) {
      out[i] = sorted[i];
    }
    return out;
  }

  /**
   * The members in ascending order as a stream.
   *
   * @return the stream
   */
  public LongStream stream() {
    return Arrays.stream(sorted).asLongStream();
  }

  BitSet toBitSet() {
    BitSet bits = new BitSet();
    for (int v : sorted) {
      bits.set(v);
    }
    return bits;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof IndexSet that && Arrays.equals(sorted, that.sorted);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(sorted);
  }

  @Override
  public String toString() {
    return Arrays.toString(sorted);
  }
}
