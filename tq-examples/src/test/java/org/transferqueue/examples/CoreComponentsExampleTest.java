package org.transferqueue.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class CoreComponentsExampleTest {

  @Test
  void US1_writesFetchesReadsAndClears() {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    CoreComponentsExample.Outcome outcome =
        CoreComponentsExample.run(new PrintStream(printed, true, StandardCharsets.UTF_8));
    assertThat(outcome.fetchedIndexes()).hasSize(4).doesNotHaveDuplicates();
    assertThat(outcome.readInputIds()).isDeepEqualTo(CoreComponentsExample.INPUT_IDS);
    assertThat(outcome.rowsMatch()).isTrue();
    assertThat(outcome.partitionsAfterClear()).isEmpty();
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("tutorial_partition_0")
        .contains("(as written)")
        .doesNotContain("DIFFERENT");
  }
}
