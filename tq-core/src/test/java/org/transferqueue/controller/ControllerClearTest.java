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
import static org.transferqueue.controller.Fixtures.range;
import static org.transferqueue.controller.Fixtures.regular;
import static org.transferqueue.controller.Fixtures.schema;
import static org.transferqueue.controller.Fixtures.shape;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.sampler.SampleResult;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.SamplingRequest;
import org.transferqueue.tensor.DType;

/** Scenarios 6.F: clear and reset. */
class ControllerClearTest {
  private final Controller c = controller();

  private IndexSet active(String partition) {
    return c.partitionSnapshot(partition).orElseThrow().active();
  }

  private static List<String> times(String partition, int n) {
    return java.util.Collections.nCopies(n, partition);
  }

  @Test
  void F1_clearSamplesRemovesThemFromThePartition() {
    insertProduced(c, "p", 8, "x");
    c.clearSamples(new ClearSamplesRequest(ids(0, 1, 2, 3, 6), times("p", 5), true));
    assertThat(active("p")).isEqualTo(IndexSet.of(4, 5, 7));
    c.checkInvariants();
  }

  @Test
  void F2_clearingInUnknownPartitionsIsANoOp() {
    insertProduced(c, "p", 2, "x");
    assertThat(c.clearSamples(new ClearSamplesRequest(ids(0, 1), times("nonexistent", 2), true)))
        .isZero();
    assertThat(active("p")).isEqualTo(IndexSet.of(0, 1));
  }

  @Test
  void F3_F4_unknownIndexesAreIgnoredAndClearIsIdempotent() {
    insertProduced(c, "p", 8, "x");
    c.clearSamples(new ClearSamplesRequest(ids(0, 1, 100, 101), times("p", 4), true));
    assertThat(active("p")).isEqualTo(IndexSet.range(2, 8));
    assertThat(c.clearSamples(new ClearSamplesRequest(ids(0, 1, 100), times("p", 3), true)))
        .isZero();
    assertThat(active("p")).isEqualTo(IndexSet.range(2, 8));
    c.checkInvariants();
  }

  @Test
  void F5_clearOnlyTouchesTheNamedPartition() {
    insertProduced(c, "p", 8, "x");
    assertThat(insertProduced(c, "other", 8, "x").globalIndexes()).isEqualTo(range(8, 16));
    c.clearSamples(new ClearSamplesRequest(ids(2, 0), List.of("other", "nonexistent"), true));
    assertThat(active("other").contains(2)).isFalse();
    assertThat(active("p")).isEqualTo(IndexSet.range(0, 8));
    c.clearSamples(new ClearSamplesRequest(ids(9, 0), List.of("other", "nonexistent"), true));
    assertThat(active("other").contains(9)).isFalse();
    assertThat(active("other").size()).isEqualTo(7);
    assertThat(active("p")).isEqualTo(IndexSet.range(0, 8));
    c.checkInvariants();
  }

  @Test
  void F6_malformedClearRequestsAreRejected() {
    assertThatThrownBy(() -> new ClearSamplesRequest(ids(1), List.of("a", "b"), true))
        .hasMessageContaining("same length");
    assertThatThrownBy(() -> new ClearSamplesRequest(null, List.of(), true))
        .hasMessageContaining("cannot be None");
    assertThatThrownBy(() -> new ClearSamplesRequest(ids(), null, true))
        .isInstanceOf(TqException.class)
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
  }

  @Test
  void F7_clearedIndexesAreReusedAscendingBeforeTheCounter() {
    insertProduced(c, "p", 8, "x");
    c.clearSamples(new ClearSamplesRequest(ids(6, 1, 3), times("p", 3), true));
    assertThat(insert(c, "q", 4, "x").globalIndexes()).containsExactly(1L, 3L, 6L, 8L);
    c.checkInvariants();
  }

  @Test
  void F8_preAllocatedIndexesAreNotCleared() {
    Controller c4 = controller(4, false);
    insert(c4, "p", 2, "x");
    assertThat(c4.clearSamples(new ClearSamplesRequest(ids(2, 3), times("p", 2), true))).isZero();
    assertThat(c4.partitionSnapshot("p").orElseThrow().preAllocated()).isEqualTo(IndexSet.of(2, 3));
    assertThat(c4.getPartitionIndexRange("p")).isEqualTo(IndexSet.range(0, 4));
  }

