package org.transferqueue.sampler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.transferqueue.TqException;
import org.transferqueue.testing.Seeds;

class KarmarkarKarpTest {

  private static List<List<Integer>> kk(boolean equal, int k, long... weights) {
    return KarmarkarKarp.partition(weights, k, equal);
  }

  @Test
  void M58_fourItemsTwoParts() {
    assertThat(kk(true, 2, 10, 20, 30, 40)).containsExactly(List.of(0, 3), List.of(1, 2));
  }

  @Test
  void M59_sixItemsTwoParts() {
    assertThat(kk(true, 2, 100, 90, 50, 10, 5, 1))
        .containsExactly(List.of(1, 2, 5), List.of(0, 3, 4));
  }

  @Test
  void M60_unequalSizes() {
    assertThat(kk(false, 2, 100, 10, 10, 10, 10)).containsExactly(List.of(0), List.of(1, 2, 3, 4));
  }

  @Test
  void M61_onePart() {
    assertThat(kk(false, 1, 10, 20, 30)).containsExactly(List.of(0, 1, 2));
  }

  @Test
  void M62_equalSizeNeedsDivisibleCount() {
    assertThatThrownBy(() -> kk(true, 2, 10, 20, 30))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("equal size");
  }

  @Test
  void M63_tooFewItems() {
    assertThatThrownBy(() -> kk(false, 3, 10))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("number of items < k_partitions");
  }

  @Test
  void M64_threeParts() {
    assertThat(kk(true, 3, 100, 80, 60, 40, 20, 10))
        .containsExactly(List.of(0, 5), List.of(2, 3), List.of(1, 4));
  }

  @Test
  void M65_equalWeights() {
    assertThat(kk(true, 2, 50, 50, 50, 50)).containsExactly(List.of(0, 3), List.of(1, 2));
  }

  @Test
  void M66_referenceOutputs() {
    assertThat(kk(true, 2, 1, 2, 3, 4, 5, 6, 7, 8))
        .containsExactly(List.of(1, 2, 4, 7), List.of(0, 3, 5, 6));
    assertThat(kk(false, 2, 8, 7, 6, 5, 4)).containsExactly(List.of(1, 3, 4), List.of(0, 2));
    assertThat(kk(false, 3, 7, 3, 5, 1, 9, 2))
        .containsExactly(List.of(1, 2, 3), List.of(0, 5), List.of(4));
  }

  @Test
  void shouldRejectNegativeWeights() {
    assertThatThrownBy(() -> kk(false, 1, 3, -1)).hasMessageContaining("weight -1 at position 1");
  }

  /**
   * Seeded property test: every partition covers each item once, parts are ascending and (in
   * equal-size mode) equally sized, sums never increase from part 0 on, and the spread is bounded
   * as the procedure guarantees: by the widest initial chunk in equal-size mode, by the heaviest
   * item otherwise.
   */
  @Test
  void shouldPartitionRandomWeightsWithinTheSpreadBound() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    for (int round = 0; round < 500; round++) {
      int k = 1 + random.nextInt(6);
      boolean equal = random.nextBoolean();
      int m = equal ? k * (1 + random.nextInt(8)) : k + random.nextInt(30);
      long[] w = new long[m];
      for (int i = 0; i < m; i++) {
        w[i] = random.nextInt(random.nextBoolean() ? 10 : 5000);
      }
      String context =
          "seed="
              + seed
              + " round="
              + round
              + " k="
              + k
              + " equal="
              + equal
              + " w="
              + Arrays.toString(w);
      List<List<Integer>> parts = KarmarkarKarp.partition(w, k, equal);

      assertThat(parts).as(context).hasSize(k);
      List<Integer> all = new ArrayList<>();
      long[] sums = new long[k];
      for (int p = 0; p < k; p++) {
        List<Integer> part = parts.get(p);
        assertThat(part).as(context).isNotEmpty().isSorted();
        if (equal) {
          assertThat(part).as(context).hasSize(m / k);
        }
        all.addAll(part);
        for (int i : part) {
          sums[p] += w[i];
        }
      }
      all.sort(null);
      assertThat(all)
          .as(context)
          .isEqualTo(java.util.stream.IntStream.range(0, m).boxed().toList());
      for (int p = 1; p < k; p++) {
        assertThat(sums[p]).as(context).isLessThanOrEqualTo(sums[p - 1]);
      }
      assertThat(sums[0] - sums[k - 1]).as(context).isLessThanOrEqualTo(spreadBound(w, k, equal));
    }
  }

  private static long spreadBound(long[] w, int k, boolean equal) {
    long[] sorted = w.clone();
    Arrays.sort(sorted);
    if (!equal) {
      return sorted[sorted.length - 1];
    }
    long bound = 0;
    for (int c = 0; c < sorted.length; c += k) {
      bound = Math.max(bound, sorted[c + k - 1] - sorted[c]);
    }
    return bound;
  }
}
