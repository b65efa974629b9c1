package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.controller.Fixtures.F32_4;
import static org.transferqueue.controller.Fixtures.controller;
import static org.transferqueue.controller.Fixtures.fetch;
import static org.transferqueue.controller.Fixtures.ids;
import static org.transferqueue.controller.Fixtures.insert;
import static org.transferqueue.controller.Fixtures.insertProduced;
import static org.transferqueue.controller.Fixtures.partition;
import static org.transferqueue.controller.Fixtures.produce;
import static org.transferqueue.controller.Fixtures.range;
import static org.transferqueue.controller.Fixtures.schema;

import java.time.Duration;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.Clock;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.sampler.SampleResult;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.testing.Await;

/** Scenarios 6.D (consumption and fetch) and 6.E (force fetch and partition metadata). */
@Timeout(30)
class ControllerFetchTest {
  private final Controller c = controller();
  private final Controller polling = controller(1, true);

  private static ErrorCode codeOf(Throwable e) {
    return ((TqException) e).code();
  }

  private void c1() {
    insertProduced(c, "train_0", 32, "prompt_ids", "attention_mask");
  }

  private static List<Boolean> flags(ConsumptionStatus status) {
    return java.util.stream.IntStream.range(0, status.indexes().size())
        .mapToObj(status::isConsumed)
        .toList();
  }

  @Test
  void D1_freshTaskHasConsumedNothing() {
    c1();
    ConsumptionStatus status =
        c.getConsumptionStatus("train_0", "generate_sequences").orElseThrow();
    assertThat(status.indexes()).isEqualTo(IndexSet.range(0, 32));
    assertThat(status.consumed().isEmpty()).isTrue();
  }

  @Test
  void D2_fetchReturnsAndConsumesTheBatch() {
    c1();
    BatchMeta meta = fetch(c, "train_0", "generate_sequences", 32, "prompt_ids");
    assertThat(meta.globalIndexes()).isEqualTo(range(0, 32));
    assertThat(meta.partitionId(0)).isEqualTo("train_0");
    assertThat(meta.fieldNames()).containsExactly("prompt_ids");
    assertThat(c.getConsumptionStatus("train_0", "generate_sequences").orElseThrow().allConsumed())
        .isTrue();
    assertThat(c.partitionSnapshot("train_0").orElseThrow().consumption().get("generate_sequences"))
        .isEqualTo(IndexSet.range(0, 32));
    c.checkInvariants();
  }

  @Test
  void D3_tasksConsumeIndependently() {
    insertProduced(c, "p", 6, "data");
    assertThat(fetch(c, "p", "A", 3, "data").globalIndexes()).containsExactly(0L, 1L, 2L);
    assertThat(fetch(c, "p", "A", 3, "data").globalIndexes()).containsExactly(3L, 4L, 5L);
    assertThat(fetch(c, "p", "B", 2, "data").globalIndexes()).containsExactly(0L, 1L);
  }

  @Test
  void D4_anotherTaskSeesAllSamplesAgain() {
    insertProduced(c, "p", 8, "prompt_ids", "attention_mask");
    fetch(c, "p", "generate_sequences", 8, "prompt_ids");
    assertThat(fetch(c, "p", "another_task", 8, "attention_mask").globalIndexes())
        .isEqualTo(range(0, 8));
  }

