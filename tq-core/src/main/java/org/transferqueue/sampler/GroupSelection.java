package org.transferqueue.sampler;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Finds complete prompt groups of {@code n} samples among ready indexes.
 *
 * <p>Which samples form a group depends on what the request knows about them:
 *
 * <ul>
 *   <li><b>By insert</b>, for samples with an {@link InsertPosition} (every sample a controller
 *       insert or key-value put created): the rows of one insert, cut into chunks of {@code n} from
 *       its first row, are its groups, whatever global indexes the insert received. A group is thus
 *       exactly the {@code n} rows a producer inserted together for one prompt, even when recycled
 *       indexes gave them scattered indexes, and two prompts are never mixed, whichever of their
 *       samples are ready. Complete groups are taken oldest insert first, then in row order. The
 *       last rows of an insert whose size is not a multiple of {@code n} form no group.
 *   <li><b>By adjacent indexes</b>, for samples without a position (and for every sample when the
 *       request has no {@link InsertLookup}): a run of {@code n} consecutive global indexes, found
 *       by a scan from the lowest. These groups come first.
 * </ul>
 *
 * <p>In both cases, when a tag lookup is available and the samples carry a group tag, a group must
 * also share one group id: a run that mixes ids, or where only some samples carry the tag, is not a
 * group. For adjacent indexes this is the alignment check that keeps a window from mixing the tail
 * of one prompt's group with the head of the next. Stateless.
 */
final class GroupSelection {
  private GroupSelection() {}

  /**
   * Selects the first {@code required} complete groups.
   *
   * @param ready ready indexes, in any order
   * @param n group size
   * @param required number of groups wanted
   * @param tags tag lookup, or null
   * @param groupTag the tag holding the group id
   * @param inserts insert positions, or null (then every sample is grouped by adjacent indexes)
   * @return {@code required} groups, each in row order (adjacent groups: ascending), or null when
   *     there are fewer
   */
  static List<List<Long>> select(
      List<Long> ready,
      int n,
      int required,
      TagLookup tags,
      String groupTag,
      InsertLookup inserts) {
    List<Long> adjacent = new ArrayList<>();
    List<Long> positioned = new ArrayList<>();
    List<InsertPosition> positions = new ArrayList<>();
    for (long index : ready) {
      InsertPosition at = inserts == null ? null : inserts.position(index);
      if (at == null) {
        adjacent.add(index);
      } else {
        positioned.add(index);
        positions.add(at);
      }
    }
    adjacent.sort(null);
    List<List<Long>> groups = new ArrayList<>(required);
    scanAdjacent(adjacent, n, required, tags, groupTag, groups);
    if (groups.size() < required && !positioned.isEmpty()) {
      byInsert(positioned, positions, n, required, tags, groupTag, groups);
    }
    return groups.size() < required ? null : groups;
  }

  /** Adds runs of {@code n} consecutive indexes of the ascending list, scanned left to right. */
  private static void scanAdjacent(
      List<Long> sorted,
      int n,
      int required,
      TagLookup tags,
      String groupTag,
      List<List<Long>> groups) {
    int i = 0;
    while (groups.size() < required && i <= sorted.size() - n) {
      List<Long> window = sorted.subList(i, i + n);
      if (consecutive(window) && sharesGroupTag(window, tags, groupTag)) {
        groups.add(List.copyOf(window));
        i += n;
      } else {
        i++;
      }
    }
  }

  /** Adds the complete groups of the positioned samples, oldest insert first. */
  private static void byInsert(
      List<Long> indexes,
      List<InsertPosition> positions,
      int n,
      int required,
      TagLookup tags,
      String groupTag,
      List<List<Long>> groups) {
    // Keyed by the position of the group's first row, so the map iterates in insert, row order.
    TreeMap<InsertPosition, Slots> candidates = new TreeMap<>();
    for (int i = 0; i < indexes.size(); i++) {
      InsertPosition at = positions.get(i);
      InsertPosition first = new InsertPosition(at.insert(), at.row() - at.row() % n);
      candidates.computeIfAbsent(first, k -> new Slots(n)).fill(at.row() % n, indexes.get(i));
    }
    for (Slots group : candidates.values()) {
      if (groups.size() == required) {
        return;
      }
      if (group.complete()) {
        List<Long> members = Arrays.stream(group.members).boxed().toList();
        if (sharesGroupTag(members, tags, groupTag)) {
          groups.add(members);
        }
      }
    }
  }

  /** The ready members of one insert group, by row within the group. */
  private static final class Slots {
    final long[] members;
    int filled;

    Slots(int n) {
      members = new long[n];
      Arrays.fill(members, -1);
    }

    void fill(int slot, long index) {
      if (members[slot] < 0) {
        filled++;
      }
      members[slot] = index;
    }

    boolean complete() {
      return filled == members.length;
    }
  }

  private static boolean consecutive(List<Long> window) {
    for (int j = 1; j < window.size(); j++) {
      if (window.get(j) - window.get(j - 1) != 1) {
        return false;
      }
    }
    return true;
  }

  private static boolean sharesGroupTag(List<Long> group, TagLookup tags, String groupTag) {
    if (tags == null) {
      return true;
    }
    Map<String, Object> first = tags.tags(group.getFirst());
    boolean tagged = first.containsKey(groupTag);
    Object id = first.get(groupTag);
    for (int j = 1; j < group.size(); j++) {
      Map<String, Object> t = tags.tags(group.get(j));
      if (t.containsKey(groupTag) != tagged || !Objects.equals(t.get(groupTag), id)) {
        return false;
      }
    }
    return true;
  }
}
