package org.transferqueue.sampler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.sampler.SequentialSamplerTest.range;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.transferqueue.TqException;

class SeqlenBalancedSamplerTest {

  private static TagLookup lengths(long... perIndex) {
    Map<Long, Map<String, Object>> tags = new HashMap<>();
    for (int i = 0; i < perIndex.length; i++) {
      if (perIndex[i] >= 0) {
        tags.put((long) i, Map.of(SeqlenBalancedSampler.LENGTH_TAG, perIndex[i]));
      }
    }
    return gi -> tags.getOrDefault(gi, Map.of());
  }

  private static SampleResult sample(
      SeqlenBalancedSampler s,
      List<Long> ready,
      int perRank,
      int dpRank,
      Integer batchIndex,
      TagLookup tags) {
    return sample(s, "p", ready, perRank, dpRank, batchIndex, tags);
  }

  private static SampleResult sample(
      SeqlenBalancedSampler s,
      String partition,
      List<Long> ready,
      int perRank,
      int dpRank,
      Integer batchIndex,
      TagLookup tags) {
    return s.sample(
        new SamplingRequest(
            ready, perRank, partition, "t", SamplingConfig.of(dpRank, batchIndex), tags));
  }

  private static long total(List<Long> indexes, long... lengths) {
    return indexes.stream().mapToLong(i -> lengths[i.intValue()]).sum();
  }

  @Test
  void M40_dpSizeMustBePositive() {
    assertThatThrownBy(() -> new SeqlenBalancedSampler(1, 0))
        .hasMessageContaining("dp_size must be positive");
    assertThatThrownBy(() -> new SeqlenBalancedSampler(1, -1))
        .hasMessageContaining("dp_size must be positive");
    assertThatThrownBy(() -> new SeqlenBalancedSampler(0, 1))
        .hasMessageContaining("must be positive");
  }

