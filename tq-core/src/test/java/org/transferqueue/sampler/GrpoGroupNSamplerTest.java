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
