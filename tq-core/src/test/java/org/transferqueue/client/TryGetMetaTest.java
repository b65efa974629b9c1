package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.LoaderFixtures.putIds;
import static org.transferqueue.client.LoaderFixtures.system;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.SequentialSampler;

/**
 * "Not ready" and "no such partition" as values ({@link MetaClient#tryGetMeta}) with a
 * blocking-mode controller, embedded and over the wire (where the controller still reports them as
 * errors, which the remote proxy maps).
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TryGetMetaTest {
  @Parameter Deployment deployment;

  private TestSystem blocking() {
    return system(
        deployment, new SequentialSampler(), 1, b -> b.controller(c -> c.pollingMode(false)));
  }

  private static GetMetadataRequest fetch(int n) {
    return GetMetadataRequest.fetch("p", List.of("meta_idx"), "t", n)
        .withTimeout(Duration.ofMillis(50));
  }

  @Test
  void shouldAnswerEmptyWhereGetMetaFailsWithDeadlineExceeded() {
    try (TestSystem tq = blocking()) {
      MetaClient client = tq.client();
      putIds(client, tq.allocator(), "p", 1, 2);

      assertThat(client.tryGetMeta(fetch(5))).isEmpty();
      assertThatThrownBy(() -> client.getMeta(fetch(5)))
          .isInstanceOf(DeadlineExceededException.class);
      assertThat(client.getConsumptionStatus("p", "t").orElseThrow().consumed().isEmpty()).isTrue();
    }
  }

  @Test
  void shouldAnswerTheBatchWhenEnoughSamplesAreReady() throws Exception {
    try (TestSystem tq = blocking()) {
      MetaClient client = tq.client();
      putIds(client, tq.allocator(), "p", 1, 2);

      BatchMeta batch = client.tryGetMetaAsync(fetch(2)).get().orElseThrow();

      assertThat(batch.size()).isEqualTo(2);
      assertThat(client.getConsumptionStatus("p", "t").orElseThrow().allConsumed()).isTrue();
    }
  }

  @Test
  void shouldAnswerEmptyForAForceFetchOfAMissingPartition() {
    try (TestSystem tq = blocking()) {
      MetaClient client = tq.client();
      GetMetadataRequest request = GetMetadataRequest.forceFetch("missing", List.of());

      assertThat(client.tryGetMeta(request)).isEmpty();
      assertThat(client.getMeta(request).isEmpty()).isTrue();
    }
  }
}
