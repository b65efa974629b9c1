package org.transferqueue.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RelaxPipelineExampleTest {

  @Test
  void US9_everyStageProcessesEachSampleExactlyOncePerStep() {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    RelaxPipelineExample.Outcome outcome =
        RelaxPipelineExample.run(new PrintStream(printed, true, StandardCharsets.UTF_8));

    assertThat(outcome.processed().keySet())
        .containsExactly("rollout", "ref", "actor", "reward", "update");
    outcome
        .processed()
        .forEach(
            (stage, perStep) -> {
              assertThat(perStep).as(stage).hasSize(3);
              for (int step = 0; step < 3; step++) {
                List<Long> expected = LongStream.range(step * 8L, step * 8L + 8).boxed().toList();
                assertThat(perStep.get(step))
                    .as("stage %s step %d", stage, step)
                    .containsExactlyInAnyOrderElementsOf(expected);
              }
            });
    assertThat(outcome.mismatches()).isZero();
    assertThat(outcome.partitionsAfterRun()).isEmpty();
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("step 2: rollout 8/8 ref 8/8 actor 8/8 reward 8/8 update 8/8")
        .contains("verified: every value read matches what was written")
        .doesNotContain("MISMATCH");
  }
}
