package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.controller.Fixtures.controller;
import static org.transferqueue.controller.Fixtures.insertProduced;
import static org.transferqueue.controller.Fixtures.range;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;

/** "Not ready" and "no such partition" as values: {@link ControllerApi#tryGetMetadata}. */
@Timeout(30)
class ControllerTryGetMetadataTest {
  private final Controller blocking = controller();
  private final Controller polling = controller(1, true);

  private static GetMetadataRequest fetch(String partition, int n, Duration wait) {
    return GetMetadataRequest.fetch(partition, List.of("x"), "t", n).withTimeout(wait);
  }

  @Test
  void shouldAnswerEmptyAtTheDeadlineWhenABlockingFetchFindsTooFewReadySamples() {
    insertProduced(blocking, "p", 2, "x");

    Optional<BatchMeta> answer = blocking.tryGetMetadata(fetch("p", 5, Duration.ofMillis(50)));

    assertThat(answer).isEmpty();
    assertThat(blocking.getConsumptionStatus("p", "t").orElseThrow().consumed().isEmpty()).isTrue();
  }

  @Test
  void shouldAnswerEmptyAtOnceWhenAPollingFetchFindsTooFewReadySamples() {
    insertProduced(polling, "p", 2, "x");

    assertThat(polling.tryGetMetadata(fetch("p", 5, Duration.ofMinutes(10)))).isEmpty();
    assertThat(polling.getConsumptionStatus("p", "t").orElseThrow().consumed().isEmpty()).isTrue();
  }

  @Test
  void shouldAnswerTheBatchAndConsumeItWhenEnoughSamplesAreReady() {
    insertProduced(blocking, "p", 4, "x");

    BatchMeta batch = blocking.tryGetMetadata(fetch("p", 4, Duration.ofMillis(50))).orElseThrow();

    assertThat(batch.globalIndexes()).isEqualTo(range(0, 4));
    assertThat(blocking.getConsumptionStatus("p", "t").orElseThrow().allConsumed()).isTrue();
  }

  @Test
  void shouldAnswerEmptyForAForceFetchOfAMissingPartitionWhereGetMetadataFails() {
    GetMetadataRequest request = GetMetadataRequest.forceFetch("missing", List.of("x"));

    assertThat(blocking.tryGetMetadata(request)).isEmpty();
    assertThatThrownBy(() -> blocking.getMetadata(request))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_PARTITION));
  }

  @Test
  void shouldAnswerAForceFetchOfAnExistingPartitionAsGetMetadataDoes() {
    insertProduced(blocking, "p", 3, "x");
    GetMetadataRequest request = GetMetadataRequest.forceFetch("p", List.of("x"));

    assertThat(blocking.tryGetMetadata(request))
        .hasValueSatisfying(meta -> assertThat(meta.globalIndexes()).isEqualTo(range(0, 3)));
    assertThat(blocking.getMetadata(request).globalIndexes()).isEqualTo(range(0, 3));
  }

  @Test
  void shouldInsertAsGetMetadataDoes() {
    BatchMeta inserted =
        blocking.tryGetMetadata(GetMetadataRequest.insert("p", List.of("x"), 3)).orElseThrow();

    assertThat(inserted.size()).isEqualTo(3);
    assertThat(blocking.listPartitions()).containsExactly("p");
  }
}
