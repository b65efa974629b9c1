package org.transferqueue.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RedisStyleKvExampleTest {

  @Test
  void US2_keysTagsPartialColumnsAndClears() {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    RedisStyleKvExample.Outcome outcome =
        RedisStyleKvExample.run(new PrintStream(printed, true, StandardCharsets.UTF_8));
    Map<String, Map<String, Object>> train = outcome.listing().get("Train");
    assertThat(train.keySet()).containsExactly("0_0", "1_0", "1_1", "1_2", "2_0");
    assertThat(train.get("0_0"))
        .isEqualTo(Map.of("global_steps", 0L, "status", "finish", "model_version", 0L));
    assertThat(train.get("1_0")).containsEntry("status", "running");
    assertThat(train.get("1_1")).containsEntry("status", "finish");
    assertThat(train.get("2_0")).containsEntry("status", "finish");
    assertThat(outcome.inputIds())
        .isDeepEqualTo(new long[][] {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}, {13, 14, 15}});
    assertThat(outcome.defaultFields()).containsExactly("attention_mask", "input_ids");
    assertThat(outcome.remainingKeys()).containsExactly("1_1", "1_2", "2_0");
    assertThat(printed.toString(StandardCharsets.UTF_8)).contains("partition 'Train'");
  }
}
