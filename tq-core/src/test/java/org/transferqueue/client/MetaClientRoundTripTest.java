package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * Client-api §4 C50, C52, C58 and C60: data round trips through the low-level client, in both
 * forms, over SimpleStorage and MooncakeStore.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class MetaClientRoundTripTest {
  @Parameter Deployment deployment;

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C50_fullTypeRoundTrip(MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String partition = "test_core_consistency";
    try (TestSystem tq = deployment.fresh(backend);
        Batch input = ComplexBatch.range(allocator, 0, 20)) {
      MetaCalls calls = form.over(tq.client());
      BatchMeta written = calls.put(input, partition);
      assertThat(written.size()).isEqualTo(20);
      assertThat(written.isReady()).isTrue();
      List<String> sorted = new ArrayList<>(ComplexBatch.FIELDS);
      sorted.sort(null);
      assertThat(written.fieldNames()).containsExactlyElementsOf(sorted);

      BatchMeta fetched =
          calls.getMeta(
              GetMetadataRequest.fetch(
                  partition, ComplexBatch.FIELDS, "core_consistency_task", 20));
      assertThat(fetched.size()).isEqualTo(20);
      try (Batch output = calls.getData(fetched)) {
        Eq.assertBatchEq(output, input);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C50_everyDtypeNullsAndNestedTensorsRoundTrip(
      MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String partition = "test_every_dtype";
    try (TestSystem tq = deployment.fresh(backend);
        Batch input = ComplexBatch.extended(allocator, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)) {
      MetaCalls calls = form.over(tq.client());
      long baseline = tq.storedBytes();
      long[] afterCycle = new long[2];
      for (int cycle = 0; cycle < 2; cycle++) {
        BatchMeta written = calls.put(input, partition);
        assertThat(written.fieldNames())
            .hasSize(ComplexBatch.FIELDS.size() + ComplexBatch.EXTRA_FIELDS.size());
        try (Batch output = calls.getData(written)) {
          Eq.assertBatchEq(output, input);
        }
        calls.clearPartition(partition);
        assertThat(tq.client().getPartitionList()).doesNotContain(partition);
        afterCycle[cycle] = tq.storedBytes();
      }
      // Memory is reused: a second identical cycle holds no more than the first. SimpleStorage
      // frees every cell; MooncakeStore keeps its registered transfer buffers leased for reuse.
      assertThat(afterCycle[1]).as("memory after the second cycle").isEqualTo(afterCycle[0]);
      if (backend == Backend.SIMPLE_STORAGE) {
        assertThat(afterCycle[0]).as("memory after clearing every sample").isEqualTo(baseline);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C52_allocateFillInPiecesAndUpdateAcrossShards(
      MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String partition = "test_cross_shard_update";
    try (TestSystem tq = deployment.fresh(backend);
        Batch first = ComplexBatch.range(allocator, 0, 20);
        Batch second = ComplexBatch.range(allocator, 20, 40);
        Batch update = withNewColumns(allocator, ComplexBatch.range(allocator, 1010, 1030))) {
      MetaCalls calls = form.over(tq.client());
      BatchMeta slots =
          calls.getMeta(GetMetadataRequest.insert(partition, ComplexBatch.FIELDS, 40));
      assertThat(slots.size()).isEqualTo(40);
      assertThat(new HashSet<>(slots.globalIndexes())).hasSize(40);
      assertThat(slots.productionStatus()).containsOnly(false);
      assertThat(slots.globalIndexes()).isSorted();

      calls.put(first, slots.selectSamples(range(0, 20)));
      calls.put(second, slots.selectSamples(range(20, 40)));
      calls.put(update, slots.selectSamples(range(10, 30)));

      BatchMeta all = calls.getMeta(GetMetadataRequest.forceFetch(partition, ComplexBatch.FIELDS));
      assertThat(all.size()).isEqualTo(40);
      assertThat(all.globalIndexes()).containsExactlyElementsOf(slots.globalIndexes());
      try (Batch read = calls.getData(all)) {
        for (String field : ComplexBatch.FIELDS) {
          Eq.assertRowsEq(field, read.column(field), 0, first.column(field), 0, 10);
          Eq.assertRowsEq(field, read.column(field), 10, update.column(field), 0, 20);
          Eq.assertRowsEq(field, read.column(field), 30, second.column(field), 10, 10);
        }
      }
      List<String> added = List.of("new_extra_tensor", "new_extra_non_tensor");
      BatchMeta updated =
          calls
              .getMeta(GetMetadataRequest.forceFetch(partition, added))
              .selectSamples(range(10, 30));
      assertThat(updated.isReady()).isTrue();
      try (Batch read = calls.getData(updated)) {
        Eq.assertFieldsEq(read, update, added);
      }
    }
  }

  private static Batch withNewColumns(BufferAllocator allocator, Batch base) {
    int n = base.rowCount();
    float[] values = new float[n * 3];
    List<Object> maps = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      java.util.Arrays.fill(values, r * 3, r * 3 + 3, 10 + r);
      maps.add(Map.of("new_field", "new_" + (10 + r)));
    }
    Batch.Builder builder = Batch.builder();
    base.columns().forEach(builder::add);
    return builder
        .dense("new_extra_tensor", Tensor.ofFloats(allocator, DType.FLOAT32, values, n, 3))
        .objects("new_extra_non_tensor", maps)
        .build();
  }

  private static int[] range(int from, int to) {
    return IntStream.range(from, to).toArray();
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C58_shapeChangeMakesAFieldRagged(
      MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String partition = "dynamic_shape";
    try (TestSystem tq = deployment.fresh(backend);
        Batch four = Rows.batch("dynamic_feature", Rows.ones(allocator, DType.FLOAT32, 2, 4));
        Batch six = Rows.batch("dynamic_feature", Rows.ones(allocator, DType.FLOAT32, 2, 6))) {
      MetaCalls calls = form.over(tq.client());
      calls.put(four, partition);
      BatchMeta before =
          calls.getMeta(GetMetadataRequest.forceFetch(partition, List.of("dynamic_feature")));
      assertThat(before.field("dynamic_feature").nested()).isFalse();
      assertThat(before.field("dynamic_feature").shape()).containsExactly(4L);
      try (Batch read = calls.getData(before)) {
        assertThat(read.column("dynamic_feature").kind()).isEqualTo(ColumnKind.DENSE);
        assertThat(Rows.rowShapes(read.column("dynamic_feature")))
            .containsExactly(List.of(4L), List.of(4L));
      }
      BatchMeta more =
          calls.getMeta(GetMetadataRequest.insert(partition, List.of("dynamic_feature"), 2));
      calls.put(six, more);
      BatchMeta after =
          calls.getMeta(GetMetadataRequest.forceFetch(partition, List.of("dynamic_feature")));
      assertThat(after.field("dynamic_feature").nested()).isTrue();
      assertThat(after.globalIndexes()).isSorted().hasSize(4);
      try (Batch read = calls.getData(after)) {
        assertThat(read.column("dynamic_feature").kind()).isEqualTo(ColumnKind.JAGGED);
        assertThat(Rows.rowShapes(read.column("dynamic_feature")))
            .containsExactly(List.of(4L), List.of(4L), List.of(6L), List.of(6L));
        for (double[] row : Rows.doubleRows(read.column("dynamic_feature"))) {
          assertThat(row).containsOnly(1.0);
        }
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C60_readsArePrivateCopies(MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String partition = "private_copies";
    try (TestSystem tq = deployment.fresh(backend);
        Batch input = ComplexBatch.range(allocator, 0, 8)) {
      MetaCalls calls = form.over(tq.client());
      BatchMeta written = calls.put(input, partition);
      try (Batch first = calls.getData(written)) {
        row(first, "tensor_f32", 0).setDouble(0, 99999);
        row(first, "tensor_i64", 0).setLong(0, 88888);
        row(first, "tensor_bf16", 0).setDouble(0, 77);
        row(first, "tensor_f16", 0).setDouble(0, 66);
        row(first, "nested_jagged", 0).setDouble(0, 55555);
        row(first, "special_val", 0).setDouble(2, 33333);
        assertThat(row(first, "tensor_f32", 0).getDouble(0)).isEqualTo(99999.0);
        assertThat(row(first, "tensor_i64", 0).getLong(0)).isEqualTo(88888L);
        assertThat(row(first, "tensor_bf16", 0).getDouble(0)).isEqualTo(77.0);
        assertThat(row(first, "tensor_f16", 0).getDouble(0)).isEqualTo(66.0);
        assertThat(row(first, "nested_jagged", 0).getDouble(0)).isEqualTo(55555.0);
        assertThat(row(first, "special_val", 0).getDouble(2)).isEqualTo(33333.0);
      }
      try (Batch second = calls.getData(written)) {
        Eq.assertBatchEq(second, input);
      }
    }
  }

  private static Tensor row(Batch batch, String field, int row) {
    return (Tensor) Eq.rowValue(batch.column(field), row);
  }
}
