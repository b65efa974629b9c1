package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.controller.Fixtures.ids;
import static org.transferqueue.controller.Fixtures.insert;
import static org.transferqueue.controller.Fixtures.insertProduced;
import static org.transferqueue.controller.Fixtures.produce;
import static org.transferqueue.controller.Fixtures.range;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.Clock;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.sampler.GrpoGroupNSampler;
import org.transferqueue.testing.Await;

/**
 * {@link GrpoGroupNSampler} through the controller: a group is {@code n} rows of one insert,
 * whatever indexes the insert received, and a fetch that finds no complete group is a fetch that
 * cannot be served yet (polling: empty; blocking: wait until a group completes or the deadline).
 */
@Timeout(30)
class ControllerGroupFetchTest {
  private final AtomicLong nanos = new AtomicLong();
  private final Clock clock =
      new Clock() {
        @Override
        public long nanoTime() {
          return nanos.get();
        }

        @Override
        public long epochMillis() {
          return 0;
        }
      };
  private final ExecutorService fetchers = Executors.newVirtualThreadPerTaskExecutor();

  @AfterEach
  void stopFetchers() {
    fetchers.shutdownNow();
  }

  private Controller grpo(int n, boolean polling) {
    return new Controller(
        ControllerOptions.builder().preallocSampleNum(0).pollingMode(polling).build(),
        new GrpoGroupNSampler(n),
        clock);
  }

  private static void clear(Controller c, long... indexes) {
    List<String> partitions = Collections.nCopies(indexes.length, "p");
    c.clearSamples(new ClearSamplesRequest(ids(indexes), partitions, true));
  }

  private static BatchMeta fetch(Controller c, int batch, Duration timeout) {
    return c.getMetadata(
        GetMetadataRequest.fetch("p", List.of("x"), "t", batch).withTimeout(timeout));
  }

  private CompletableFuture<BatchMeta> fetchAsync(Controller c, int batch, Duration timeout) {
    return CompletableFuture.supplyAsync(() -> fetch(c, batch, timeout), fetchers);
  }

  /** Waits until the fetch waits in the controller, failing at once if it ended instead. */
  private static void awaitWaiting(Controller c, CompletableFuture<BatchMeta> fetch) {
    Await.until(() -> c.waitingFetches() == 1 || fetch.isDone(), "the fetch waiting for data");
    assertThat(fetch).as("a fetch without a complete group must wait, not end").isNotDone();
  }

  @Test
  void shouldWaitForACompleteGroupWhenOnlyHalfProducedGroupsAreReady() throws Exception {
    Controller c = grpo(4, false);
    insert(c, "p", 4, "x");
    insert(c, "p", 4, "x");
    produce(c, "p", ids(0, 1, 4, 5), "x");

    CompletableFuture<BatchMeta> waiting = fetchAsync(c, 4, Duration.ofHours(1));
    awaitWaiting(c, waiting);
    produce(c, "p", ids(6), "x");
    awaitWaiting(c, waiting);
    produce(c, "p", ids(7), "x");

    assertThat(waiting.get(20, TimeUnit.SECONDS).globalIndexes()).isEqualTo(range(4, 8));
    assertThat(c.getConsumptionStatus("p", "t").orElseThrow().consumed())
        .isEqualTo(IndexSet.range(4, 8));
    c.checkInvariants();
  }

  @Test
  void shouldFailWithDeadlineExceededAndConsumeNothingWhenNoGroupCompletesByTheDeadline()
      throws Exception {
    Controller c = grpo(2, false);
    insert(c, "p", 2, "x");
    insert(c, "p", 2, "x");
    produce(c, "p", ids(0, 3), "x");

    CompletableFuture<BatchMeta> waiting = fetchAsync(c, 2, Duration.ofSeconds(10));
    awaitWaiting(c, waiting);
    nanos.addAndGet(Duration.ofSeconds(11).toNanos());
    // A state change that completes no group wakes the fetch, which finds its deadline passed.
    c.updateProductionStatus(ProductionUpdate.of("p", List.of(), Map.of()));

    assertThatThrownBy(() -> waiting.get(20, TimeUnit.SECONDS))
        .cause()
        .isInstanceOf(DeadlineExceededException.class)
        .hasMessageContaining("Required: 2, Available: 2")
        .hasMessageContaining("GrpoGroupNSampler served no batch");
    assertThat(c.getConsumptionStatus("p", "t").orElseThrow().consumed().isEmpty()).isTrue();
    c.checkInvariants();
  }

