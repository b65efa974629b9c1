package org.transferqueue.sampler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.sampler.SequentialSamplerTest.range;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

class GrpoGroupNSamplerTest {

  private static SampleResult sample(int n, List<Long> ready, int batchSize) {
    return new GrpoGroupNSampler(n).sample(SamplingRequest.of(ready, batchSize));
  }

  @Test
  void M2_startsWithEmptyCache() {
    assertThat(new GrpoGroupNSampler().cacheSize()).isZero();
    assertThat(new GrpoGroupNSampler(4).saveState().entries()).isEmpty();
  }

  @Test
  void M11_twoGroupsOfFour() {
    assertThat(sample(4, range(0, 8), 8)).isEqualTo(new SampleResult(range(0, 8), range(0, 8)));
  }

  @Test
  void M12_firstGroupsWhenMoreReady() {
    assertThat(sample(4, range(0, 12), 8).sampled()).isEqualTo(range(0, 8));
  }

  @Test
  void M13_batchMustBeMultipleOfGroupSize() {
    assertThatThrownBy(() -> sample(4, range(0, 8), 7))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("must be a multiple of n_samples_per_prompt")
        .satisfies(t -> assertThat(((TqException) t).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void M14_tooFewGroupsGivesEmpty() {
    assertThat(sample(4, range(0, 4), 8)).isEqualTo(SampleResult.empty());
  }

  @Test
  void M15_batchZeroGivesEmpty() {
    assertThat(sample(2, range(0, 4), 0)).isEqualTo(SampleResult.empty());
  }

  @Test
  void M16_defaultGroupSizeOneIsSequential() {
    assertThat(new GrpoGroupNSampler().sample(SamplingRequest.of(range(0, 6), 3)).sampled())
        .containsExactly(0L, 1L, 2L);
  }

  @Test
  void M17_largeGroups() {
    assertThat(sample(10, range(0, 20), 20).sampled()).isEqualTo(range(0, 20));
  }

  @Test
  void M18_ignoresUnknownOptions() {
    assertThat(sample(2, range(0, 8), 4).sampled()).containsExactly(0L, 1L, 2L, 3L);
    SamplingConfig config = SamplingConfig.fromMap(Map.of("extra", 1, "other", "x"));
    SampleResult result =
        new GrpoGroupNSampler(4)
            .sample(new SamplingRequest(range(0, 8), 8, "p", "t", config, null));
    assertThat(result.sampled()).isEqualTo(range(0, 8));
  }

  @Test
  void M19_groupsNeedNotStartAtZero() {
    List<Long> ready = List.of(3L, 4L, 5L, 6L, 9L, 10L, 11L, 12L);
    assertThat(sample(4, ready, 8).sampled()).isEqualTo(ready);
  }

  @Test
  void M20_groupSizeMustBePositive() {
    assertThatThrownBy(() -> new GrpoGroupNSampler(0)).hasMessageContaining("must be positive");
    assertThatThrownBy(() -> new GrpoGroupNSampler(-2)).hasMessageContaining("must be positive");
  }

  @Test
  void M21_noRunOfThree() {
    assertThat(sample(3, List.of(0L, 1L, 3L, 4L, 6L, 7L), 6).isEmpty()).isTrue();
  }

  @Test
  void M22_scanSkipsBrokenWindows() {
    List<Long> ready = List.of(0L, 1L, 3L, 4L, 5L, 6L, 7L, 9L, 10L, 11L);
    assertThat(sample(3, ready, 6).sampled()).containsExactly(3L, 4L, 5L, 9L, 10L, 11L);
  }

  @Test
  void M23_unsortedReadyIsSorted() {
    List<Long> ready = List.of(10L, 11L, 12L, 5L, 6L, 7L, 8L, 9L);
    assertThat(sample(4, ready, 8).sampled()).isEqualTo(range(5, 13));
  }

  @Test
  void M24_sixteenReady() {
    assertThat(sample(4, range(0, 16), 12).sampled()).hasSize(12);
    assertThat(sample(4, range(0, 16), 20).isEmpty()).isTrue();
  }

  @Test
  void M25_alignmentCheckedAgainstGroupTag() {
    assertThat(sample(2, range(1, 5), 2).sampled())
        .as("without group tags any consecutive run is a group")
        .containsExactly(1L, 2L);
    Map<Long, Map<String, Object>> tags = new HashMap<>();
    for (long i = 0; i < 6; i++) {
      tags.put(i, Map.of(GrpoGroupNSampler.GROUP_TAG, i / 2));
    }
    SampleResult aligned =
        new GrpoGroupNSampler(2)
            .sample(new SamplingRequest(range(1, 5), 2, "p", "t", SamplingConfig.NONE, tags::get));
    assertThat(aligned.sampled()).containsExactly(2L, 3L);
    SampleResult both =
        new GrpoGroupNSampler(2)
            .sample(new SamplingRequest(range(1, 5), 4, "p", "t", SamplingConfig.NONE, tags::get));
    assertThat(both.isEmpty()).as("[1,2] and [3,4] straddle groups; only [2,3] is whole").isTrue();
  }

  @Test
  void shouldRejectPartlyTaggedWindow() {
    Map<Long, Map<String, Object>> tags =
        Map.of(
            0L, Map.of(GrpoGroupNSampler.GROUP_TAG, "a"),
            1L, Map.of(),
            2L, Map.of(GrpoGroupNSampler.GROUP_TAG, "b"),
            3L, Map.of(GrpoGroupNSampler.GROUP_TAG, "b"));
    SampleResult result =
        new GrpoGroupNSampler(2)
            .sample(new SamplingRequest(range(0, 4), 2, "p", "t", SamplingConfig.NONE, tags::get));
    assertThat(result.sampled()).containsExactly(2L, 3L);
  }

  /** Insert positions: {@code inserts[k]} lists the global indexes of insert k in row order. */
  private static InsertLookup inserts(long[]... inserts) {
    Map<Long, InsertPosition> positions = new HashMap<>();
    for (int k = 0; k < inserts.length; k++) {
      for (int row = 0; row < inserts[k].length; row++) {
        positions.put(inserts[k][row], new InsertPosition(k, row));
      }
    }
    return positions::get;
  }

  private static SampleResult sample(
      int n, List<Long> ready, int batchSize, InsertLookup inserts, TagLookup tags) {
    return new GrpoGroupNSampler(n)
        .sample(
            new SamplingRequest(ready, batchSize, "p", "t", SamplingConfig.NONE, tags, inserts));
  }

  @Test
  void shouldServeTheRowsOfOneInsertWhateverIndexesItReceived() {
    InsertLookup recycled = inserts(new long[] {15, 9, 14, 11});
    assertThat(sample(4, List.of(9L, 11L, 14L, 15L), 4, recycled, null).sampled())
        .as("one insert's rows, in row order")
        .containsExactly(15L, 9L, 14L, 11L);
  }

  @Test
  void shouldNeverMixTwoInsertsWhoseIndexesAreAdjacent() {
    InsertLookup two = inserts(new long[] {0, 1}, new long[] {2, 3});
    assertThat(sample(2, range(1, 4), 2, two, null).sampled()).containsExactly(2L, 3L);
    assertThat(sample(2, range(1, 4), 4, two, null).isEmpty()).isTrue();
  }

  @Test
  void shouldCutAnInsertIntoGroupsFromItsFirstRowAndLeaveTrailingRowsUngrouped() {
    InsertLookup five = inserts(new long[] {4, 5, 6, 7, 8});
    assertThat(sample(2, range(4, 9), 4, five, null).sampled()).containsExactly(4L, 5L, 6L, 7L);
    assertThat(sample(2, range(5, 9), 2, five, null).sampled())
        .as("5 and 6 belong to two groups; 8 is a trailing row")
        .containsExactly(6L, 7L);
    assertThat(sample(2, List.of(5L, 8L), 2, five, null).isEmpty()).isTrue();
  }

  @Test
  void shouldServeOlderInsertsFirstWhateverTheirIndexes() {
    InsertLookup older = inserts(new long[] {10, 11}, new long[] {0, 1});
    assertThat(sample(2, List.of(0L, 1L, 10L, 11L), 2, older, null).sampled())
        .containsExactly(10L, 11L);
  }

  @Test
  void shouldGroupSamplesWithoutPositionByAdjacentIndexesFirst() {
    InsertLookup some = inserts(new long[] {20, 7});
    List<Long> ready = List.of(3L, 4L, 7L, 8L, 20L);
    assertThat(sample(2, ready, 4, some, null).sampled()).containsExactly(3L, 4L, 20L, 7L);
    assertThat(sample(2, ready, 6, some, null).isEmpty())
        .as("8 has no position and no adjacent partner; 7 belongs to an insert")
        .isTrue();
  }

  @Test
  void shouldCheckTheGroupTagOfInsertGroups() {
    InsertLookup one = inserts(new long[] {0, 1, 2, 3});
    Map<Long, Map<String, Object>> tags =
        Map.of(
            0L, Map.of(GrpoGroupNSampler.GROUP_TAG, "a"),
            1L, Map.of(GrpoGroupNSampler.GROUP_TAG, "b"),
            2L, Map.of(GrpoGroupNSampler.GROUP_TAG, "c"),
            3L, Map.of(GrpoGroupNSampler.GROUP_TAG, "c"));
    assertThat(sample(2, range(0, 4), 2, one, tags::get).sampled()).containsExactly(2L, 3L);
  }

  @Test
  void M26_cachesPerRankAndBatchIndex() {
    GrpoGroupNSampler sampler = new GrpoGroupNSampler(2);
    SamplingConfig rank0 = SamplingConfig.of(0, null);
    assertThat(sampler.sample(new SamplingRequest(range(0, 4), 2, "p", "t", rank0, null)).sampled())
        .containsExactly(0L, 1L);
    assertThat(sampler.sample(new SamplingRequest(range(2, 4), 2, "p", "t", rank0, null)).sampled())
        .containsExactly(0L, 1L);
    assertThat(sampler.hasCachedResult("p", "t", rank0)).isTrue();
    assertThat(sampler.hasCachedResult("p", "t", SamplingConfig.of(0, 1))).isFalse();
    assertThat(sampler.hasCachedResult("p", "t", SamplingConfig.NONE)).isFalse();
    assertThat(sampler.cachedResult("p", "t", 0, null)).isPresent();
    sampler.clearCache("p");
    assertThat(sampler.hasCachedResult("p", "t", rank0)).isFalse();
  }

  @Test
  void M27_throughControllerModel() {
    ControllerModel controller = new ControllerModel("p", new GrpoGroupNSampler(2), true);
    controller.produce(0, 8);
    controller.consumed("g").add(1L);
    assertThat(controller.fetch("g", 4, SamplingConfig.NONE)).containsExactly(2L, 3L, 4L, 5L);
    assertThat(controller.ready("g")).containsExactly(0L, 6L, 7L);
    assertThat(controller.fetch("g", 4, SamplingConfig.NONE)).isEmpty();
    assertThatThrownBy(() -> controller.fetch("g", 3, SamplingConfig.NONE))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("multiple of");
  }

  @Test
  void shouldRestoreCacheFromSavedState() {
    GrpoGroupNSampler sampler = new GrpoGroupNSampler(2);
    sampler.sample(new SamplingRequest(range(0, 4), 2, "p", "t", SamplingConfig.of(1, 3), null));
    SamplerState state = sampler.saveState();
    GrpoGroupNSampler restored = new GrpoGroupNSampler(2);
    restored.loadState(state);
    assertThat(restored.cachedResult("p", "t", 1, 3))
        .contains(SampleResult.withoutReplacement(List.of(0L, 1L)));
    assertThatThrownBy(() -> new RankAwareSampler().loadState(state))
        .hasMessageContaining("cannot be loaded");
  }
}
