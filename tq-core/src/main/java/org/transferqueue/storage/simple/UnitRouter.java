package org.transferqueue.storage.simple;

import java.util.ArrayList;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * SimpleStorage's routing, the one place that decides where a sample lives: sample {@code gi} lives
 * on unit {@code gi mod N} of N units, whatever the batch, its order or the number of calls.
 * Changing N would need a data migration, which is not supported. The embedded {@link
 * SimpleStorageManager}, the manager over remote units and the storage meters all route through it.
 *
 * <pre>{@code
 * UnitRouter.route([7, 2, 9, 4], 2) == [unit 0: gis [2, 4] at [1, 3], unit 1: gis [7, 9] at [0, 2]]
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class UnitRouter {
  private UnitRouter() {}

  /**
   * The unit position of a sample.
   *
   * @param gi the sample's global index
   * @param unitCount the number of units, at least 1
   * @return {@code gi mod unitCount}, in {@code [0, unitCount)}
   */
  public static int unitOf(long gi, int unitCount) {
    return (int) Math.floorMod(gi, (long) unitCount);
  }

  /**
   * Splits a request's global indexes into one group per involved unit.
   *
   * @param globalIndexes the request's global indexes in batch order, each at least 0
   * @param unitCount the number of units, at least 1
   * @return the groups of the involved units, ordered by unit position; each group's positions are
   *     batch positions, ascending
   * @throws TqException with {@code INVALID_ARGUMENT} for a negative global index
   */
  public static List<RoutingGroup> route(long[] globalIndexes, int unitCount) {
    int[] rows = new int[globalIndexes.length];
    for (int p = 0; p < rows.length; p++) {
      rows[p] = p;
    }
    return route(globalIndexes, rows, unitCount);
  }

  /**
   * Splits some rows of a request (for example those of one partition) into one group per involved
   * unit.
   *
   * @param globalIndexes the request's global indexes in batch order
   * @param rows the batch positions to route, ascending; each names a global index at least 0
   * @param unitCount the number of units, at least 1
   * @return the groups of the involved units, ordered by unit position; each group's positions are
   *     taken from {@code rows}, in their order
   * @throws TqException with {@code INVALID_ARGUMENT} for a negative global index
   */
  public static List<RoutingGroup> route(long[] globalIndexes, int[] rows, int unitCount) {
    int[] counts = new int[unitCount];
    for (int row : rows) {
      long gi = globalIndexes[row];
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
    for (int row : rows) {
      int u = unitOf(globalIndexes[row], unitCount);
      gis[u][fill[u]] = globalIndexes[row];
      positions[u][fill[u]] = row;
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
}
