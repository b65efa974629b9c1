package org.transferqueue.sampler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.ControllerConfig;

/** {@code controller.sampler_args} reaches every sampler that takes parameters. */
class SamplersTest {

  @Test
  void shouldPassUpstreamsParameterNamesToTheBuiltInSamplers() {
    Sampler grpo =
        Samplers.create(
            ControllerConfig.builder()
                .sampler("GRPOGroupNSampler")
                .samplerArgs(Map.of("n_samples_per_prompt", 4))
                .build());
    assertThat(grpo).isInstanceOf(GrpoGroupNSampler.class);
    assertThat(((GrpoGroupNSampler) grpo).samplesPerPrompt()).isEqualTo(4);

    Sampler balanced =
        Samplers.create("SeqlenBalancedSampler", Map.of("n_samples_per_prompt", 2L, "dp_size", 3L));
    assertThat(balanced).isInstanceOf(SeqlenBalancedSampler.class);
    assertThatThrownBy(() -> balanced.sample(SamplingRequest.of(java.util.List.of(0L, 1L), 2)))
        .hasMessageContaining("with dp_size 3 needs dp_rank");
    assertThat(Samplers.create("RankAwareSampler", Map.of())).isInstanceOf(RankAwareSampler.class);
    assertThat(Samplers.create(ControllerConfig.builder().build()))
        .isInstanceOf(SequentialSampler.class);
  }

  @Test
  void shouldNameTheKeyAndValueOfABadArgument() {
    assertInvalid(
        "GRPOGroupNSampler",
        Map.of("n_samples_per_prompt", 0L),
        "controller.sampler_args.n_samples_per_prompt: 0 must be in [1, 2147483647]");
    assertInvalid(
        "GRPOGroupNSampler",
        Map.of("n_samples_per_prompt", "four"),
        "controller.sampler_args.n_samples_per_prompt: \"four\" is not an integer");
    assertInvalid(
        "GRPOGroupNSampler",
        Map.of("n", 4L),
        "controller.sampler_args.n: 4 is not an argument of GRPOGroupNSampler (it takes"
            + " n_samples_per_prompt, group_tag)");
    assertInvalid(
        "RankAwareSampler",
        Map.of("dp_size", 2L),
        "controller.sampler_args.dp_size: 2 is not an argument of RankAwareSampler (it takes"
            + " none)");
    assertInvalid(
        SequentialSampler.class.getName(),
        Map.of("x", true),
        "controller.sampler_args.x: true cannot be given to "
            + SequentialSampler.class.getName()
            + ": it has no public constructor taking a Map of arguments");
  }

  @Test
  void shouldGiveTheArgumentsToAUserSamplerThatTakesAMap() {
    Sampler sampler = Samplers.create(Configured.class.getName(), Map.of("limit", 3L));
    assertThat(((Configured) sampler).args).containsEntry("limit", 3L);
    assertThat(((Configured) Samplers.create(Configured.class.getName(), Map.of())).args).isEmpty();
  }

  /** A user sampler configured through {@code controller.sampler_args}. */
  public static final class Configured implements Sampler {
    final Map<String, Object> args;

    /**
     * Creates the sampler.
     *
     * @param args the arguments
     */
    public Configured(Map<String, Object> args) {
      this.args = args;
    }

    @Override
    public SampleResult sample(SamplingRequest request) {
      return SampleResult.empty();
    }
  }

  private static void assertInvalid(String sampler, Map<String, ?> args, String message) {
    assertThatThrownBy(() -> Samplers.create(sampler, args))
        .isInstanceOf(TqException.class)
        .hasMessage(message)
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
  }
}