  @Test
  void F9_clearPartitionIsIdempotent() {
    insertProduced(c, "p", 4, "x");
    assertThat(c.clearPartition("p")).isTrue();
    assertThat(c.partitionSnapshot("p")).isEmpty();
    assertThat(c.getPartitionIndexRange("p").isEmpty()).isTrue();
    assertThat(c.listPartitions()).isEmpty();
    assertThat(c.clearPartition("p")).isFalse();
    c.checkInvariants();
  }

  @Test
  void F10_clearPartitionDropsOnlyThatPartitionsSamplerCache() {
    List<String> cleared = new ArrayList<>();
    c.registerSampler(
        new Sampler() {
          @Override
          public SampleResult sample(SamplingRequest request) {
            return SampleResult.withoutReplacement(request.ready().subList(0, request.batchSize()));
          }

          @Override
          public void clearCache(String partitionId) {
            cleared.add(partitionId);
          }
        });
    insertProduced(c, "a", 2, "x");
    insertProduced(c, "b", 2, "x");
    c.clearPartition("a");
    assertThat(cleared).containsExactly("a");
    c.clearSamples(ClearSamplesRequest.of("b", ids(2)));
    c.resetConsumption("b", null);
    assertThat(cleared).containsExactly("a");
  }

  @Test
  void F11_resetMakesConsumedSamplesFetchableAgain() {
    insertProduced(c, "p", 8, "x");
    fetch(c, "p", "generate_sequences", 8, "x");
    c.resetConsumption("p", "generate_sequences");
    assertThat(c.getConsumptionStatus("p", "generate_sequences").orElseThrow().consumed().isEmpty())
        .isTrue();
    assertThat(fetch(c, "p", "generate_sequences", 8, "x").globalIndexes()).isEqualTo(range(0, 8));
    c.checkInvariants();
  }

  @Test
  void F12_resetWithoutTaskResetsEveryTask() {
    insertProduced(c, "p", 8, "x");
    fetch(c, "p", "generate_sequences", 8, "x");
    fetch(c, "p", "another_task", 8, "x");
    c.resetConsumption("p", null);
    for (String task : List.of("generate_sequences", "another_task")) {
      assertThat(c.getConsumptionStatus("p", task).orElseThrow().consumed().isEmpty()).isTrue();
    }
  }

  @Test
  void F13_resetOfUnknownPartitionOrTaskIsANoOp() {
    c.resetConsumption("missing", "t");
    insertProduced(c, "p", 2, "x");
    c.resetConsumption("p", "unknown");
    assertThat(c.partitionStatistics("p").orElseThrow().registeredTasks()).isEmpty();
  }

  @Test
  void F14_clearWithoutConsumptionKeepsConsumedFlags() {
    Partition p = partition("p");
    Fixtures.produce(p, range(0, 6), schema(F32_4, "a"));
    p.markConsumed("t1", range(0, 4));
    p.markConsumed("t2", ids(1, 2));
    int before = p.task("t1").cardinality() + p.task("t2").cardinality();
    p.clear(Fixtures.ints(0, 1, 2, 3), false);
    assertThat(IndexSet.copyOf(p.field("a").produced)).isEqualTo(IndexSet.of(4, 5));
    assertThat(p.task("t1").cardinality() + p.task("t2").cardinality()).isEqualTo(before);
  }

  @Test
  void F15_clearShrinksFieldIndexSets() {
    Partition p = partition("p");
    Fixtures.produce(p, range(0, 5), schema(F32_4, "field_a", "field_b"));
    p.clear(Fixtures.ints(0, 2, 4), true);
    assertThat(IndexSet.copyOf(p.field("field_a").produced)).isEqualTo(IndexSet.of(1, 3));
    assertThat(IndexSet.copyOf(p.field("field_b").produced)).isEqualTo(IndexSet.of(1, 3));
  }

  @Test
  void F16_clearingEverySampleDropsEverySchema() {
    Partition p = partition("p");
    Fixtures.produce(p, range(0, 3), schema(F32_4, "a", "b"));
    p.clear(Fixtures.ints(0, 1, 2), true);
    assertThat(p.field("a").hasSchema()).isFalse();
    assertThat(p.field("b").hasSchema()).isFalse();
    assertThat(p.field("a").export(new long[] {0})).isNull();
  }

