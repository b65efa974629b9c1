package org.transferqueue.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MetadataConceptsExampleTest {

  @Test
  void US3_metadataByHandAndThroughALiveSystem() {
    MetadataConceptsExample.Outcome outcome =
        MetadataConceptsExample.run(
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    assertThat(outcome.readyBefore()).isFalse();
    assertThat(outcome.readyAfter()).isTrue();
    assertThat(outcome.firstSampleShape()).containsExactly(512L);
    assertThat(outcome.reordered()).containsExactly(4L, 3L, 2L, 1L, 0L);
    assertThat(outcome.chunkSizes()).containsExactly(4, 3, 3);
    assertThat(outcome.concatSize()).isEqualTo(10);
    assertThat(outcome.unionFields()).containsExactly("attention_mask", "input_ids");
    assertThat(outcome.fetchedTags()).isEqualTo(outcome.producerTags());
    long[][] written = MetadataConceptsExample.writtenInputIds();
    assertThat(outcome.evenRows())
        .isDeepEqualTo(new long[][] {written[0], written[2], written[4], written[6]});
    assertThat(outcome.chunkRows()).containsExactly(4, 4);
  }
}
