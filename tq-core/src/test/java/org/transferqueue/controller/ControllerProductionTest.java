package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.controller.Fixtures.F32_4;
import static org.transferqueue.controller.Fixtures.controller;
import static org.transferqueue.controller.Fixtures.ids;
import static org.transferqueue.controller.Fixtures.insert;
import static org.transferqueue.controller.Fixtures.nested;
import static org.transferqueue.controller.Fixtures.nonTensor;
import static org.transferqueue.controller.Fixtures.partition;
import static org.transferqueue.controller.Fixtures.produce;
import static org.transferqueue.controller.Fixtures.range;
import static org.transferqueue.controller.Fixtures.regular;
import static org.transferqueue.controller.Fixtures.schema;
import static org.transferqueue.controller.Fixtures.shape;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.tensor.DType;

/** Scenarios 6.C: production notifications and field metadata. */
class ControllerProductionTest {
  private final Controller c = controller();

  private static ErrorCode codeOf(Throwable e) {
    return ((TqException) e).code();
  }

  private static FieldColumn.Kind kind(Partition p, String field) {
    return p.field(field).kind();
  }

  @Test
  void C1_notificationMarksEveryCellProduced() {
    insert(c, "train_0", 32, "prompt_ids", "attention_mask");
    Map<String, FieldSchema> fields = new LinkedHashMap<>();
    fields.put("prompt_ids", regular(DType.INT64, 32));
    fields.put("attention_mask", regular(DType.BOOL, 32));
    c.updateProductionStatus(ProductionUpdate.of("train_0", range(0, 32), fields));
    PartitionState state = c.partitionSnapshot("train_0").orElseThrow();
    assertThat(state.field("prompt_ids").produced()).isEqualTo(IndexSet.range(0, 32));
    assertThat(state.field("attention_mask").produced()).isEqualTo(IndexSet.range(0, 32));
    ProductionStatus status =
        c.getProductionStatus("train_0", List.of("prompt_ids", "attention_mask")).orElseThrow();
    assertThat(status.indexes()).isEqualTo(IndexSet.range(0, 32));
    assertThat(status.allProduced()).isTrue();
    assertThat(c.partitionStatistics("train_0").orElseThrow().totalFields()).isEqualTo(2);
    c.checkInvariants();
  }

  @Test
  void C2_notificationForUnknownPartitionFailsAndCreatesNothing() {
    assertThatThrownBy(() -> produce(c, "zz", ids(0), "x"))
        .isInstanceOf(TqException.class)
        .extracting(ControllerProductionTest::codeOf)
        .isEqualTo(ErrorCode.UNKNOWN_PARTITION);
    assertThat(c.listPartitions()).isEmpty();
  }