  @Test
  void F17_clearDenestsWhenOneShapeRemains() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0, 1), schema(regular(DType.FLOAT32, 256), "nested_field"));
    Fixtures.produce(p, ids(2), schema(regular(DType.FLOAT32, 128), "nested_field"));
    assertThat(p.field("nested_field").kind()).isEqualTo(FieldColumn.Kind.NESTED);
    p.clear(new int[] {2}, true);
    FieldColumn f = p.field("nested_field");
    assertThat(f.kind()).isEqualTo(FieldColumn.Kind.REGULAR);
    assertThat(f.shape()).isEqualTo(shape(256));
    assertThat(f.perSampleShapes()).isEmpty();
    assertThat(IndexSet.copyOf(f.produced)).isEqualTo(IndexSet.of(0, 1));
  }

  @Test
  void F18_clearRemovesTagsAndBackendMeta() {
    insert(c, "p", 3, "f");
    c.updateProductionStatus(
        new ProductionUpdate(
            "p",
            range(0, 3),
            schema(F32_4, "f"),
            Map.of(0L, Map.of("f", 0), 1L, Map.of("f", 1), 2L, Map.of("f", 2))));
    c.setTags(TagUpdate.replace("p", Map.of(0L, Map.of("t", 0), 1L, Map.of("t", 1))));
    c.clearSamples(ClearSamplesRequest.of("p", ids(0)));
    assertThat(c.getTags("p", range(0, 3)).keySet()).containsExactly(1L);
    assertThat(c.getBackendMeta("p", range(0, 3), List.of("f")).keySet()).containsExactly(1L, 2L);
  }

  @Test
  void F19_clearingAnUnproducedSampleReleasesItCleanly() {
    insertProduced(c, "p", 2, "x");
    insert(c, "p", 2, "x");
    c.setTags(TagUpdate.replace("p", Map.of(2L, Map.of("k", "v"))));
    c.clearSamples(ClearSamplesRequest.of("p", ids(2)));
    assertThat(active("p")).isEqualTo(IndexSet.of(0, 1, 3));
    assertThat(c.getPartitionIndexRange("p")).isEqualTo(IndexSet.of(0, 1, 3));
    assertThat(c.getTags("p", ids(2))).isEmpty();
    assertThat(insert(c, "other", 1, "x").globalIndexes()).containsExactly(2L);
    PartitionState p = c.partitionSnapshot("p").orElseThrow();
    assertThat(p.active().contains(2)).isFalse();
    assertThat(p.preAllocated().contains(2)).isFalse();
    assertThat(p.tags()).doesNotContainKey(2L);
    c.checkInvariants();
  }

  @Test
  void F20_fieldColumnsOutliveTheirSamples() {
    Partition p = partition("p");
    Fixtures.produce(p, range(0, 2), schema(F32_4, "f", "g"));
    Fixtures.produce(p, ids(2), schema(F32_4, "g"));
    p.clear(Fixtures.ints(0, 1), true);
    assertThat(p.field("f").hasSchema()).isFalse();
    assertThat(p.field("g").hasSchema()).isTrue();
    assertThat(p.fieldNames()).containsExactly("f", "g");
    assertThat(p.active()).isEqualTo(IndexSet.of(2));
  }

  @Test
  void F21_emptiedPartitionStaysAndReusesThePool() {
    insertProduced(c, "p", 2, "x");
    c.clearSamples(ClearSamplesRequest.of("p", range(0, 2)));
    assertThat(c.listPartitions()).containsExactly("p");
    assertThat(c.getPartitionIndexRange("p").isEmpty()).isTrue();
    assertThat(insert(c, "p", 2, "x").globalIndexes()).containsExactly(0L, 1L);
    c.checkInvariants();
  }

  @Test
  void F22_clearedPartitionHasNoProductionStatus() {
    insertProduced(c, "p", 2, "x");
    c.clearPartition("p");
    assertThat(c.listPartitions()).isEmpty();
    assertThat(c.getProductionStatus("p", List.of("x"))).isEmpty();
  }

  @Test
  void shouldWakeWaitingFetchWhenResetMakesSamplesReadyAgain() throws Exception {
    insertProduced(c, "p", 2, "x");
    fetch(c, "p", "t", 2, "x");
    var waiting =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () ->
                c.getMetadata(
                    GetMetadataRequest.fetch("p", List.of("x"), "t", 2)
                        .withTimeout(Duration.ofSeconds(20))));
    org.transferqueue.testing.Await.until(() -> c.waitingFetches() == 1, "fetch waiting");
    c.resetConsumption("p", "t");
    assertThat(waiting.get(20, java.util.concurrent.TimeUnit.SECONDS).globalIndexArray())
        .containsExactly(0, 1);
  }
}
