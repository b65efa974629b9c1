package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.transferqueue.TqException;
import org.transferqueue.testing.Seeds;

/** Scenarios 5.E routing (AS-044 to AS-046) and the sample-slot table behind the units. */
class UnitRouterTest {

  private static Map<Long, Integer> unitByIndex(List<RoutingGroup> groups) {
    Map<Long, Integer> map = new HashMap<>();
    for (RoutingGroup group : groups) {
      for (long gi : group.globalIndexes()) {
        map.put(gi, group.unit());
      }
    }
    return map;
  }

  @Test
  void AS044_routingIsStableAcrossBatchSplits() {
    long[] all = LongStream.range(0, 10).toArray();
    Map<Long, Integer> whole = unitByIndex(UnitRouter.route(all, 2));
    Map<Long, Integer> split = new HashMap<>();
    for (long[] part :
        new long[][] {LongStream.range(0, 5).toArray(), LongStream.range(5, 10).toArray()}) {
      List<RoutingGroup> groups = UnitRouter.route(part, 2);
      split.putAll(unitByIndex(groups));
      for (RoutingGroup group : groups) {
        for (int j = 0; j < group.size(); j++) {
          assertThat(part[group.positions()[j]]).isEqualTo(group.globalIndexes()[j]);
        }
      }
    }
    assertThat(split).isEqualTo(whole);
  }

  @Test
  void AS045_routingIsIndependentOfOrder() {
    long[] forward = LongStream.range(0, 10).toArray();
    long[] backward = LongStream.range(0, 10).map(i -> 9 - i).toArray();

    assertThat(unitByIndex(UnitRouter.route(backward, 2)))
        .isEqualTo(unitByIndex(UnitRouter.route(forward, 2)));
  }

  @Test
  void AS046_groupsCarryIndexesAndPositionsInBatchOrder() {
    List<RoutingGroup> groups = UnitRouter.route(new long[] {7, 2, 9, 4}, 2);

    assertThat(groups)
        .containsExactly(
            new RoutingGroup(0, new long[] {2, 4}, new int[] {1, 3}),
            new RoutingGroup(1, new long[] {7, 9}, new int[] {0, 2}));
  }

  @Test
  void shouldRouteOnlyTheGivenRowsKeepingTheirBatchPositions() {
    long[] gis = {7, 2, 9, 4, 6};

    List<RoutingGroup> groups = UnitRouter.route(gis, new int[] {1, 2, 4}, 2);

    assertThat(groups)
        .containsExactly(
            new RoutingGroup(0, new long[] {2, 6}, new int[] {1, 4}),
            new RoutingGroup(1, new long[] {9}, new int[] {2}));
  }

  @Test
  void shouldPlaceEveryIndexOnItsFloorModUnit() {
    for (long gi : new long[] {0, 1, 5, 1L << 40, Long.MAX_VALUE}) {
      assertThat(UnitRouter.unitOf(gi, 3)).isEqualTo((int) (gi % 3));
    }
  }

  @Test
  void shouldRejectNegativeGlobalIndex() {
    assertThatThrownBy(() -> UnitRouter.route(new long[] {1, -3}, 2))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("-3");
  }

  @Test
  void shouldMatchAHashMapUnderRandomInsertsAndRemovals() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    SampleSlots slots = new SampleSlots();
    Map<Long, Integer> model = new HashMap<>();
    for (int step = 0; step < 20_000; step++) {
      long gi = random.nextInt(2_000);
      if (random.nextInt(3) == 0) {
        Integer expected = model.remove(gi);
        assertThat(slots.remove(gi))
            .as("seed %d step %d remove %d", seed, step, gi)
            .isEqualTo(expected == null ? -1 : expected);
      } else {
        int slot = slots.getOrAssign(gi);
        Integer previous = model.putIfAbsent(gi, slot);
        if (previous != null) {
          assertThat(slot)
              .as("seed %d step %d keeps slot of %d", seed, step, gi)
              .isEqualTo(previous);
        } else {
          assertThat(model.values().stream().filter(s -> s == slot).count())
              .as("seed %d step %d: slot %d handed out once", seed, step, slot)
              .isEqualTo(1);
        }
      }
      assertThat(slots.size()).as("seed %d step %d size", seed, step).isEqualTo(model.size());
    }
    for (long gi = 0; gi < 2_000; gi++) {
      assertThat(slots.get(gi))
          .as("seed %d get %d", seed, gi)
          .isEqualTo(model.getOrDefault(gi, -1));
    }
    assertThat(slots.slotBound()).as("seed %d: slots are reused", seed).isLessThanOrEqualTo(2_000);
  }
}
