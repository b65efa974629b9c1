package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.transferqueue.testing.Seeds;

class SampleSlotsTest {

  @Test
  void shouldTreatNegativeIndexesAsAbsentWithoutCorruptingTheTable() {
    SampleSlots slots = new SampleSlots();
    int zero = slots.getOrAssign(0);
    // -1 is the table's empty marker: removing it over and over once shrank the count until the
    // table filled up and a lookup of an absent index probed forever.
    for (int i = 0; i < 1_000; i++) {
      assertThat(slots.remove(-1)).isEqualTo(-1);
      assertThat(slots.remove(Long.MIN_VALUE)).isEqualTo(-1);
      assertThat(slots.get(-1)).isEqualTo(-1);
    }
    assertThat(slots.size()).isEqualTo(1);
    assertThat(slots.get(0)).isEqualTo(zero);
    for (long gi = 1; gi < 1_000; gi++) {
      slots.getOrAssign(gi);
    }
    assertThat(slots.size()).isEqualTo(1_000);
    assertThat(slots.get(5_000)).isEqualTo(-1);
    assertThatThrownBy(() -> slots.getOrAssign(-1)).hasMessageContaining("-1");
  }

  @Test
  void shouldAgreeWithAHashMapUnderRandomPutsAndRemovals() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    SampleSlots slots = new SampleSlots();
    Map<Long, Integer> model = new HashMap<>();
    for (int op = 0; op < 200_000; op++) {
      long gi = random.nextInt(4_000) - 100; // some negative indexes too
      switch (random.nextInt(3)) {
        case 0 -> {
          if (gi >= 0) {
            int slot = slots.getOrAssign(gi);
            Integer known = model.putIfAbsent(gi, slot);
            assertThat(known == null ? slot : known).as("seed=%d gi=%d", seed, gi).isEqualTo(slot);
          }
        }
        case 1 -> {
          Integer removed = model.remove(gi);
          assertThat(slots.remove(gi))
              .as("seed=%d gi=%d", seed, gi)
              .isEqualTo(removed == null ? -1 : removed);
        }
        default ->
            assertThat(slots.get(gi))
                .as("seed=%d gi=%d", seed, gi)
                .isEqualTo(model.getOrDefault(gi, -1));
      }
      assertThat(slots.size()).as("seed=%d", seed).isEqualTo(model.size());
    }
  }
}
