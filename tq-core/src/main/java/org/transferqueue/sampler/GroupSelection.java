package org.transferqueue.sampler;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Finds complete prompt groups of {@code n} samples among ready indexes.
 *
 * <p>A group is a run of {@code n} consecutive global indexes. When a tag lookup is available and
 * the samples carry a group tag, the run must also share one group id: this is the alignment check
 * that keeps a window from mixing the tail of one prompt's group with the head of the next. A run
 * where only some samples carry the tag is not a group. Stateless.
 */
final class GroupSelection {
  private GroupSelection() {}

  /**
   * Scans the ascending ready list for complete groups, left to right.
   *
   * @param sortedReady ready indexes, ascending
   * @param n group size
   * @param required number of groups wanted
   * @param tags tag lookup, or null
   * @param groupTag the tag holding the group id
   * @return the first {@code required} groups in ascending order, or null when there are fewer
   */
  static List<List<Long>> select(
      List<Long> sortedReady, int n, int required, TagLookup tags, String groupTag) {
    List<List<Long>> groups = new ArrayList<>(required);
    int i = 0;
    while (groups.size() < required && i <= sortedReady.size() - n) {
      List<Long> window = sortedReady.subList(i, i + n);
      if (isGroup(window, tags, groupTag)) {
        groups.add(List.copyOf(window));
        i += n;
      } else {
        i++;
      }
    }
    return groups.size() < required ? null : groups;
  }

  private static boolean isGroup(List<Long> window, TagLookup tags, String groupTag) {
    for (int j = 1; j < window.size(); j++) {
      if (window.get(j) - window.get(j - 1) != 1) {
        return false;
      }
    }
    if (tags == null) {
      return true;
    }
    Map<String, Object> first = tags.tags(window.getFirst());
    boolean tagged = first.containsKey(groupTag);
    Object id = first.get(groupTag);
    for (int j = 1; j < window.size(); j++) {
      Map<String, Object> t = tags.tags(window.get(j));
      if (t.containsKey(groupTag) != tagged || !Objects.equals(t.get(groupTag), id)) {
        return false;
      }
    }
    return true;
  }
}
