package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.storage.simple.Cells.dense;
import static org.transferqueue.storage.simple.Cells.objects;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;

/** The checks every SimpleStorage manager makes before it sends a byte of a put. */
@ExtendWith(LeakCheckExtension.class)
class PutPlanTest {

  @Test
  void shouldGroupRowsByPartitionAndRouteEachGroupToItsUnits() {
    BatchMeta meta =
        BatchMeta.builder()
            .globalIndexes(4, 5, 6, 7)
            .generations(1, 2, 3, 4)
            .partitionIds(List.of("a", "b", "a", "b"))
            .build();
    try (Batch batch = Batch.builder().add("o", objects(1L, 2L, 3L, 4L)).build()) {
      PutPlan plan = PutPlan.of(batch, meta);

      assertThat(plan.isEmpty()).isFalse();
      assertThat(plan.generations()).containsExactly(1, 2, 3, 4);
      assertThat(plan.schema()).containsOnlyKeys("o");
      assertThat(plan.partitions()).hasSize(2);
      assertThat(plan.route(1, 2))
          .containsExactly(new RoutingGroup(1, new long[] {5, 7}, new int[] {1, 3}));
      assertThat(plan.route(0, 3))
          .containsExactly(
              new RoutingGroup(0, new long[] {6}, new int[] {2}),
              new RoutingGroup(1, new long[] {4}, new int[] {0}));
    }
  }

  @Test
  void shouldRejectARepeatedIndexNamingIt() {
    BatchMeta meta = BatchMeta.builder().globalIndexes(3, 9, 3).partitionId("p").build();
    try (Batch batch = Batch.builder().add("o", objects(1L, 2L, 3L)).build()) {
      assertThatThrownBy(() -> PutPlan.of(batch, meta))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.DUPLICATE_KEY))
          .hasMessageContaining("3");
    }
  }

  @Test
  void shouldRejectDataWhoseSizeDiffersFromTheMetadata() {
    BatchMeta meta = BatchMeta.builder().globalIndexes(1, 2).partitionId("p").build();
    try (Batch batch = Batch.builder().add("o", objects(1L)).build()) {
      assertThatThrownBy(() -> PutPlan.unparsed(batch, meta))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.SHAPE_MISMATCH))
          .hasMessageContaining("(1)")
          .hasMessageContaining("(2)");
    }
  }

  @Test
  void shouldRejectDataOfAnotherDtypeOnlyWhenTheSchemaIsChecked(BufferAllocator allocator) {
    BatchMeta meta =
        BatchMeta.builder()
            .globalIndexes(1)
            .partitionId("p")
            .field("x", FieldSchema.regular(DType.INT64, 1))
            .build();
    try (Batch batch = Batch.builder().add("x", dense(allocator, new float[] {1})).build()) {
      assertThatThrownBy(() -> PutPlan.of(batch, meta))
          .satisfies(
              e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
      assertThat(PutPlan.unparsed(batch, meta).schema()).isNull();
    }
  }

  @Test
  void shouldPlanAnEmptyPutAsEmptyWithAnEmptySchema() {
    try (Batch batch = Batch.builder().build()) {
      PutPlan plan = PutPlan.unparsed(batch, BatchMeta.empty());

      assertThat(plan.isEmpty()).isTrue();
      assertThat(plan.schema()).isEmpty();
      assertThat(plan.partitions()).isEmpty();
    }
  }
}
