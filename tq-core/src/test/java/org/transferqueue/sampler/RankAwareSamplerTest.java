package org.transferqueue.sampler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.sampler.SequentialSamplerTest.range;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.TqException;

class RankAwareSamplerTest {
  private final RankAwareSampler sampler = new RankAwareSampler();

  private SampleResult sample(
      List<Long> ready, int batchSize, int dpRank, int batchIndex, String task, String partition) {
    return sampler.sample(
        new SamplingRequest(
            ready, batchSize, partition, task, SamplingConfig.of(dpRank, batchIndex), null));
  }

  private SampleResult sample(List<Long> ready, int batchSize, int dpRank, int batchIndex) {
    return sample(ready, batchSize, dpRank, batchIndex, "task", "test");
  }

  @Test
  void M2_startsWithEmptyCache() {
    assertThat(sampler.cacheSize()).isZero();
  }

  @Test
  void M28_firstCallerSamples() {
    assertThat(sample(range(0, 6), 3, 0, 0))
        .isEqualTo(new SampleResult(List.of(0L, 1L, 2L), List.of(0L, 1L, 2L)));
  }

  @Test
  void M29_sameKeyServedFromCache() {
    sample(range(0, 6), 3, 0, 0);
    assertThat(sample(range(0, 6), 3, 0, 0).sampled()).containsExactly(0L, 1L, 2L);
    assertThat(sampler.cacheSize()).isEqualTo(1);
  }

  @Test
  void M30_nextBatchIndexSamplesAgain() {
    assertThat(sample(range(0, 8), 2, 0, 0).sampled()).containsExactly(0L, 1L);
    assertThat(sample(range(2, 8), 2, 0, 1).sampled()).containsExactly(2L, 3L);
  }

  @Test
  void M31_cachedBatchIgnoresCurrentReady() {
    sample(range(0, 8), 2, 0, 0);
    assertThat(sample(range(2, 8), 2, 0, 0).sampled()).containsExactly(0L, 1L);
  }

  @Test
  void M32_notEnoughReadyGivesEmptyAndCachesNothing() {
    assertThat(sample(List.of(), 3, 0, 0).isEmpty()).isTrue();
    assertThat(sample(List.of(0L, 1L), 5, 0, 0).isEmpty()).isTrue();
    assertThat(sample(range(0, 4), 0, 0, 0).isEmpty()).isTrue();
    assertThat(sampler.cacheSize()).isZero();
  }

  @Test
  void M33_tasksAreIsolated() {
    assertThat(sample(range(0, 4), 2, 0, 0, "task0", "test").sampled()).containsExactly(0L, 1L);
    assertThat(sample(range(0, 4), 2, 0, 0, "task1", "test").sampled()).containsExactly(0L, 1L);
    assertThat(sampler.cachedResult("test", "task0", 0, 0).orElseThrow().sampled())
        .containsExactly(0L, 1L);
    assertThat(sampler.cachedResult("test", "task1", 0, 0).orElseThrow().sampled())
        .containsExactly(0L, 1L);
  }

  @Test
  void M34_partitionsAreIsolated() {
    assertThat(sample(range(0, 4), 2, 0, 0, "t", "partition0").sampled()).containsExactly(0L, 1L);
    assertThat(sample(range(0, 4), 2, 0, 0, "t", "partition1").sampled()).containsExactly(0L, 1L);
    assertThat(sampler.cacheSize()).isEqualTo(2);
    sampler.clearCache("partition0");
    assertThat(sampler.cachedResult("partition0", "t", 0, 0)).isEmpty();
    assertThat(sampler.cachedResult("partition1", "t", 0, 0)).isPresent();
  }

  @Test
  void M35_negativeRankRejected() {
    assertThatThrownBy(() -> sample(range(0, 4), 2, -1, 0))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("dp_rank")
        .hasMessageContaining("greater than or equal to 0");
  }

  @Test
  void M36_unknownOptionsIgnored() {
    SamplingConfig config =
        SamplingConfig.fromMap(Map.of("dp_rank", 0, "batch_index", 0, "foo", "bar"));
    Sampler generic = sampler;
    assertThat(
            generic.sample(new SamplingRequest(range(0, 4), 2, "p", "t", config, null)).sampled())
        .containsExactly(0L, 1L);
  }

  @Test
  void shouldRequireRankAndBatchIndex() {
    assertThatThrownBy(() -> sampler.sample(SamplingRequest.of(range(0, 4), 2)))
        .hasMessageContaining("needs dp_rank and batch_index");
    assertThatThrownBy(
            () ->
                sampler.sample(
                    new SamplingRequest(
                        range(0, 4), 2, "p", "t", SamplingConfig.of(0, null), null)))
        .hasMessageContaining("batch_index=null");
  }

  @Test
  void M37_prefetchTableThroughPollingController() {
    ControllerModel c = new ControllerModel("p", sampler, true);
    c.produce(0, 6);
    assertThat(c.fetch("t", 2, SamplingConfig.of(0, 0))).containsExactly(0L, 1L);
    assertThat(c.fetch("t", 2, SamplingConfig.of(0, 0))).containsExactly(0L, 1L);
    assertThat(c.fetch("t", 2, SamplingConfig.of(1, 0))).containsExactly(2L, 3L);
    assertThat(c.fetch("t", 2, SamplingConfig.of(0, 1))).containsExactly(4L, 5L);
    assertThat(c.fetch("t", 2, SamplingConfig.of(1, 1))).isEmpty();
    assertThat(c.fetch("t", 2, SamplingConfig.of(1, 0))).containsExactly(2L, 3L);
    assertThat(c.fetch("t", 2, SamplingConfig.of(0, 1))).containsExactly(4L, 5L);
    assertThat(c.consumed("t")).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
  }

  @Test
  void M38_blockingControllerServesPeerFromCache() {
    ControllerModel c = new ControllerModel("p", sampler, false);
    c.produce(0, 4);
    assertThat(c.fetch("t", 2, SamplingConfig.of(0, 0))).containsExactly(0L, 1L);
    assertThat(c.fetch("t", 2, SamplingConfig.of(1, 0))).containsExactly(2L, 3L);
    assertThat(c.fetch("t", 2, SamplingConfig.of(0, 0))).containsExactly(0L, 1L);
    assertThatThrownBy(() -> c.fetch("t", 2, SamplingConfig.of(0, 1)))
        .isInstanceOf(ControllerModel.NotServed.class);
  }

  @Test
  void M39_partitionAndTaskComeFromTheRequestNotTheConfig() {
    SamplingConfig config =
        SamplingConfig.fromMap(
            Map.of("dp_rank", 0, "batch_index", 0, "task_name", "spoofed", "partition_id", "x"));
    sampler.sample(new SamplingRequest(range(0, 4), 2, "real_p", "real_t", config, null));
    assertThat(sampler.cachedResult("real_p", "real_t", 0, 0)).isPresent();
    assertThat(sampler.cachedResult("x", "spoofed", 0, 0)).isEmpty();
    assertThat(config.options()).isEmpty();
  }
}