  @Test
  void M41_withoutTagsSplitsContiguouslyAndConsumesTheGlobalBatch() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 2);
    SampleResult rank0 = sample(s, range(0, 4), 2, 0, 0, null);
    SampleResult rank1 = sample(s, List.of(), 2, 1, 0, null);
    assertThat(rank0.sampled()).containsExactly(0L, 1L);
    assertThat(rank0.consumed()).containsExactly(0L, 1L, 2L, 3L);
    assertThat(rank1.sampled()).containsExactly(2L, 3L);
    assertThat(rank1.consumed()).isEqualTo(rank1.sampled());
  }

  @Test
  void M42_singleRankGetsWholeSelection() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(2, 1);
    SampleResult r =
        s.sample(new SamplingRequest(range(0, 4), 4, "p", "t", SamplingConfig.NONE, lengths()));
    assertThat(r.sampled()).containsExactly(0L, 1L, 2L, 3L);
    assertThat(r.consumed()).isEqualTo(r.sampled());
    assertThat(s.sharedBatchCount()).as("nothing cached without a batch index").isZero();
  }

  @Test
  void M43_balancesTokensAcrossRanks() {
    long[] len = {100, 100, 10, 10};
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 2);
    SampleResult rank0 = sample(s, range(0, 4), 2, 0, 0, lengths(len));
    assertThat(s.hasCachedResult("p", "t", SamplingConfig.of(1, 0))).isTrue();
    SampleResult rank1 = sample(s, List.of(), 2, 1, 0, lengths(len));
    assertThat(rank0.sampled()).containsExactly(1L, 2L);
    assertThat(rank1.sampled()).containsExactly(0L, 3L);
    assertThat(total(rank0.sampled(), len)).isEqualTo(110).isEqualTo(total(rank1.sampled(), len));
  }

  @Test
  void M44_groupsStayOnOneRank() {
    long[] len = {50, 50, 5, 5, 50, 50, 5, 5};
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(2, 2);
    List<Long> rank0 = sample(s, range(0, 8), 4, 0, 0, lengths(len)).sampled();
    List<Long> rank1 = sample(s, List.of(), 4, 1, 0, lengths(len)).sampled();
    assertThat(rank0).containsExactly(2L, 3L, 4L, 5L);
    assertThat(rank1).containsExactly(0L, 1L, 6L, 7L);
    for (long g = 0; g < 8; g += 2) {
      assertThat(rank0.contains(g)).isEqualTo(rank0.contains(g + 1));
    }
  }

  @Test
  void M45_repeatedCallReturnsSameResult() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 2);
    TagLookup tags = lengths(3, 1, 4, 1);
    SampleResult first = sample(s, range(0, 4), 2, 1, 0, tags);
    SampleResult again = sample(s, range(0, 4), 2, 1, 0, tags);
    assertThat(again.sampled()).isEqualTo(first.sampled());
  }

  @Test
  void M46_batchIndexesAreIndependent() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 1);
    assertThat(sample(s, range(0, 4), 4, 0, 0, lengths()).sampled()).isEqualTo(range(0, 4));
    assertThat(sample(s, range(4, 8), 4, 0, 1, lengths()).sampled()).isEqualTo(range(4, 8));
  }

  @Test
  void M47_firstCallPopulatesEveryRank() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 3);
    sample(s, range(0, 6), 2, 0, 0, lengths());
    for (int r = 0; r < 3; r++) {
      SampleResult cached = s.cachedResult("p", "t", r, 0).orElseThrow();
      assertThat(cached.sampled()).hasSize(2).isEqualTo(cached.consumed());
    }
  }

  @Test
  void M48_clearCacheDropsOnePartition() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 2);
    sample(s, "p0", range(0, 4), 2, 0, 0, lengths());
    sample(s, "p1", range(0, 4), 2, 0, 0, lengths());
    s.clearCache("p0");
    assertThat(s.cachedResult("p0", "t", 0, 0)).isEmpty();
    assertThat(s.cachedResult("p0", "t", 1, 0)).isEmpty();
    assertThat(s.cachedResult("p1", "t", 1, 0)).isPresent();
    assertThat(s.sharedBatchCount()).isEqualTo(1);
    assertThat(sample(s, "p0", range(4, 8), 2, 0, 0, lengths()).sampled())
        .as("p0 batch 0 is sampled afresh")
        .hasSize(2)
        .isSubsetOf(range(4, 8));
  }

  @Test
  void M49_notEnoughGroupsGivesEmpty() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(2, 2);
    assertThat(sample(s, range(0, 2), 2, 0, 0, lengths()).isEmpty()).isTrue();
    assertThat(s.sharedBatchCount()).isZero();
  }

  @Test
  void M50_rankBeyondDpSizeAfterCachingGetsEmpty() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 2);
    sample(s, range(0, 4), 2, 0, 0, lengths());
    assertThat(sample(s, range(0, 4), 2, 5, 0, lengths()).isEmpty()).isTrue();
    assertThatThrownBy(() -> sample(s, range(0, 4), 2, 5, 1, lengths()))
        .hasMessageContaining("dp_rank 5 must be < dp_size 2");
  }

  @Test
  void M51_globalBatchMustBeMultipleOfGroupSize() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(4, 2);
    assertThatThrownBy(() -> sample(s, range(0, 20), 3, 0, 0, lengths()))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("must be a multiple of n_samples_per_prompt");
  }

  @Test
  void M52_increasingLengths() {
    long[] len = {10, 20, 30, 40, 50, 60, 70, 80};
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(2, 2);
    assertThat(sample(s, range(0, 8), 4, 0, 0, lengths(len)).sampled())
        .containsExactly(0L, 1L, 6L, 7L);
    assertThat(sample(s, List.of(), 4, 1, 0, lengths(len)).sampled())
        .containsExactly(2L, 3L, 4L, 5L);
  }

  @Test
  void M53_missingLengthCountsAsOne() {
    long[] len = {5, 9, 1, 7, -1, 3};
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 2);
    assertThat(sample(s, range(0, 6), 3, 0, 0, lengths(len)).sampled()).containsExactly(0L, 2L, 3L);
    assertThat(sample(s, List.of(), 3, 1, 0, lengths(len)).sampled()).containsExactly(1L, 4L, 5L);
  }

  @Test
  void M54_contiguousFallbackWithThreeRanks() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 3);
    List<List<Long>> shares = new ArrayList<>();
    for (int r = 0; r < 3; r++) {
      shares.add(sample(s, range(7, 14), 2, r, 0, null).sampled());
    }
    assertThat(shares).containsExactly(List.of(7L, 8L), List.of(9L, 10L), List.of(11L, 12L));
  }

  @Test
  void M55_groupCountMustSplitEvenly() {
    assertThatThrownBy(() -> sample(new SeqlenBalancedSampler(4, 2), range(0, 8), 2, 0, 0, null))
        .hasMessageContaining("cannot be split evenly over dp_size 2");
    assertThatThrownBy(() -> sample(new SeqlenBalancedSampler(2, 2), range(0, 8), 3, 0, 0, null))
        .hasMessageContaining("3 prompt groups");
  }

  @Test
  void M56_prefetchingRankNeverReceivesAnotherRanksSamples() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 2);
    ControllerModel c = new ControllerModel("p", s, true);
    long[] len = {100, 100, 10, 10, 50, 60, 70, 80};
    for (int i = 0; i < len.length; i++) {
      c.tags.put((long) i, Map.of(SeqlenBalancedSampler.LENGTH_TAG, len[i]));
    }
    c.produce(0, 8);
    List<Long> r0b0 = c.fetch("t", 2, SamplingConfig.of(0, 0));
    List<Long> r0b1 = c.fetch("t", 2, SamplingConfig.of(0, 1));
    List<Long> r1b0 = c.fetch("t", 2, SamplingConfig.of(1, 0));
    List<Long> r1b1 = c.fetch("t", 2, SamplingConfig.of(1, 1));
    List<Long> all = new ArrayList<>();
    for (List<Long> b : List.of(r0b0, r0b1, r1b0, r1b1)) {
      assertThat(b).hasSize(2);
      all.addAll(b);
    }
    assertThat(new HashSet<>(all)).hasSize(8).containsAll(range(0, 8));
  }

  @Test
  void M57_batchIndexRequiredWithSeveralRanks() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 2);
    assertThatThrownBy(() -> sample(s, range(0, 4), 2, 0, null, null))
        .hasMessageContaining("needs dp_rank and batch_index");
  }

  @Test
  void M2_startsWithEmptyCacheAndRestoresState() {
    SeqlenBalancedSampler s = new SeqlenBalancedSampler(1, 2);
    assertThat(s.saveState().entries()).isEmpty();
    sample(s, range(0, 4), 2, 0, 0, lengths(100, 100, 10, 10));
    SeqlenBalancedSampler restored = new SeqlenBalancedSampler(1, 2);
    restored.loadState(s.saveState());
    Set<List<Long>> shares = new HashSet<>();
    for (int r = 0; r < 2; r++) {
      shares.add(sample(restored, List.of(), 2, r, 0, null).sampled());
    }
    assertThat(shares).containsExactlyInAnyOrder(List.of(1L, 2L), List.of(0L, 3L));
    assertThat(restored.hasCachedResult("p", "t", SamplingConfig.of(1, 0))).isTrue();
  }
}
