package org.transferqueue.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class CustomSamplerExampleTest {

  @Test
  void US5_customSamplersPluggedIntoTheController() {
    CustomSamplerExample.Outcome outcome =
        CustomSamplerExample.run(
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));

    // With replacement: every fetch is served (nothing consumed), from the 6 samples.
    assertThat(outcome.withReplacement()).hasSize(4).allSatisfy(b -> assertThat(b).hasSize(3));
    assertThat(outcome.withReplacement().stream().flatMap(List::stream))
        .allMatch(gi -> gi >= 0 && gi < 6);
    assertThat(CustomSamplerExample.disjoint(outcome.withReplacement()))
        .as("4 batches of 3 from 6 samples must repeat some")
        .isFalse();

    // Without replacement: 3, 1 and 2 samples, disjoint, covering all 6.
    assertThat(outcome.withoutReplacement()).extracting(List::size).containsExactly(3, 1, 2);
    assertThat(CustomSamplerExample.disjoint(outcome.withoutReplacement())).isTrue();
    assertThat(outcome.withoutReplacement().stream().flatMap(List::stream))
        .containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L);

    // Priority: the high-score samples 3, 2 and 7 are the most drawn.
    assertThat(outcome.topPriority(3)).containsExactlyInAnyOrder(3L, 2L, 7L);
    assertThat(outcome.topPriority(1)).containsExactly(3L);
  }
}
