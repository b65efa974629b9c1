package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.controller.Fixtures.controller;
import static org.transferqueue.controller.Fixtures.fetch;
import static org.transferqueue.controller.Fixtures.insert;
import static org.transferqueue.controller.Fixtures.partition;
import static org.transferqueue.controller.Fixtures.produce;
import static org.transferqueue.controller.Fixtures.range;
import static org.transferqueue.controller.Fixtures.schema;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;

/** Scenarios 6.A (global indexes and partitions) and 6.B (insert mode). */
class ControllerPartitionsTest {
  private static final String[] FIELDS = {"prompt_ids", "attention_mask"};
  private final Controller c = controller();

  private BatchMeta a1() {
    return insert(c, "train_0", 32, FIELDS);
  }

  private void a2() {
    a1();
    produce(c, "train_0", range(0, 32), FIELDS);
    fetch(c, "train_0", "gen", 32, FIELDS);
    insert(c, "val_0", 16, FIELDS);
  }

  @Test
  void A1_insertAllocatesSequentialIndexes() {
    BatchMeta meta = a1();
    assertThat(meta.globalIndexes()).isEqualTo(range(0, 32));
    assertThat(meta.partitionIds()).containsOnly("train_0").hasSize(32);
    assertThat(meta.productionStatus()).containsOnly(false);
    assertThat(c.getPartitionIndexRange("train_0")).isEqualTo(IndexSet.range(0, 32));
    c.checkInvariants();
  }

  @Test
  void A2_secondPartitionContinuesTheCounter() {
    a1();
    produce(c, "train_0", range(0, 32), FIELDS);
    fetch(c, "train_0", "gen", 32, FIELDS);
    BatchMeta meta = insert(c, "val_0", 16, FIELDS);
    assertThat(meta.globalIndexes()).isEqualTo(range(32, 48));
    assertThat(meta.partitionIds()).containsOnly("val_0");
    assertThat(meta.productionStatus()).containsOnly(false);
    assertThat(c.getPartitionIndexRange("val_0")).isEqualTo(IndexSet.range(32, 48));
  }

  @Test
  void A3_clearPartitionLeavesOtherPartitionsIntact() {
    a2();
    produce(c, "val_0", range(32, 48), FIELDS);
    c.clearPartition("train_0");
    assertThat(c.partitionSnapshot("train_0")).isEmpty();
    assertThat(c.getPartitionIndexRange("train_0").isEmpty()).isTrue();
    assertThat(c.getPartitionIndexRange("val_0")).isEqualTo(IndexSet.range(32, 48));
    ProductionStatus status = c.getProductionStatus("val_0", List.of(FIELDS)).orElseThrow();
    assertThat(status.indexes()).isEqualTo(IndexSet.range(32, 48));
    assertThat(status.allProduced()).isTrue();
    c.checkInvariants();
  }

  @Test
  void A4_releasedIndexesAreReusedBeforeFreshOnes() {
    a2();
    produce(c, "val_0", range(32, 48), FIELDS);
    c.clearPartition("train_0");
    BatchMeta meta = insert(c, "train_1", 64, FIELDS);
    List<Long> expected = new ArrayList<>(range(0, 32));
    expected.addAll(range(48, 80));
    assertThat(meta.globalIndexes()).isEqualTo(expected);
    assertThat(c.getPartitionIndexRange("train_1").stream().boxed().toList())
        .containsExactlyInAnyOrderElementsOf(expected);
    c.checkInvariants();
  }

  @Test
  void A5_createPartitionTwiceReturnsFalseTheSecondTime() {
    assertThat(c.createPartition("p")).isTrue();
    assertThat(c.createPartition("p")).isFalse();
    assertThat(c.listPartitions()).containsExactly("p");
  }

  @Test
  void A6_preAllocationReservesIndexesCountedByConsumptionStatus() {
    Controller c4 = controller(4, false);
    c4.createPartition("q");
    PartitionState q = c4.partitionSnapshot("q").orElseThrow();
    assertThat(q.preAllocated()).isEqualTo(IndexSet.of(0, 1, 2, 3));
    assertThat(c4.partitionStatistics("q").orElseThrow().totalSamples()).isZero();
    assertThat(c4.getPartitionIndexRange("q")).isEqualTo(IndexSet.of(0, 1, 2, 3));
    ConsumptionStatus status = c4.getConsumptionStatus("q", "t").orElseThrow();
    assertThat(status.indexes()).isEqualTo(IndexSet.of(0, 1, 2, 3));
    assertThat(status.consumed().isEmpty()).isTrue();
    assertThat(status.allConsumed()).isFalse();
  }

  @Test
  void A10_productionOfOnePartitionDoesNotTouchAnother() {
    insert(c, "a", 4, "x");
    insert(c, "b", 4, "x");
    produce(c, "a", range(0, 4), "x");
    assertThat(c.getProductionStatus("b", List.of("x"))).isEmpty();
    produce(c, "b", List.of(4L), "x");
    assertThat(c.getProductionStatus("b", List.of("x")).orElseThrow().produced().get(0))
        .isEqualTo(IndexSet.of(4));
  }

