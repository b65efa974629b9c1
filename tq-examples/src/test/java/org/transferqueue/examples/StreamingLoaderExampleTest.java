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
class StreamingLoaderExampleTest {

  @Test
  void US6_replicasOfADpGroupSeeTheSameSamplesAndGroupsAreDisjoint() {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    StreamingLoaderExample.Outcome outcome =
        StreamingLoaderExample.run(new PrintStream(printed, true, StandardCharsets.UTF_8));

    assertThat(outcome.microBatchesByTrainer()).containsExactly(5, 5, 5, 5);
    List<List<Long>> seen = outcome.seenByTrainer();
    assertThat(seen).allSatisfy(values -> assertThat(values).hasSize(10).doesNotHaveDuplicates());
    assertThat(seen.get(1)).isEqualTo(seen.get(0));
    assertThat(seen.get(3)).isEqualTo(seen.get(2));
    assertThat(seen.get(0)).doesNotContainAnyElementsOf(seen.get(2));
    List<Long> written =
        LongStream.range(0, 20).flatMap(i -> LongStream.of(i, i + 10_000)).boxed().toList();
    assertThat(seen).allSatisfy(values -> assertThat(written).containsAll(values));
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("read disjoint samples")
        .doesNotContain("DIFFERENT")
        .doesNotContain("OVERLAP");
  }
}
