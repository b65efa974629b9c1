package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.LoaderFixtures.putIds;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.controller.FetchMode;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.sampler.TokenBudgetSampler;

/**
 * A token-budget fetch ({@code get_meta(..., token_budget=N)}, upstream PR #123) fills a batch from
 * the samples' {@code total_lengths} tags, embedded and over the wire.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TokenBudgetFetchTest {
  @Parameter Deployment deployment;

  private static final List<String> FIELDS = List.of("meta_idx");

  /** Puts one sample per length, tagged with it (null: no tag); returns their global indexes. */
  private static List<Long> putWithLengths(
      MetaClient client, BufferAllocator allocator, Long... lengths) {
    long[] ids = new long[lengths.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = i;
    }
    BatchMeta written = putIds(client, allocator, "p", ids);
    List<Map<String, Object>> tags = new ArrayList<>();
    for (Long length : lengths) {
      Map<String, Object> tag = new HashMap<>();
      if (length != null) {
        tag.put(TokenBudgetSampler.LENGTH_TAG, length);
      }
      tags.add(tag);
    }
    client.setTags(written.withTagsMerged(tags));
    return written.globalIndexes();
  }

  private static List<Long> fetch(MetaClient client, long budget) {
    return client
        .getMeta(GetMetadataRequest.fetchTokens("p", FIELDS, "actor", budget))
        .globalIndexes();
  }

  @Test
  void shouldFillEachBatchUpToTheBudgetWhenSamplesHaveLengths(BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh()) {
      MetaClient client = tq.client();
      List<Long> gi = putWithLengths(client, allocator, 300L, 500L, 400L, 2000L, 100L);

      assertThat(fetch(client, 1000))
          .as("300 + 500; 400 more would exceed")
          .isEqualTo(gi.subList(0, 2));
      assertThat(fetch(client, 1000)).as("400; 2000 more would exceed").containsExactly(gi.get(2));
      assertThat(fetch(client, 1000))
          .as("a sample over the budget comes alone")
          .containsExactly(gi.get(3));
      assertThat(fetch(client, 1000))
          .as("what is left, under the budget")
          .containsExactly(gi.get(4));
      assertThat(fetch(client, 1000)).as("nothing left").isEmpty();
    }
  }

  @Test
  void shouldReachTheBudgetExactlyAndCapBySizeWhenBatchSizeIsGiven(BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh()) {
      MetaClient client = tq.client();
      List<Long> gi = putWithLengths(client, allocator, 250L, 250L, 250L, 250L, 250L);

      assertThat(fetch(client, 500)).as("exactly the budget").isEqualTo(gi.subList(0, 2));
      GetMetadataRequest capped =
          GetMetadataRequest.fetchTokens("p", FIELDS, "actor", 10_000).withBatchSize(2);
      assertThat(client.getMeta(capped).globalIndexes()).isEqualTo(gi.subList(2, 4));
    }
  }

  @Test
  void shouldWaitForMoreWhenUnderfillIsRefused(BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh()) {
      MetaClient client = tq.client();
      List<Long> gi = putWithLengths(client, allocator, 100L, 200L);
      GetMetadataRequest strict =
          GetMetadataRequest.fetchTokens("p", FIELDS, "actor", 1000)
              .withSamplingConfig(
                  new SamplingConfig(
                      null, null, Map.of(TokenBudgetSampler.ALLOW_UNDERFILL_OPTION, false)));

      assertThat(client.getMeta(strict).isEmpty()).as("300 of 1000 tokens ready").isTrue();
      List<Long> more = putWithLengths(client, allocator, 700L);
      assertThat(client.getMeta(strict).globalIndexes())
          .containsExactly(gi.get(0), gi.get(1), more.get(0));
    }
  }

  @Test
  void shouldCountASampleWithoutLengthAsTheWholeBudget(BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh()) {
      MetaClient client = tq.client();
      List<Long> gi = putWithLengths(client, allocator, 100L, null, 100L);

      assertThat(fetch(client, 1000)).containsExactly(gi.get(0));
      assertThat(fetch(client, 1000)).containsExactly(gi.get(1));
      assertThat(fetch(client, 1000)).containsExactly(gi.get(2));
    }
  }

  @Test
  void shouldRejectBadBudgetsAndLengthsNamingThem(BufferAllocator allocator) {
    assertThatThrownBy(() -> GetMetadataRequest.fetchTokens("p", FIELDS, "actor", 0))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("token_budget=0");
    assertThatThrownBy(
            () ->
                new GetMetadataRequest(
                    FetchMode.INSERT, "p", FIELDS, null, 1, SamplingConfig.NONE, null, 10L))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("token_budget");
    try (TestSystem tq = deployment.fresh()) {
      MetaClient client = tq.client();
      BatchMeta written = putIds(client, allocator, "p", 1);
      client.setTags(
          written.withTagsMerged(List.of(Map.of(TokenBudgetSampler.LENGTH_TAG, "long"))));
      assertThatThrownBy(() -> fetch(client, 100))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("total_lengths")
          .hasMessageContaining("long");
      assertThat(client.checkConsumptionStatus("p", "actor"))
          .as("the refused fetch consumed nothing")
          .isFalse();
    }
  }
}