  @Test
  void D5_consumedSamplesLeaveTheReadySet() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0, 1, 2), schema(F32_4, "input_ids", "attention_mask"));
    List<String> both = Partition.sortedFields(List.of("input_ids", "attention_mask"));
    ReadySet ready = p.readySet("test_task", both);
    p.markConsumed("test_task", ids(0, 1));
    assertThat(IndexSet.copyOf(p.task("test_task"))).isEqualTo(IndexSet.of(0, 1));
    assertThat(ready.view()).containsExactly(2L);
  }

  @Test
  void D6_readySetFollowsProductionAndConsumption() {
    Partition p = partition("p", 0, 1, 2, 3, 4);
    assertThat(p.readySet("t", List.of("input_ids")).view()).isEmpty();
    Fixtures.produce(p, ids(0, 2, 4), schema(F32_4, "input_ids"));
    assertThat(p.readySet("t", List.of("input_ids")).view()).containsExactly(0L, 2L, 4L);
    p.markConsumed("t", ids(2));
    assertThat(p.readySet("t", List.of("input_ids")).view()).containsExactly(0L, 4L);
    p.checkInvariants();
  }

  @Test
  void D7_consumptionStatusCoversPreAllocatedIndexes() {
    Controller c5 = controller(5, false);
    c5.createPartition("p");
    ConsumptionStatus before = c5.getConsumptionStatus("p", "t").orElseThrow();
    assertThat(before.indexes()).isEqualTo(IndexSet.range(0, 5));
    assertThat(flags(before)).containsOnly(false);
    insertProduced(c5, "p", 5, "x");
    c5.registerSampler(request -> SampleResult.withoutReplacement(ids(0, 2, 4)));
    fetch(c5, "p", "t", 3, "x");
    assertThat(flags(c5.getConsumptionStatus("p", "t").orElseThrow()))
        .containsExactly(true, false, true, false, true);
  }

  @Test
  void D8_consumptionIsMaskedToPartitionMembers() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0, 1, 2, 3, 9), schema(F32_4, "field_a"));
    p.markConsumed("test_task", ids(0, 2));
    IndexSet members = p.members();
    BitSet consumed = p.task("test_task");
    assertThat(members).isEqualTo(IndexSet.of(0, 1, 2, 3, 9));
    assertThat(members.stream().mapToObj(i -> consumed.get((int) i)).toList())
        .containsExactly(true, false, true, false, false);
  }

  @Test
  void D9_newFieldsKeepConsumption() {
    Partition p = partition("p");
    Fixtures.produce(p, range(0, 5), schema(F32_4, "a", "b", "c"));
    p.markConsumed("t", ids(0, 1));
    Fixtures.produce(p, ids(10, 11, 12), schema(F32_4, "field_d"));
    assertThat(IndexSet.copyOf(p.task("t"))).isEqualTo(IndexSet.of(0, 1));
  }

  @Test
  void D10_eachTaskHasItsOwnTable() {
    Partition p = partition("p");
    Fixtures.produce(p, range(0, 2), schema(F32_4, "a"));
    for (String task : List.of("task1", "task2", "task3")) {
      p.markConsumed(task, ids(0, 1));
    }
    assertThat(p.taskNames()).containsExactly("task1", "task2", "task3");
    for (String task : p.taskNames()) {
      assertThat(IndexSet.copyOf(p.task(task))).isEqualTo(IndexSet.of(0, 1));
    }
  }

  @Test
  void D11_scanOfLargePartitionWithManyFields() {
    Partition p = partition("p");
    Map<String, FieldSchema> many = new LinkedHashMap<>();
    for (int i = 0; i < 100; i++) {
      many.put("f" + i, F32_4);
    }
    Fixtures.produce(p, ids(0), many);
    assertThat(p.fieldNames()).hasSize(100);
    Fixtures.produce(p, range(0, 5000), schema(F32_4, "test_field"));
    p.markConsumed("t", range(0, 5000).stream().filter(i -> i % 2 == 0).toList());
    assertThat(p.readySet("t", List.of("test_field")).size()).isEqualTo(2500);
  }

  @Test
  void D12_fetchWithoutTaskIsRejected() {
    assertThatThrownBy(() -> fetch(c, "p", null, 1, "x"))
        .extracting(ControllerFetchTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
  }

  @Test
  void shouldRejectABatchSizeOverTheLimitBeforeAllocatingAnything() {
    int over = GetMetadataRequest.MAX_BATCH_SIZE + 1;
    assertThatThrownBy(() -> GetMetadataRequest.insert("p", List.of("x"), over))
        .extracting(ControllerFetchTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThatThrownBy(() -> GetMetadataRequest.fetch("p", List.of("x"), "t", Integer.MAX_VALUE))
        .extracting(ControllerFetchTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(c.statistics().allocatedIndexes()).isZero();
  }

  @Test
  void D13_fetchWithoutBatchSizeIsRejected() {
    assertThatThrownBy(
            () ->
                c.getMetadata(
                    new GetMetadataRequest(
                        FetchMode.FETCH, "p", List.of("x"), "t", null, null, null)))
        .hasMessageContaining("must provide batch_size in fetch mode");
  }

  @Test
  void D14_pollingFetchWithTooFewReadyReturnsEmpty() {
    insertProduced(polling, "p", 2, "x");
    assertThat(fetch(polling, "p", "t", 5, "x").isEmpty()).isTrue();
    assertThat(polling.getConsumptionStatus("p", "t").orElseThrow().consumed().isEmpty()).isTrue();
  }

  @Test
  void D15_blockingFetchTimesOutAndControllerKeepsServing() {
    insertProduced(c, "p", 2, "x");
    assertThatThrownBy(
            () ->
                c.getMetadata(
                    GetMetadataRequest.fetch("p", List.of("x"), "t", 5)
                        .withTimeout(Duration.ofMillis(50))))
        .isInstanceOf(DeadlineExceededException.class)
        .hasMessageContaining("Required: 5")
        .hasMessageContaining("Available: 2");
    assertThat(fetch(c, "p", "t", 2, "x").globalIndexes()).containsExactly(0L, 1L);
  }

  @Test
  void D16_blockingFetchWakesUpWhenDataArrives() throws Exception {
    insertProduced(c, "p", 2, "x");
    insert(c, "p", 3, "x");
    CompletableFuture<BatchMeta> waiting =
        CompletableFuture.supplyAsync(
            () ->
                c.getMetadata(
                    GetMetadataRequest.fetch("p", List.of("x"), "t", 5)
                        .withTimeout(Duration.ofSeconds(20))));
    Await.until(() -> c.waitingFetches() == 1, "fetch waiting for data");
    produce(c, "p", range(2, 5), "x");
    assertThat(waiting.get(20, TimeUnit.SECONDS).globalIndexes()).isEqualTo(range(0, 5));
  }

  @Test
  void D17_pollingFetchOfNeverProducedFieldIsEmpty() {
    insertProduced(polling, "p", 2, "x");
    assertThat(fetch(polling, "p", "t", 1, "never").isEmpty()).isTrue();
  }

  @Test
  void D18_allRequestedFieldsMustBeProduced() {
    insert(polling, "p", 4, "a", "b");
    produce(polling, "p", range(0, 4), "a");
    produce(polling, "p", range(0, 2), "b");
    assertThat(fetch(polling, "p", "t", 3, "a", "b").isEmpty()).isTrue();
    assertThat(fetch(polling, "p", "t", 2, "a", "b").globalIndexes()).containsExactly(0L, 1L);
  }

  @Test
  void D19_fetchOfZeroSamplesIsRejected() {
    assertThatThrownBy(() -> fetch(c, "p", "t", 0, "x"))
        .extracting(ControllerFetchTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
  }

  @Test
  void D20_samplerWithReplacementConsumesNothing() {
    Sampler withReplacement =
        request -> new SampleResult(request.ready().subList(0, request.batchSize()), List.of());
    c.registerSampler(withReplacement);
    insertProduced(c, "p", 3, "x");
    assertThat(fetch(c, "p", "t", 2, "x").globalIndexes()).containsExactly(0L, 1L);
    assertThat(fetch(c, "p", "t", 2, "x").globalIndexes()).containsExactly(0L, 1L);
    assertThat(c.getConsumptionStatus("p", "t").orElseThrow().consumed().isEmpty()).isTrue();
  }

  @Test
  void D21_fetchCarriesTagsAndFilteredBackendMeta() {
    insert(c, "p", 3, "a", "c");
    Map<Long, Map<String, Object>> backend = new LinkedHashMap<>();
    for (long i = 0; i < 3; i++) {
      backend.put(i, Map.of("a", Map.of("n", i), "c", Map.of("m", i)));
    }
    c.updateProductionStatus(
        new ProductionUpdate("p", range(0, 3), schema(F32_4, "a", "c"), backend));
    c.setTags(TagUpdate.replace("p", Map.of(0L, Map.of("s", 1))));
    BatchMeta meta = fetch(c, "p", "t", 3, "a");
    assertThat(meta.productionStatus()).containsOnly(true);
    assertThat(meta.isReady()).isTrue();
    assertThat(meta.tags(0)).isEqualTo(Map.of("s", 1L));
    assertThat(meta.tags(1)).isEmpty();
    assertThat(meta.backendMeta(2)).isEqualTo(Map.of("a", Map.of("n", 2L)));
  }

  @Test
  void D22_consumptionIsMarkedAtMetadataTime() {
    insertProduced(c, "p", 4, "x");
    fetch(c, "p", "t", 4, "x");
    assertThat(c.getConsumptionStatus("p", "t").orElseThrow().allConsumed()).isTrue();
  }

  @Test
  void D23_queriesRegisterTasksButResetDoesNot() {
    insertProduced(c, "p", 2, "x");
    c.getConsumptionStatus("p", "ghost");
    assertThat(c.partitionStatistics("p").orElseThrow().registeredTasks()).containsExactly("ghost");
    c.resetConsumption("p", "other");
    assertThat(c.partitionStatistics("p").orElseThrow().registeredTasks()).containsExactly("ghost");
  }

  @Test
  void D24_emptyOrUnknownPartitionIsNotConsumed() {
    assertThat(c.getConsumptionStatus("missing", "t")).isEmpty();
    insertProduced(c, "p", 2, "x");
    c.clearSamples(ClearSamplesRequest.of("p", range(0, 2)));
    ConsumptionStatus status = c.getConsumptionStatus("p", "t").orElseThrow();
    assertThat(status.indexes().isEmpty()).isTrue();
    assertThat(status.allConsumed()).isFalse();
  }

  @Test
  void D25_fetchFromUnknownPartition() {
    assertThat(fetch(polling, "missing", "t", 1, "x").isEmpty()).isTrue();
    assertThatThrownBy(
            () ->
                c.getMetadata(
                    GetMetadataRequest.fetch("missing", List.of("x"), "t", 1)
                        .withTimeout(Duration.ofMillis(20))))
        .isInstanceOf(DeadlineExceededException.class);
    assertThat(c.listPartitions()).isEmpty();
  }

  @Test
  void E1_forceFetchIgnoresConsumption() {
    c1();
    fetch(c, "train_0", "generate_sequences", 32, "prompt_ids");
    BatchMeta meta = c.getMetadata(GetMetadataRequest.forceFetch("train_0", List.of("prompt_ids")));
    assertThat(meta.globalIndexes()).isEqualTo(range(0, 32));
    assertThat(meta.fieldNames()).containsExactly("prompt_ids");
  }

  @Test
  void E2_forceFetchCoversPreAllocatedAndIgnoresUnknownFields() {
    Controller c4 = controller(4, false);
    insertProduced(c4, "p", 2, "x");
    BatchMeta meta = c4.getMetadata(GetMetadataRequest.forceFetch("p", List.of("x", "unknown")));
    assertThat(meta.globalIndexes()).containsExactly(0L, 1L, 2L, 3L);
    assertThat(meta.productionStatus()).containsExactly(true, true, false, false);
    assertThat(meta.fieldNames()).containsExactly("x");
  }

  @Test
  void E3_forceFetchOfOnlyUnknownFields() {
    Controller c4 = controller(4, false);
    insertProduced(c4, "p", 2, "x");
    BatchMeta meta = c4.getMetadata(GetMetadataRequest.forceFetch("p", List.of("unknown")));
    assertThat(meta.productionStatus()).containsOnly(false);
    assertThat(meta.fieldNames()).isEmpty();
  }

  @Test
  void E4_forceFetchOfUnknownPartitionFails() {
    assertThatThrownBy(() -> c.getMetadata(GetMetadataRequest.forceFetch("nope", List.of("x"))))
        .hasMessageContaining("Partition nope not found")
        .extracting(ControllerFetchTest::codeOf)
        .isEqualTo(ErrorCode.UNKNOWN_PARTITION);
  }

  @Test
  void E5_partitionMetaCoversAllRegisteredFields() {
    insertProduced(c, "p", 2, "x", "y");
    BatchMeta meta = c.getPartitionMeta("p").orElseThrow();
    assertThat(meta.fieldNames()).containsExactly("x", "y");
    assertThat(meta.productionStatus()).containsExactly(true, true);
    assertThat(c.getPartitionMeta("missing")).isEmpty();
  }

  @Test
  void E6_missingModeIsRejected() {
    assertThatThrownBy(
            () ->
                c.getMetadata(new GetMetadataRequest(null, "p", List.of("x"), "t", 1, null, null)))
        .hasMessageContaining("Invalid mode")
        .extracting(ControllerFetchTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
  }

  @Test
  void E7_forceFetchDoesNotTouchConsumption() {
    insertProduced(c, "p", 2, "x");
    c.getMetadata(GetMetadataRequest.forceFetch("p", List.of("x")));
    assertThat(c.partitionStatistics("p").orElseThrow().registeredTasks()).isEmpty();
  }

  @Test
  void shouldTakeDeadlinesAndCreationTimesFromTheInjectedClock() {
    java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
    Clock clock =
        new Clock() {
          @Override
          public long nanoTime() {
            return nanos.getAndAdd(10_000_000_000L);
          }

          @Override
          public long epochMillis() {
            return 1_234L;
          }
        };
    Controller timed =
        new Controller(
            ControllerOptions.builder().fetchTimeout(Duration.ofSeconds(3)).build(),
            new org.transferqueue.sampler.SequentialSampler(),
            clock);
    insertProduced(timed, "p", 1, "x");
    assertThat(timed.partitionStatistics("p").orElseThrow().createdAtMillis()).isEqualTo(1_234L);
    assertThatThrownBy(() -> fetch(timed, "p", "t", 2, "x"))
        .isInstanceOf(DeadlineExceededException.class)
        .hasMessageContaining("Available: 1");
  }

  /**
   * {@code controller.get_metadata_check_interval} takes effect: a waiting fetch asks the sampler
   * again after the interval although nothing in the controller changed, so a sampler whose answer
   * depends on time (here: a switch the test flips) serves the fetch long before its deadline.
   */
  @Test
  @Timeout(30)
  void shouldAskTheSamplerAgainEveryCheckIntervalWithoutAnyStateChange() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean open =
        new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicInteger asked =
        new java.util.concurrent.atomic.AtomicInteger();
    Sampler gate =
        request -> {
          asked.incrementAndGet();
          return open.get()
              ? SampleResult.withoutReplacement(request.ready())
              : SampleResult.empty();
        };
    Controller c =
        new Controller(
            ControllerOptions.builder().checkInterval(Duration.ofMillis(20)).build(),
            gate,
            Clock.SYSTEM);
    insertProduced(c, "p", 2, "x");
    CompletableFuture<BatchMeta> waiting =
        CompletableFuture.supplyAsync(
            () ->
                c.getMetadata(
                    GetMetadataRequest.fetch("p", List.of("x"), "t", 2)
                        .withTimeout(Duration.ofMinutes(10))));
    Await.until(() -> c.waitingFetches() == 1, "the fetch waits");
    int before = asked.get();
    Await.until(() -> asked.get() > before + 1, "the sampler asked again without a state change");

    open.set(true);

    assertThat(waiting.get(20, TimeUnit.SECONDS).globalIndexes()).hasSize(2);
  }
}