  @Test
  void shouldAnswerAnEmptyBatchInPollingModeWhenNoGroupIsComplete() {
    Controller c = grpo(2, true);
    insert(c, "p", 2, "x");
    insert(c, "p", 2, "x");
    produce(c, "p", ids(0, 3), "x");

    assertThat(fetch(c, 2, Duration.ofSeconds(1)).isEmpty()).isTrue();
    assertThat(c.getConsumptionStatus("p", "t").orElseThrow().consumed().isEmpty()).isTrue();
  }

  @Test
  void shouldServeTheGroupOfAnInsertThatReceivedScatteredRecycledIndexes() {
    Controller c = grpo(4, true);
    insertProduced(c, "p", 16, "x");
    assertThat(fetch(c, 16, Duration.ofSeconds(1)).size()).isEqualTo(16);
    clear(c, 9, 11, 14, 15);

    BatchMeta group = insert(c, "p", 4, "x");
    assertThat(group.globalIndexes()).containsExactly(9L, 11L, 14L, 15L);
    produce(c, "p", group.globalIndexes(), "x");

    assertThat(fetch(c, 4, Duration.ofSeconds(1)).globalIndexes())
        .containsExactly(9L, 11L, 14L, 15L);
    c.checkInvariants();
  }

  @Test
  void shouldNeverMixTwoInsertsWhenTheFirstIsOnlyPartlyProduced() {
    Controller c = grpo(2, true);
    insert(c, "p", 2, "x");
    insert(c, "p", 2, "x");
    insert(c, "p", 2, "x");
    // 1 and 2 are adjacent indexes of two different prompts: they are not a group.
    produce(c, "p", ids(1, 2, 3, 4, 5), "x");

    assertThat(fetch(c, 2, Duration.ofSeconds(1)).globalIndexes()).containsExactly(2L, 3L);
    assertThat(fetch(c, 2, Duration.ofSeconds(1)).globalIndexes()).containsExactly(4L, 5L);
  }

  @Test
  void shouldCutOneInsertOfSeveralPromptsIntoGroupsFromItsFirstRow() {
    Controller c = grpo(3, true);
    insertProduced(c, "p", 2, "x");
    clear(c, 0);
    // One insert of two prompts x 3 responses, on recycled 0 and then fresh 2..6; a trailing 7th
    // row of another insert never completes a group.
    BatchMeta prompts = insert(c, "p", 6, "x");
    assertThat(prompts.globalIndexes()).containsExactly(0L, 2L, 3L, 4L, 5L, 6L);
    insert(c, "p", 1, "x");
    produce(c, "p", range(0, 8), "x");

    assertThat(fetch(c, 6, Duration.ofSeconds(1)).globalIndexes())
        .containsExactly(0L, 2L, 3L, 4L, 5L, 6L);
    assertThat(c.scanReady("p", List.of("x"), "t")).isEqualTo(IndexSet.of(1, 7));
  }

  @Test
  void shouldGroupTheSamplesOfOneKeyValuePut() {
    Controller c = grpo(2, true);
    insertProduced(c, "p", 3, "x");
    clear(c, 0, 2);
    BatchMeta keys = c.resolveKeys("p", List.of("a", "b"), true);
    assertThat(keys.globalIndexes()).containsExactly(0L, 2L);
    produce(c, "p", keys.globalIndexes(), "x");

    assertThat(fetch(c, 2, Duration.ofSeconds(1)).globalIndexes()).containsExactly(0L, 2L);
  }

  @Test
  void shouldKeepInsertPositionsThroughACheckpoint() {
    Controller c = grpo(2, true);
    insertProduced(c, "p", 4, "x");
    clear(c, 1, 3);
    BatchMeta group = insert(c, "p", 2, "x");
    assertThat(group.globalIndexes()).containsExactly(1L, 3L);
    produce(c, "p", group.globalIndexes(), "x");
    byte[] saved = ControllerStateCodec.encode(c.snapshotState());

    Controller restored = grpo(2, true);
    restored.restoreState(ControllerStateCodec.decode(saved, "test"));

    assertThat(restored.partitionSnapshot("p").orElseThrow().insertPositions())
        .isEqualTo(c.partitionSnapshot("p").orElseThrow().insertPositions());
    assertThat(fetch(restored, 2, Duration.ofSeconds(1)).globalIndexes()).containsExactly(1L, 3L);
    assertThat(fetch(restored, 2, Duration.ofSeconds(1)).isEmpty())
        .as("0 and 2 are what is left of two groups that lost a member each")
        .isTrue();
    restored.checkInvariants();
  }
}
