package org.transferqueue.storage.simple;

import java.util.Arrays;

/**
 * The samples of one request that live on one storage unit: their global indexes and their
 * positions in the request's batch, both in batch order. {@link UnitRouter} makes them.
 *
 * @param unit the position of the unit in the router's ordered unit list
 * @param globalIndexes the global indexes routed to the unit, in batch order (caller must not
 *     modify)
 * @param positions the batch positions of those samples, ascending (caller must not modify)
 */
public record RoutingGroup(int unit, long[] globalIndexes, int[] positions) {

  /**
   * The number of samples in the group.
   *
   * @return the count
   */
  public int size() {
    return positions.length;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RoutingGroup g
        && g.unit == unit
        && Arrays.equals(g.globalIndexes, globalIndexes)
        && Arrays.equals(g.positions, positions);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * unit + Arrays.hashCode(globalIndexes)) + Arrays.hashCode(positions);
  }

  @Override
  public String toString() {
    return "RoutingGroup[unit="
        + unit
        + ", globalIndexes="
        + Arrays.toString(globalIndexes)
        + ", positions="
        + Arrays.toString(positions)
        + "]";
  }

  /**
   * The entries of a batch-aligned column at some positions, for example the generations of one
   * group's rows.
   *
   * @param column one value per batch position
   * @param positions batch positions
   * @return {@code column[positions[j]]} for every {@code j}
   */
  public static long[] pick(long[] column, int[] positions) {
    long[] out = new long[positions.length];
    for (int j = 0; j < positions.length; j++) {
      out[j] = column[positions[j]];
    }
    return out;
  }
}
