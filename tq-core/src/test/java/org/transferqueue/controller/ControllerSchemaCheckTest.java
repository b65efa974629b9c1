package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.tensor.DType;

class ControllerSchemaCheckTest {
  private final Controller controller = new Controller(ControllerOptions.defaults());

  private void produce(String partition, String field, FieldSchema schema) {
    controller.getMetadata(GetMetadataRequest.insert(partition, List.of(field), 1));
    controller.updateProductionStatus(
        ProductionUpdate.of(partition, List.of(0L), Map.of(field, schema)));
  }

  @Test
  void shouldRejectDtypeConflictWithoutChangingAnything() {
    produce("p", "x", FieldSchema.regular(DType.INT64, 2));
    assertThatThrownBy(
            () ->
                controller.checkPut(
                    "p",
                    Map.of("x", FieldSchema.regular(DType.FLOAT32, 2)),
                    new long[] {0},
                    new long[] {0}))
        .isInstanceOf(TqException.class)
        .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.SCHEMA_CONFLICT))
        .hasMessageContaining("int64")
        .hasMessageContaining("float32");
    assertThat(controller.partitionSnapshot("p").orElseThrow().toString()).contains("int64");
    assertThat(controller.getProductionStatus("p", List.of("x")).orElseThrow().allProduced())
        .isTrue();
  }

  @Test
  void shouldRejectKindConflict() {
    produce("p", "x", FieldSchema.regular(DType.INT64, 2));
    assertThatThrownBy(
            () ->
                controller.checkPut(
                    "p", Map.of("x", FieldSchema.nonTensorField()), new long[] {0}, new long[] {0}))
        .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
  }

  @Test
  void shouldAcceptNewFieldsNewShapesAndUnknownPartitions() {
    produce("p", "x", FieldSchema.regular(DType.INT64, 2));
    controller.checkPut(
        "p", Map.of("x", FieldSchema.regular(DType.INT64, 5)), new long[] {0}, new long[] {0});
    controller.checkPut(
        "p", Map.of("y", FieldSchema.nonTensorField()), new long[] {0}, new long[] {-1});
    controller.checkPut(
        "never_created", Map.of("x", FieldSchema.regular(DType.BOOL)), new long[0], new long[0]);
    assertThat(controller.listPartitions()).containsExactly("p");
  }
}
