package org.transferqueue.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.tensor.DType;

class ProductionUpdatesTest {

  private static BatchMeta meta(List<Long> gis, List<String> partitions) {
    return BatchMeta.builder().globalIndexes(gis).partitionIds(partitions).build();
  }

  @Test
  void shouldGroupSamplesByPartitionInOrderOfFirstAppearance() {
    BatchMeta meta = meta(List.of(5L, 6L, 7L, 8L), List.of("b", "a", "b", "a"));

    List<PartitionGroup> groups = PartitionGroup.of(meta);

    assertThat(groups)
        .containsExactly(
            new PartitionGroup("b", new int[] {0, 2}), new PartitionGroup("a", new int[] {1, 3}));
  }

  @Test
  void shouldSelectPerSampleShapesAndBackendMetaOfOnePartition() {
    BatchMeta meta = meta(List.of(5L, 6L, 7L), List.of("p", "q", "p"));
    FieldSchema nested =
        FieldSchema.nestedOf(
            DType.FLOAT32,
            List.of(FieldSchema.shapeOf(1), FieldSchema.shapeOf(2), FieldSchema.shapeOf(3)));
    Map<String, FieldSchema> schema = Map.of("x", nested, "y", FieldSchema.regular(DType.INT64, 4));
    List<Map<String, Object>> backendMeta =
        List.of(Map.of("x", 10L), Map.of("x", 20L), Map.of("x", 30L));

    ProductionUpdate update =
        ProductionUpdates.of(meta, PartitionGroup.of(meta).get(0), schema, backendMeta);

    assertThat(update.partitionId()).isEqualTo("p");
    assertThat(update.indexes()).containsExactly(5L, 7L);
    assertThat(update.fields().get("x").perSampleShapes())
        .containsExactly(List.of(1L), List.of(3L));
    assertThat(update.fields().get("y")).isEqualTo(FieldSchema.regular(DType.INT64, 4));
    assertThat(update.backendMeta().values()).containsExactly(Map.of("x", 10L), Map.of("x", 30L));
  }

  @Test
  void shouldRejectBackendMetaNotAlignedWithSamples() {
    BatchMeta meta = meta(List.of(1L, 2L), List.of("p", "p"));

    assertThatThrownBy(
            () ->
                ProductionUpdates.of(
                    meta, PartitionGroup.of(meta).get(0), Map.of(), List.of(Map.of())))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("Length of custom_backend_meta (1) does not match expected (2)");
  }

  @Test
  void shouldFailWithNotificationFailedWhenNotifierRejects() {
    ProductionUpdate update = new ProductionUpdate("p", List.of(1L), Map.of(), Map.of());
    TqException rejection = new TqException(ErrorCode.SCHEMA_CONFLICT, "dtype mismatch");

    assertThatThrownBy(
            () ->
                ProductionUpdates.publish(
                    u -> {
                      throw rejection;
                    },
                    update))
        .isInstanceOfSatisfying(
            StorageException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.NOTIFICATION_FAILED))
        .hasMessageContaining("partition 'p'")
        .hasMessageContaining("dtype mismatch")
        .hasCause(rejection);
  }

  @Test
  void shouldDeliverUpdateWhenNotifierAccepts() {
    List<ProductionUpdate> seen = new ArrayList<>();
    ProductionUpdate update = new ProductionUpdate("p", List.of(1L, 2L), Map.of(), Map.of());

    ProductionUpdates.publish(seen::add, update);

    assertThat(seen).containsExactly(update);
  }
}
