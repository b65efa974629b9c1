package org.transferqueue.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KvNotebookTourExampleTest {

  @Test
  void US7_keyValueTour() {
    KvNotebookTourExample.Outcome o =
        KvNotebookTourExample.run(
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    assertThat(o.sample0()).containsExactly(1, 2, 3, 4);
    assertThat(o.batchRows()).isDeepEqualTo(new long[][] {{10, 20}, {30, 40}, {50, 60}});
    assertThat(o.listedTrainKeys())
        .containsExactly("sample_0", "sample_1", "batch_0", "batch_1", "batch_2");
    assertThat(o.subsetRows()).isDeepEqualTo(new long[][] {{10, 20}, {50, 60}});
    assertThat(o.responseRows()).isDeepEqualTo(new long[][] {{100, 200}, {300, 400}, {500, 600}});
    assertThat(o.allFieldsAfterAppend()).containsExactly("input_ids", "response");
    assertThat(o.raggedRows()).isDeepEqualTo(new long[][] {{10, 11, 12}, {20}, {30, 31}});
    assertThat(o.raggedSubsetRows()).isDeepEqualTo(new long[][] {{10, 11, 12}, {30, 31}});
    assertThat(o.features3dShapes())
        .containsExactly(List.of(2L, 3L, 4L), List.of(5L, 3L, 4L), List.of(1L, 3L, 4L));
    assertThat(o.imagesPerSample()).containsExactly(2, 1, 3);
    assertThat(o.pixelsMatch()).isTrue();
    assertThat(o.prompts()).containsExactly("What is 2+2?", "Name a prime.");
    assertThat(o.metadata())
        .containsExactly(
            Map.of("lang", "en", "difficulty", 1L), Map.of("lang", "en", "difficulty", 2L));
    assertThat(o.mixed()).containsExactly("hello", "[7, 8, 9]");
    assertThat(o.parsedShapes()).hasSize(KvNotebookTourExample.PARSED_SAMPLES);
    for (int i = 0; i < KvNotebookTourExample.PARSED_SAMPLES; i++) {
      assertThat(o.parsedShapes().get(i)).containsExactly((long) (i % 4 + 1), (long) (i % 3 + 2));
    }
    assertThat(o.normalDataIntact()).isTrue();
    assertThat(o.partitions())
        .containsEntry("train", 5 + 3 + 3 + 2 + 1 + 32)
        .containsEntry("validation", 1);
    assertThat(o.keysLeft()).isZero();
  }
}
