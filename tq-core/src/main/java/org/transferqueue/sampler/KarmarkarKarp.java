package org.transferqueue.sampler;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Karmarkar-Karp partitioning (largest differencing method) of weighted items into {@code k} parts
 * with nearly equal sums.
 *
 * <p>The procedure, which fixes every tie so that results are reproducible:
 *
 * <pre>
 *  1. sort items by (weight, position)
 *  2. initial states of k sets each, sets kept in descending set order:
 *       equal size: consecutive chunks of k items, set i holds the chunk's item i
 *       otherwise:  one state per item, the item alone in one set, k-1 empty sets
 *  3. while more than one state: take the state A with the largest spread (ties: the larger
 *     largest set), then the next state B; append B.sets[k-1-i] to A.sets[i]; re-sort A; put A back
 *  4. the final state's sets, largest first, are the parts; positions within a part ascending
 *
 *  set order:   sum, then item count, then item list compared as (position, weight) pairs
 *  spread:      largest set sum - smallest set sum
 * </pre>
 *
 * <p>Pairing the largest sets of one state with the smallest of the other never widens the spread
 * beyond that of either state, so the result's spread is at most the largest initial spread (at
 * most the heaviest item). Stateless.
 */
final class KarmarkarKarp {
  private KarmarkarKarp() {}

  /**
   * Partitions items.
   *
   * @param weights non-negative item weights, by position
   * @param k number of parts, at least 1
   * @param equalSize whether every part must hold the same number of items
   * @return k lists of item positions, each ascending; list 0 is the heaviest part
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when {@code k < 1}, there are fewer
   *     items than parts, the item count is not a multiple of {@code k} in equal-size mode, or a
   *     weight is negative
   */
  static List<List<Integer>> partition(long[] weights, int k, boolean equalSize) {
    int m = weights.length;
    if (k < 1 || m < k) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "cannot split " + m + " items into " + k + " partitions: number of items < k_partitions");
    }
    if (equalSize && m % k != 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "cannot split " + m + " items into " + k + " partitions of equal size");
    }
    Integer[] order = new Integer[m];
    for (int i = 0; i < m; i++) {
      if (weights[i] < 0) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "weight " + weights[i] + " at position " + i + " < 0");
      }
      order[i] = i;
    }
    Arrays.sort(order, Comparator.<Integer>comparingLong(i -> weights[i]).thenComparing(i -> i));

    PriorityQueue<State> queue = new PriorityQueue<>(State::priorityCompare);
    if (equalSize) {
      for (int c = 0; c < m; c += k) {
        Part[] parts = new Part[k];
        for (int i = 0; i < k; i++) {
          parts[i] = new Part(order[c + i], weights[order[c + i]]);
        }
        queue.add(new State(parts));
      }
    } else {
      for (int item : order) {
        Part[] parts = new Part[k];
        parts[0] = new Part(item, weights[item]);
        for (int i = 1; i < k; i++) {
          parts[i] = new Part();
        }
        queue.add(new State(parts));
      }
    }
    while (queue.size() > 1) {
      State a = queue.poll();
      State b = queue.poll();
      a.merge(b);
      queue.add(a);
    }
    State last = queue.poll();
    List<List<Integer>> result = new ArrayList<>(k);
    for (Part part : last.parts) {
      List<Integer> positions = new ArrayList<>(part.positions);
      positions.sort(null);
      result.add(List.copyOf(positions));
    }
    return List.copyOf(result);
  }

  /** A set of items in insertion order with its sum. */
  private static final class Part {
    final List<Integer> positions = new ArrayList<>();
    final List<Long> weights = new ArrayList<>();
    long sum;

    Part() {}

    Part(int position, long weight) {
      add(position, weight);
    }

    void add(int position, long weight) {
      positions.add(position);
      weights.add(weight);
      sum += weight;
    }

    void append(Part other) {
      for (int i = 0; i < other.positions.size(); i++) {
        add(other.positions.get(i), other.weights.get(i));
      }
    }

    /** Set order: sum, item count, then items as (position, weight) pairs. */
    static int compare(Part x, Part y) {
      int c = Long.compare(x.sum, y.sum);
      if (c != 0) {
        return c;
      }
      c = Integer.compare(x.positions.size(), y.positions.size());
      if (c != 0) {
        return c;
      }
      for (int i = 0; i < x.positions.size(); i++) {
        c = Integer.compare(x.positions.get(i), y.positions.get(i));
        if (c != 0) {
          return c;
        }
        c = Long.compare(x.weights.get(i), y.weights.get(i));
        if (c != 0) {
          return c;
        }
      }
      return 0;
    }
  }

  /** k parts kept in descending set order. */
  private static final class State {
    final Part[] parts;

    State(Part[] parts) {
      this.parts = parts;
      sortDescending();
    }

    long spread() {
      return parts[0].sum - parts[parts.length - 1].sum;
    }

    void merge(State other) {
      int k = parts.length;
      for (int i = 0; i < k; i++) {
        parts[i].append(other.parts[k - 1 - i]);
      }
      sortDescending();
    }

    private void sortDescending() {
      Arrays.sort(parts, (x, y) -> Part.compare(y, x));
    }

    /** Queue order: larger spread first, then the larger largest part first. */
    static int priorityCompare(State x, State y) {
      int c = Long.compare(y.spread(), x.spread());
      return c != 0 ? c : Part.compare(y.parts[0], x.parts[0]);
    }
  }
}
