package org.transferqueue.sampler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

class SequentialSamplerTest {
  private final SequentialSampler sampler = new SequentialSampler();

  static List<Long> range(long from, long to) {
    return LongStream.range(from, to).boxed().toList();
  }

  private SampleResult sample(List<Long> ready, int batchSize) {
    return sampler.sample(SamplingRequest.of(ready, batchSize));
  }

  @Test
  void M1_samplerSpiRequiresSample() throws Exception {
    assertThat(Sampler.class.isInterface()).isTrue();
    assertThat(
            Modifier.isAbstract(
                Sampler.class.getMethod("sample", SamplingRequest.class).getModifiers()))
        .isTrue();
  }

  @Test
  void M3_firstBatchSizeReadyIndexes() {
    assertThat(sample(range(0, 6), 3))
        .isEqualTo(new SampleResult(List.of(0L, 1L, 2L), List.of(0L, 1L, 2L)));
  }

  @Test
  void M4_nothingReady() {
    assertThat(sample(List.of(), 3)).isEqualTo(SampleResult.empty());
  }

  @Test
  void M5_fewerThanRequested() {
    assertThat(sample(List.of(0L, 1L), 5))
        .isEqualTo(new SampleResult(List.of(0L, 1L), List.of(0L, 1L)));
  }

  @Test
  void M6_batchZero() {
    assertThat(sample(range(0, 4), 0).isEmpty()).isTrue();
  }

  @Test
  void M7_negativeBatchRejected() {
    assertThatThrownBy(() -> sample(range(0, 4), -1))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("batch size -1")
        .satisfies(t -> assertThat(((TqException) t).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void M8_keepsInputOrder() {
    assertThat(sample(List.of(10L, 5L, 15L, 20L, 8L), 3).sampled()).containsExactly(10L, 5L, 15L);
  }

  @Test
  void M9_doesNotDeduplicate() {
    assertThat(sample(List.of(0L, 1L, 0L, 2L, 1L, 3L), 4).sampled())
        .containsExactly(0L, 1L, 0L, 2L);
  }

  @Test
  void M10_ignoresContextAndUnknownOptions() {
    SamplingConfig config =
        SamplingConfig.fromMap(Map.of("dp_rank", 1, "batch_index", 3, "unknown", "x"));
    SampleResult result =
        sampler.sample(new SamplingRequest(range(0, 4), 2, "p", "t", config, null));
    assertThat(result.sampled()).containsExactly(0L, 1L);
    assertThat(sampler.hasCachedResult("p", "t", config)).isFalse();
  }

  @Test
  void M2_startsWithoutState() {
    assertThat(sampler.saveState().entries()).isEmpty();
    assertThat(sampler.saveState().samplerName()).isEqualTo("SequentialSampler");
  }

  @Test
  void shouldParseSamplingConfigAndDropControllerOwnedKeys() {
    SamplingConfig config =
        SamplingConfig.fromMap(
            Map.of("dp_rank", 2L, "batch_index", 7, "task_name", "x", "partition_id", "y", "o", 1));
    assertThat(config.dpRank()).isEqualTo(2);
    assertThat(config.batchIndex()).isEqualTo(7);
    assertThat(config.options()).isEqualTo(Map.of("o", 1));
    assertThatThrownBy(() -> SamplingConfig.fromMap(Map.of("dp_rank", "zero")))
        .hasMessageContaining("'dp_rank' must be an integer");
  }
}
