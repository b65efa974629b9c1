package org.transferqueue;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.transferqueue.testing.Seeds;

class DistinctTest {

  @Test
  void shouldReturnTheSmallestRepeatedElementOrNull() {
    assertThat(Distinct.firstRepeated(new Object[0])).isNull();
    assertThat(Distinct.firstRepeated(new Object[] {"a"})).isNull();
    assertThat(Distinct.firstRepeated(new Object[] {"b", "a", "c"})).isNull();
    assertThat(Distinct.firstRepeated(new Object[] {"k2", "k1", "k2", "k0", "k1"})).isEqualTo("k1");
  }

  @Test
  void shouldAgreeWithAHashSetOnRandomKeys() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    for (int round = 0; round < 200; round++) {
      List<String> keys = new ArrayList<>();
      int n = random.nextInt(50);
      for (int i = 0; i < n; i++) {
        keys.add("key_" + random.nextInt(100));
      }
      String expected = null;
      List<String> seen = new ArrayList<>();
      for (String key : keys.stream().sorted().toList()) {
        if (seen.contains(key) && expected == null) {
          expected = key;
        }
        seen.add(key);
      }
      assertThat(Distinct.firstRepeated(keys.toArray()))
          .as("seed=%d keys=%s", seed, keys)
          .isEqualTo(expected);
    }
  }
}
