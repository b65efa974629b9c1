package org.transferqueue.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ControllerBehaviourExampleTest {

  @Test
  void US4_isolationExpansionAndSequentialSampling() {
    ControllerBehaviourExample.Outcome outcome =
        ControllerBehaviourExample.run(
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    assertThat(outcome.trainIds()).isDeepEqualTo(new long[][] {{1, 2, 3}, {4, 5, 6}});
    assertThat(outcome.valIds()).isDeepEqualTo(new long[][] {{7, 8, 9}, {10, 11, 12}});
    assertThat(outcome.dynamicFetched()).isEqualTo(5);
    assertThat(outcome.field3Produced()).containsExactly(true, true, false, false, false);
    assertThat(outcome.taskAFirst()).containsExactly(0L, 1L, 2L);
    assertThat(outcome.taskASecond()).containsExactly(3L, 4L, 5L);
    assertThat(outcome.taskB()).containsExactly(0L, 1L);
  }
}
