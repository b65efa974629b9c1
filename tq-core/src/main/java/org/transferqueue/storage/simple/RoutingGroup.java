package org.transferqueue.storage.simple;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The samples of one request that live on one storage unit: their global indexes and their
 * positions in the request's batch, both in batch order.
 *
 * <p>Sample {@code gi} lives on unit {@code gi mod N} for N units, whatever the batch, its order or
 * the number of calls; changing N would need a data migration, which is not supported.
 *
 * @param unit the position of the unit in the router's ordered unit list
 * @param globalIndexes the global indexes routed to the unit, in batch order (caller must not
 *     modify)
 * @param positions the batch positions of those samples, ascending (caller must not modify)
 */
record RoutingGroup(int unit, long[] globalIndexes, int[] positions) {

  /** The number of samples in the group. */
  int size() {
    return positions.length;
  }

  /**
   * Splits a request's global indexes into one group per involved unit.
   *
   * <pre>{@code
   * route([7, 2, 9, 4], 2) == [unit 0: gis [2, 4] at [1, 3], unit 1: gis [7, 9] at [0, 2]]
   * }</pre>
   *
   * @param globalIndexes the request's global indexes in batch order, each at least 0
   * @param unitCount the number of units, at least 1
   * @return the groups of the involved units, ordered by unit position
   * @throws TqException with {@code INVALID_ARGUMENT} for a negative global index
   */
  static List<RoutingGroup> route(long[] globalIndexes, int unitCount) {
    int[] counts = new int[unitCount];
    for (long gi : globalIndexes) {
      if (gi < 0) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "global index " + gi + " is negative; must be >= 0");
      }
      counts[unitOf(gi, unitCount)]++;
    }
    long[][] gis = new long[unitCount][];
    int[][] positions = new int[unitCount][];
    for (int u = 0; u < unitCount; u++) {
      if (counts[u] > 0) {
        gis[u] = new long[counts[u]];
        positions[u] = new int[counts[u]];
      }
    }
    int[] fill = new int[unitCount];
    for (int p = 0; p < globalIndexes.length; p++) {
      int u = unitOf(globalIndexes[p], unitCount);
      gis[u][fill[u]] = globalIndexes[p];
      positions[u][fill[u]] = p;
      fill[u]++;
    }
    List<RoutingGroup> groups = new ArrayList<>();
    for (int u = 0; u < unitCount; u++) {
      if (counts[u] > 0) {
        groups.add(new RoutingGroup(u, gis[u], positions[u]));
      }
    }
    return groups;
  }

  /** The unit position of sample {@code gi} among {@code unitCount} units. */
  static int unitOf(long gi, int unitCount) {
    return (int) Math.floorMod(gi, (long) unitCount);
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
  static long[] pick(long[] column, int[] positions) {
    long[] out = new long[positions.length];
    for (int j = 0; j < positions.length; j++) {
      out[j] = column[positions[j]];
    }
    return out;
  }
}