  @Test
  void A11_clearedIndexIsNotReadyInItsOldPartition() {
    Partition a = partition("a");
    Partition b = partition("b");
    Fixtures.produce(a, List.of(0L), schema(Fixtures.F32_4, "x"));
    a.clear(new int[] {0}, true);
    assertThat(a.readySet("t1", List.of("x")).size()).isZero();
    Fixtures.produce(b, List.of(0L), schema(Fixtures.F32_4, "x"));
    assertThat(a.readySet("t2", List.of("x")).size()).isZero();
    assertThat(b.readySet("t2", List.of("x")).size()).isEqualTo(1);
  }

  @Test
  void A13_partitionsAreListedInCreationOrder() {
    insert(c, "b", 1, "x");
    insert(c, "a", 1, "x");
    assertThat(c.listPartitions()).containsExactly("b", "a");
  }

  @Test
  void B1_insertCreatesMissingPartition() {
    insert(c, "new", 2, "x");
    assertThat(c.listPartitions()).containsExactly("new");
  }

  @Test
  void B2_insertWithoutFieldsIsRejectedBeforeCreatingThePartition() {
    assertThatThrownBy(
            () ->
                c.getMetadata(
                    new GetMetadataRequest(FetchMode.INSERT, "p", null, null, 4, null, null)))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("Must provide data_fields");
    assertThat(c.listPartitions()).isEmpty();
  }

  @Test
  void B3_insertWithoutBatchSizeIsRejectedBeforeCreatingThePartition() {
    assertThatThrownBy(
            () ->
                c.getMetadata(
                    new GetMetadataRequest(
                        FetchMode.INSERT, "p", List.of("x"), null, null, null, null)))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("must provide batch_size");
    assertThat(c.listPartitions()).isEmpty();
  }

  @Test
  void B4_insertWithNonPositiveBatchSizeIsRejected() {
    for (int n : new int[] {0, -1}) {
      assertThatThrownBy(() -> insert(c, "p", n, "x"))
          .isInstanceOf(TqException.class)
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(ErrorCode.INVALID_ARGUMENT);
    }
    assertThat(c.listPartitions()).isEmpty();
  }

  @Test
  void B5_activationTakesSmallestPreAllocatedIndexesFirst() {
    Partition p = partition("p", 0, 1, 2, 3, 4);
    assertThat(p.activatePreAllocated(3)).containsExactly(0, 1, 2);
    assertThat(p.active()).isEqualTo(IndexSet.of(0, 1, 2));
    assertThat(p.preAllocated()).isEqualTo(IndexSet.of(3, 4));
    assertThat(p.activeCount()).isEqualTo(3);
    assertThat(p.activatePreAllocated(5)).containsExactly(3, 4);
    assertThat(p.preAllocated().isEmpty()).isTrue();
    assertThat(p.activeCount()).isEqualTo(5);
  }

  @Test
  void B6_insertsConsumePreAllocatedIndexesThenTheCounter() {
    Controller c4 = controller(4, false);
    assertThat(insert(c4, "q", 2, "x").globalIndexes()).containsExactly(0L, 1L);
    assertThat(c4.partitionSnapshot("q").orElseThrow().preAllocated()).isEqualTo(IndexSet.of(2, 3));
    assertThat(insert(c4, "q", 3, "x").globalIndexes()).containsExactly(2L, 3L, 4L);
    assertThat(c4.getPartitionIndexRange("q")).isEqualTo(IndexSet.range(0, 5));
    c4.checkInvariants();
  }

  @Test
  void B7_insertReturnsRecordedSchemaOrPlaceholders() {
    insert(c, "p", 2, "a");
    produce(c, "p", range(0, 2), "a");
    BatchMeta meta = insert(c, "p", 2, "a", "b");
    assertThat(meta.field("a")).isEqualTo(Fixtures.F32_4);
    assertThat(meta.field("b")).isEqualTo(FieldSchema.placeholder());
    assertThat(meta.fieldNames()).containsExactly("a", "b");
    assertThat(meta.productionStatus()).containsExactly(false, false);
    assertThat(meta.isReady()).isFalse();
  }

  @Test
  void B8_insertWithoutNotificationProducesNothing() {
    insert(c, "p", 4, "a");
    assertThat(c.scanReady("p", List.of("a"), "t").isEmpty()).isTrue();
    assertThat(c.getProductionStatus("p", List.of("a"))).isEmpty();
  }

  @Test
  void B9_notificationActivatesIndexesBesidePreAllocatedOnes() {
    Partition p = partition("p", 0, 1, 2);
    Fixtures.produce(p, List.of(5L, 6L, 7L), schema(Fixtures.F32_4, "input_ids"));
    assertThat(p.active()).isEqualTo(IndexSet.of(5, 6, 7));
    assertThat(p.activeCount()).isEqualTo(3);
    assertThat(p.activatePreAllocated(3)).containsExactly(0, 1, 2);
    assertThat(p.active()).isEqualTo(IndexSet.of(0, 1, 2, 5, 6, 7));
    assertThat(p.activeCount()).isEqualTo(6);
    p.checkInvariants();
  }
}