  @Test
  void C3_notificationActivatesItsIndexes() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0, 5, 10), schema(F32_4, "field_1"));
    assertThat(p.activeCount()).isEqualTo(3);
    assertThat(p.active()).isEqualTo(IndexSet.of(0, 5, 10));
  }

  @Test
  void C4_eachNewFieldIsRegisteredOnce() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0, 5, 10), schema(F32_4, "field_1"));
    for (int i = 0; i < 15; i++) {
      Fixtures.produce(p, ids(0), schema(F32_4, "field_" + i));
    }
    assertThat(p.fieldNames()).hasSize(15);
  }

  @Test
  void C5_emptyNotificationChangesNothing() {
    Partition p = partition("p");
    Fixtures.produce(p, List.of(), Map.of());
    assertThat(p.fieldNames()).isEmpty();
    assertThat(p.activeCount()).isZero();
  }

  @Test
  void C6_fieldSchemaIsRecorded() {
    Partition p = partition("p");
    Map<String, FieldSchema> fields = new LinkedHashMap<>();
    fields.put("input_ids", regular(DType.INT32, 512));
    fields.put("attention_mask", regular(DType.BOOL, 512));
    Fixtures.produce(p, ids(0, 1, 2), fields);
    FieldColumn ids = p.field("input_ids");
    assertThat(ids.dtype()).isEqualTo(DType.INT32);
    assertThat(ids.shape()).isEqualTo(shape(512));
    assertThat(ids.kind()).isEqualTo(FieldColumn.Kind.REGULAR);
    assertThat(IndexSet.copyOf(ids.produced)).isEqualTo(IndexSet.of(0, 1, 2));
    assertThat(p.field("attention_mask").shape()).isEqualTo(shape(512));
  }

  @Test
  void C7_repeatedNotificationsExtendTheIndexSet() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0, 1), schema(regular(DType.INT32, 16), "field_a"));
    Fixtures.produce(p, ids(2, 3), schema(regular(DType.INT32, 16), "field_a"));
    FieldColumn a = p.field("field_a");
    assertThat(IndexSet.copyOf(a.produced)).isEqualTo(IndexSet.of(0, 1, 2, 3));
    assertThat(a.dtype()).isEqualTo(DType.INT32);
    assertThat(a.shape()).isEqualTo(shape(16));
  }

  @Test
  void C8_dtypeConflictRejectsTheWholeNotification() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0), schema(regular(DType.INT32, 4), "f1"));
    Map<String, FieldSchema> fields = new LinkedHashMap<>();
    fields.put("other", F32_4);
    fields.put("f1", regular(DType.FLOAT64, 4));
    assertThatThrownBy(() -> Fixtures.produce(p, ids(1), fields))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("dtype mismatch")
        .extracting(ControllerProductionTest::codeOf)
        .isEqualTo(ErrorCode.SCHEMA_CONFLICT);
    assertThat(p.isActive(1)).isFalse();
    assertThat(p.field("other")).isNull();
    assertThat(p.readySet("t", List.of("f1")).view()).containsExactly(0L);
    p.checkInvariants();
  }

  @Test
  void C8_dtypeConflictThroughControllerLeavesSampleUnproduced() {
    insert(c, "p", 2, "f1");
    c.updateProductionStatus(
        ProductionUpdate.of("p", ids(0), schema(regular(DType.INT32, 4), "f1")));
    assertThatThrownBy(
            () ->
                c.updateProductionStatus(
                    ProductionUpdate.of("p", ids(1), schema(regular(DType.FLOAT64, 4), "f1"))))
        .extracting(ControllerProductionTest::codeOf)
        .isEqualTo(ErrorCode.SCHEMA_CONFLICT);
    assertThat(c.scanReady("p", List.of("f1"), "t")).isEqualTo(IndexSet.of(0));
    c.checkInvariants();
  }

  @Test
  void C9_differentShapesMakeTheFieldNested() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0), schema(regular(DType.FLOAT32, 256), "f2"));
    Fixtures.produce(p, ids(1), schema(regular(DType.FLOAT32, 128), "f2"));
    FieldColumn f2 = p.field("f2");
    assertThat(f2.kind()).isEqualTo(FieldColumn.Kind.NESTED);
    assertThat(f2.shape()).isNull();
    assertThat(f2.perSampleShapes()).isEqualTo(Map.of(0, shape(256), 1, shape(128)));
  }

  @Test
  void C10_nestedNotificationKeepsItsShapes() {
    Partition p = partition("p");
    Fixtures.produce(
        p, ids(10, 11), schema(nested(DType.FLOAT32, List.of(shape(3), shape(5))), "f3"));
    assertThat(kind(p, "f3")).isEqualTo(FieldColumn.Kind.NESTED);
    assertThat(p.field("f3").perSampleShapes()).isEqualTo(Map.of(10, shape(3), 11, shape(5)));
  }

  @Test
  void C11_backendMetadataIsStoredPerSampleAndField() {
    insert(c, "p", 3, "f1");
    c.updateProductionStatus(
        new ProductionUpdate(
            "p", ids(2), schema(F32_4, "f1"), Map.of(2L, Map.of("f1", Map.of("k", 1)))));
    assertThat(c.getBackendMeta("p", ids(2), List.of("f1")))
        .isEqualTo(Map.of(2L, Map.of("f1", Map.of("k", 1L))));
  }

  @Test
  void C12_regularFieldExportsWithoutPerSampleShapes() {
    insert(c, "p", 3, "f");
    c.updateProductionStatus(
        ProductionUpdate.of("p", range(0, 3), schema(regular(DType.FLOAT32, 512), "f")));
    BatchMeta meta = c.getMetadata(GetMetadataRequest.forceFetch("p", List.of("f")));
    assertThat(meta.field("f"))
        .isEqualTo(new FieldSchema(DType.FLOAT32, shape(512), false, false, null));
  }

  @Test
  void C13_C14_nestedFieldExportsShapesInBatchOrder() {
    Partition p = partition("p");
    Fixtures.produce(
        p, ids(0, 1, 2), schema(nested(DType.FLOAT32, List.of(shape(3), shape(5), shape(7))), "f"));
    assertThat(p.field("f").export(new long[] {0, 1}).perSampleShapes())
        .containsExactly(shape(3), shape(5));
    assertThat(p.field("f").export(new long[] {2, 0, 1}).perSampleShapes())
        .containsExactly(shape(7), shape(3), shape(5));
  }

  @Test
  void shouldExportABatchOfSamplesPutDenseAsRegularWhateverTheOtherSamplesOfTheField() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0), schema(regular(DType.INT64, 3), "f"));
    Fixtures.produce(p, ids(1), schema(regular(DType.INT64, 4), "f"));
    assertThat(p.field("f").kind()).isEqualTo(FieldColumn.Kind.NESTED);
    assertThat(p.field("f").export(new long[] {0}))
        .isEqualTo(new FieldSchema(DType.INT64, shape(3), false, false, null));
    assertThat(p.field("f").export(new long[] {1, 1}))
        .isEqualTo(new FieldSchema(DType.INT64, shape(4), false, false, null));
    assertThat(p.field("f").export(new long[] {0, 1}).perSampleShapes())
        .containsExactly(shape(3), shape(4));
  }

  @Test
  void shouldExportSamplesPutJaggedAsNestedEvenWhenTheirShapesAgree() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0, 1), schema(nested(DType.FLOAT32, List.of(shape(2), shape(2))), "f"));
    Fixtures.produce(p, ids(2), schema(nested(DType.FLOAT32, List.of(shape(5))), "f"));
    p.clear(new int[] {2}, true);
    assertThat(p.field("f").kind()).as("one shape left").isEqualTo(FieldColumn.Kind.REGULAR);
    FieldSchema exported = p.field("f").export(new long[] {0, 1});
    assertThat(exported.nested()).isTrue();
    assertThat(exported.perSampleShapes()).containsExactly(shape(2), shape(2));
    Fixtures.produce(p, ids(1), schema(regular(DType.FLOAT32, 2), "f"));
    assertThat(p.field("f").export(new long[] {1}).nested()).as("rewritten dense").isFalse();
    assertThat(p.field("f").export(new long[] {0, 1}).nested()).isTrue();
  }

  @Test
  void C15_missingPerSampleShapeExportsAsNull() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0), schema(nested(DType.FLOAT32, List.of(shape(3))), "f"));
    FieldSchema exported = p.field("f").export(new long[] {0, 1});
    assertThat(exported.nested()).isTrue();
    assertThat(exported.perSampleShapes()).containsExactly(shape(3), null);
  }

  @Test
  void C16_nestedNotificationWithWrongShapeCountIsRejected() {
    insert(c, "p", 2, "f");
    produce(c, "p", ids(0), "f");
    assertThatThrownBy(
            () ->
                c.updateProductionStatus(
                    ProductionUpdate.of(
                        "p", ids(1), schema(nested(DType.FLOAT32, List.of()), "f"))))
        .extracting(ControllerProductionTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(c.scanReady("p", List.of("f"), "t")).isEqualTo(IndexSet.of(0));
  }

  @Test
  void C17_placeholderNotificationIsRejected() {
    insert(c, "p", 2, "f");
    produce(c, "p", ids(0), "f");
    assertThatThrownBy(
            () ->
                c.updateProductionStatus(
                    ProductionUpdate.of("p", ids(1), schema(FieldSchema.placeholder(), "f"))))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("without 'shape'");
    assertThat(c.scanReady("p", List.of("f"), "t")).isEqualTo(IndexSet.of(0));
  }

  @Test
  void C18_regularThenNestedBecomesNested() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0), schema(regular(DType.FLOAT32, 2), "f"));
    Fixtures.produce(p, ids(1), schema(nested(DType.FLOAT32, List.of(shape(5))), "f"));
    assertThat(kind(p, "f")).isEqualTo(FieldColumn.Kind.NESTED);
    assertThat(p.field("f").perSampleShapes()).isEqualTo(Map.of(0, shape(2), 1, shape(5)));
  }

  @Test
  void C19_nestedThenRegularStaysNested() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0), schema(nested(DType.FLOAT32, List.of(shape(5))), "f"));
    Fixtures.produce(p, ids(1), schema(regular(DType.FLOAT32, 2), "f"));
    assertThat(kind(p, "f")).isEqualTo(FieldColumn.Kind.NESTED);
    assertThat(p.field("f").perSampleShapes()).isEqualTo(Map.of(0, shape(5), 1, shape(2)));
  }

  @Test
  void C20_rewriteWithAnotherShapeNests() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0, 1), schema(regular(DType.FLOAT32, 2), "f"));
    Fixtures.produce(p, ids(1), schema(regular(DType.FLOAT32, 3), "f"));
    assertThat(kind(p, "f")).isEqualTo(FieldColumn.Kind.NESTED);
    assertThat(p.field("f").perSampleShapes()).isEqualTo(Map.of(0, shape(2), 1, shape(3)));
  }

  @Test
  void C21_kindChangeBetweenTensorAndNonTensorIsAConflict() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0), schema(nonTensor(), "f"));
    assertThatThrownBy(() -> Fixtures.produce(p, ids(1), schema(F32_4, "f")))
        .extracting(ControllerProductionTest::codeOf)
        .isEqualTo(ErrorCode.SCHEMA_CONFLICT);
    Fixtures.produce(p, ids(2), schema(F32_4, "g"));
    assertThatThrownBy(() -> Fixtures.produce(p, ids(3), schema(nonTensor(), "g")))
        .extracting(ControllerProductionTest::codeOf)
        .isEqualTo(ErrorCode.SCHEMA_CONFLICT);
    assertThat(p.active()).isEqualTo(IndexSet.of(0, 2));
  }

  @Test
  void C22_productionStatusMatrixCoversMembersOnly() {
    insert(c, "p", 10, "field_a", "field_b");
    c.clearSamples(ClearSamplesRequest.of("p", range(4, 9)));
    produce(c, "p", ids(0, 1, 2, 3, 9), "field_a", "field_b");
    ProductionStatus both = c.getProductionStatus("p", List.of("field_a", "field_b")).orElseThrow();
    assertThat(both.indexes()).isEqualTo(IndexSet.of(0, 1, 2, 3, 9));
    assertThat(both.allProduced()).isTrue();
    ProductionStatus one = c.getProductionStatus("p", List.of("field_a")).orElseThrow();
    assertThat(one.fields()).containsExactly("field_a");
    assertThat(one.allProduced()).isTrue();
  }

  @Test
  void C23_unregisteredOrEmptyFieldsGiveNoStatus() {
    insertProducedA();
    assertThat(c.getProductionStatus("p", List.of("a", "nope"))).isEmpty();
    assertThat(c.getProductionStatus("p", List.of())).isEmpty();
    assertThat(c.getProductionStatus("missing", List.of("a"))).isEmpty();
  }

  private void insertProducedA() {
    insert(c, "p", 4, "a");
    produce(c, "p", range(0, 4), "a");
  }

  @Test
  void C24_insertedButUnproducedSamplesReadAsZero() {
    insertProducedA();
    insert(c, "p", 4, "a");
    ProductionStatus status = c.getProductionStatus("p", List.of("a")).orElseThrow();
    assertThat(status.indexes()).isEqualTo(IndexSet.range(0, 8));
    for (int row = 0; row < 8; row++) {
      assertThat(status.isProduced(row, 0)).isEqualTo(row < 4);
    }
  }

  @Test
  void C25_columnsFollowRequestOrder() {
    insert(c, "p", 2, "a", "b");
    produce(c, "p", ids(0), "a");
    produce(c, "p", ids(1), "b");
    ProductionStatus status = c.getProductionStatus("p", List.of("b", "a")).orElseThrow();
    assertThat(status.fields()).containsExactly("b", "a");
    assertThat(status.produced()).containsExactly(IndexSet.of(1), IndexSet.of(0));
  }

  @Test
  void C26_readinessIsPerFieldSet() {
    insert(c, "p", 4, "a1", "a2", "b1");
    produce(c, "p", range(0, 4), "a1", "a2");
    assertThat(c.getProductionStatus("p", List.of("a1", "a2")).orElseThrow().allProduced())
        .isTrue();
    assertThat(c.getProductionStatus("p", List.of("b1"))).isEmpty();
    produce(c, "p", range(0, 2), "b1");
    assertThat(c.getProductionStatus("p", List.of("a1", "b1")).orElseThrow().allProduced())
        .isFalse();
    produce(c, "p", range(2, 4), "b1");
    assertThat(c.getProductionStatus("p", List.of("a1", "a2", "b1")).orElseThrow().allProduced())
        .isTrue();
  }

  @Test
  void C27_laterShapeChangeMakesFieldNestedInForceFetch() {
    insert(c, "p", 2, "x");
    c.updateProductionStatus(ProductionUpdate.of("p", range(0, 2), schema(F32_4, "x")));
    assertThat(c.getMetadata(GetMetadataRequest.forceFetch("p", List.of("x"))).field("x").nested())
        .isFalse();
    insert(c, "p", 2, "x");
    c.updateProductionStatus(
        ProductionUpdate.of("p", range(2, 4), schema(regular(DType.FLOAT32, 6), "x")));
    BatchMeta meta = c.getMetadata(GetMetadataRequest.forceFetch("p", List.of("x")));
    assertThat(meta.size()).isEqualTo(4);
    assertThat(meta.field("x").nested()).isTrue();
    assertThat(meta.field("x").perSampleShapes())
        .containsExactly(shape(4), shape(4), shape(6), shape(6));
  }

  @Test
  void shouldRejectNotificationForIndexNotOwnedByThePartition() {
    insert(c, "a", 2, "x");
    insert(c, "b", 2, "x");
    assertThatThrownBy(() -> produce(c, "a", ids(0, 2), "x"))
        .extracting(ControllerProductionTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(c.getProductionStatus("a", List.of("x"))).isEmpty();
    c.checkInvariants();
  }

  @Test
  void shouldDenestWhenClearLeavesOneShape() {
    Partition p = partition("p");
    Fixtures.produce(p, ids(0, 1), schema(regular(DType.FLOAT32, 256), "nested_field"));
    Fixtures.produce(p, ids(2), schema(regular(DType.FLOAT32, 128), "nested_field"));
    p.clear(new int[] {2}, true);
    FieldColumn f = p.field("nested_field");
    assertThat(f.kind()).isEqualTo(FieldColumn.Kind.REGULAR);
    assertThat(f.shape()).isEqualTo(shape(256));
    assertThat(f.perSampleShapes()).isEmpty();
    assertThat(IndexSet.copyOf(f.produced)).isEqualTo(IndexSet.of(0, 1));
  }
}
