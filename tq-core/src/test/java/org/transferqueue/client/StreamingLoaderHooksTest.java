package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.LoaderFixtures.ids;
import static org.transferqueue.client.LoaderFixtures.putIds;
import static org.transferqueue.client.LoaderFixtures.system;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
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
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.sampler.TokenBudgetSampler;
import org.transferqueue.tensor.Batch;

/**
 * The {@link StreamingLoader} hooks, upstream {@code StreamingDataset}'s {@code fetch_batch_fn} and
 * {@code process_batch_fn}: what they receive, what the loader does with what they return, and that
 * every batch they touch is closed (leak checking throws otherwise).
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StreamingLoaderHooksTest {
  @Parameter Deployment deployment;

  private static final Duration FAST_POLL = Duration.ofMillis(5);

  private static StreamingLoader.Builder loader(MetaClient client) {
    return StreamingLoader.builder(client)
        .partition("p")
        .task("train")
        .fields("meta_idx")
        .batchSize(4)
        .microBatchSize(2)
        .dpRank(1)
        .pollInterval(FAST_POLL)
        .termination(Termination.UNTIL_CONSUMED);
  }

  @Test
  void shouldFetchThroughTheFetchHookWithTheLoadersRequest() {
    try (TestSystem tq = system(deployment, new SequentialSampler(), 6)) {
      MetaClient client = tq.client();
      putIds(client, tq.allocator(), "p", LongStream.range(0, 6).toArray());
      List<GetMetadataRequest> seen = new ArrayList<>();
      AtomicInteger emptyAnswers = new AtomicInteger();
      try (StreamingLoader l =
          loader(client)
              .fetchBatch(
                  (c, request) -> {
                    seen.add(request);
                    if (emptyAnswers.getAndIncrement() == 0) {
                      return BatchPart.none(); // "not ready yet": asked again
                    }
                    // Two samples per batch, whatever the loader's batch size.
                    return BatchPart.of(c.getMeta(request.withBatchSize(2)));
                  })
              .build()) {
        List<Long> delivered = new ArrayList<>();
        List<Integer> batchIndexes = new ArrayList<>();
        for (MicroBatch mb : l) {
          delivered.addAll(ids(mb.batch(), "meta_idx"));
          assertThat(mb.meta().size()).isEqualTo(mb.batch().rowCount());
          batchIndexes.add(mb.batchIndex());
        }
        assertThat(delivered).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        assertThat(batchIndexes).containsExactly(0, 1, 2);
      }
      GetMetadataRequest first = seen.getFirst();
      assertThat(first.mode()).isEqualTo(FetchMode.FETCH);
      assertThat(first.partitionId()).isEqualTo("p");
      assertThat(first.fields()).containsExactly("meta_idx");
      assertThat(first.taskName()).isEqualTo("train");
      assertThat(first.batchSize()).isEqualTo(4);
      assertThat(first.samplingConfig().dpRank()).isEqualTo(1);
      assertThat(first.samplingConfig().batchIndex()).isZero();
      assertThat(seen.get(1).samplingConfig().batchIndex()).as("asked again").isZero();
      assertThat(seen.getLast().samplingConfig().batchIndex()).isEqualTo(3);
    }
  }

  @Test
  void shouldDeliverRowsTheFetchHookReadItself() {
    try (TestSystem tq = system(deployment, new SequentialSampler(), 5)) {
      MetaClient client = tq.client();
      BatchMeta written = putIds(client, tq.allocator(), "p", 10, 11, 12, 13, 14);
      List<Map<String, Object>> lengths = new ArrayList<>();
      for (long n : new long[] {600, 300, 200, 900, 100}) {
        lengths.add(Map.of(TokenBudgetSampler.LENGTH_TAG, n));
      }
      client.setTags(written.withTagsMerged(lengths));
      try (StreamingLoader l =
          loader(client)
              .microBatchSize(1)
              .fetchBatch(
                  (c, request) -> {
                    BatchMeta meta = c.getMeta(request.withTokenBudget(1000L).withBatchSize(null));
                    return meta.isEmpty() ? BatchPart.none() : new BatchPart(meta, c.getData(meta));
                  })
              .build()) {
        Map<Integer, List<Long>> byBatch = new HashMap<>();
        for (MicroBatch mb : l) {
          byBatch
              .computeIfAbsent(mb.batchIndex(), k -> new ArrayList<>())
              .addAll(ids(mb.batch(), "meta_idx"));
        }
        assertThat(byBatch)
            .containsExactlyInAnyOrderEntriesOf(
                Map.of(0, List.of(10L, 11L), 1, List.of(12L), 2, List.of(13L, 14L)));
      }
    }
  }

  @Test
  void shouldSplitThroughTheProcessHookKeepingTheBatchOpenForItsViews() {
    try (TestSystem tq = system(deployment, new SequentialSampler(), 8)) {
      MetaClient client = tq.client();
      putIds(client, tq.allocator(), "p", LongStream.range(0, 8).toArray());
      List<Integer> microSizes = new ArrayList<>();
      try (StreamingLoader l =
          loader(client)
              .processBatch(
                  (rows, meta, micro) -> {
                    microSizes.add(micro);
                    // Odd rows first, one by one, as copies; then the even rows as one view.
                    List<BatchPart> parts = new ArrayList<>();
                    for (int i = 1; i < rows.rowCount(); i += 2) {
                      parts.add(
                          new BatchPart(
                              meta.selectSamples(new int[] {i}),
                              rows.selectRows(tq.allocator(), new int[] {i})));
                    }
                    int[] even =
                        IntStream.range(0, rows.rowCount()).filter(i -> i % 2 == 0).toArray();
                    parts.add(
                        new BatchPart(
                            meta.selectSamples(even), rows.selectRows(tq.allocator(), even)));
                    parts.add(new BatchPart(meta, rows)); // the whole batch itself
                    return parts;
                  })
              .build()) {
        List<List<Long>> delivered = new ArrayList<>();
        for (MicroBatch mb : l) {
          List<Long> values = ids(mb.batch(), "meta_idx");
          assertThat(values).hasSize(mb.meta().size());
          delivered.add(values);
        }
        assertThat(delivered)
            .containsExactly(
                List.of(1L),
                List.of(3L),
                List.of(0L, 2L),
                List.of(0L, 1L, 2L, 3L),
                List.of(5L),
                List.of(7L),
                List.of(4L, 6L),
                List.of(4L, 5L, 6L, 7L));
      }
      assertThat(microSizes).containsOnly(2);
    }
  }

  @Test
  void shouldRefuseMicroBatchesWhoseMetadataDoesNotDescribeTheirRows() {
    try (TestSystem tq = system(deployment, new SequentialSampler(), 4)) {
      MetaClient client = tq.client();
      putIds(client, tq.allocator(), "p", 1, 2, 3, 4);
      try (StreamingLoader l =
          loader(client)
              .processBatch(
                  (rows, meta, micro) ->
                      List.of(new BatchPart(meta.selectSamples(new int[] {0}), rows.slice(0, 2))))
              .build()) {
        assertThatThrownBy(() -> l.iterator().hasNext())
            .isInstanceOfSatisfying(
                TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SHAPE_MISMATCH))
            .hasMessageContaining("micro-batch 0");
      }
    }
  }

  @Test
  void shouldEndTheIterationWithTheHooksFailure() {
    try (TestSystem tq = system(deployment, new SequentialSampler(), 4)) {
      MetaClient client = tq.client();
      putIds(client, tq.allocator(), "p", 1, 2, 3, 4);
      try (StreamingLoader l =
          loader(client)
              .fetchBatch(
                  (c, request) -> {
                    throw new IllegalStateException("tokenizer offline");
                  })
              .build()) {
        assertThatThrownBy(() -> l.iterator().hasNext())
            .isInstanceOfSatisfying(
                TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL))
            .hasMessageContaining("tokenizer offline");
      }
      try (StreamingLoader l = loader(client).fetchBatch((c, request) -> null).build()) {
        assertThatThrownBy(() -> l.iterator().hasNext())
            .isInstanceOfSatisfying(
                TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
            .hasMessageContaining("BatchPart.none()");
      }
    }
  }

  @Test
  void shouldCloseEveryBatchTheHooksMadeWhenClosedMidStream() {
    try (TestSystem tq = system(deployment, new SequentialSampler(), 12)) {
      MetaClient client = tq.client();
      putIds(client, tq.allocator(), "p", LongStream.range(0, 12).toArray());
      List<Batch> made = new ArrayList<>();
      try (StreamingLoader l =
          loader(client)
              .prefetch(3)
              .fetchBatch(
                  (c, request) -> {
                    BatchMeta meta = c.getMeta(request);
                    return meta.isEmpty() ? BatchPart.none() : new BatchPart(meta, c.getData(meta));
                  })
              .processBatch(
                  (rows, meta, micro) -> {
                    Batch copy = rows.selectRows(tq.allocator(), new int[] {0, 1});
                    synchronized (made) {
                      made.add(copy);
                    }
                    return List.of(
                        new BatchPart(meta.selectSamples(new int[] {0, 1}), copy),
                        new BatchPart(meta.selectSamples(new int[] {2, 3}), rows.slice(2, 4)));
                  })
              .build()) {
        MicroBatch first = l.iterator().next();
        assertThat(ids(first.batch(), "meta_idx")).containsExactly(0L, 1L);
      }
      // Leak checking fails the test if a fetched batch or a copy is still open here.
    }
  }
}
