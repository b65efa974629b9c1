package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;
import static org.transferqueue.client.Rows.longRows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.transferqueue.controller.ConsumptionStatus;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;

/**
 * Client-api §4 C53-C57 and C61-C63: production, consumption, tags, clears and sampling through the
 * low-level client, in both forms, over SimpleStorage and MooncakeStore.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class MetaClientLifecycleTest {
  @Parameter Deployment deployment;

  private static final List<String> SET_A =
      List.of("tensor_f32", "tensor_i64", "list_int", "list_str");
  private static final List<String> SET_B = List.of("nested_jagged", "np_array", "special_val");

  private static List<String> union(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C53_productionAndConsumptionLifeCycle(
      MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "test_production_lifecycle";
    String task = "lifecycle_task";
    List<String> all = union(SET_A, SET_B);
    try (TestSystem tq = deployment.fresh(backend);
        Batch data = ComplexBatch.range(allocator, 0, 10)) {
      MetaCalls calls = form.over(tq.client());
      MetaClient client = tq.client();
      BatchMeta slots = calls.getMeta(GetMetadataRequest.insert(p, all, 10));
      assertThat(client.checkProductionStatus(p, SET_A)).isFalse();

      calls.put(data.selectFields(SET_A.toArray(String[]::new)), slots);
      assertThat(client.checkProductionStatus(p, SET_A)).isTrue();
      assertThat(client.checkProductionStatus(p, SET_B)).isFalse();
      assertThat(client.checkProductionStatus(p, all)).isFalse();

      calls.put(data.selectFields(SET_B.toArray(String[]::new)), slots);
      assertThat(client.checkProductionStatus(p, all)).isTrue();
      assertThat(client.checkConsumptionStatus(p, task)).isFalse();

      BatchMeta fetched = calls.getMeta(GetMetadataRequest.fetch(p, all, task, 10));
      assertThat(fetched.size()).isEqualTo(10);
      assertThat(client.checkConsumptionStatus(p, task)).as("consumed at fetch").isTrue();
      try (Batch read = calls.getData(fetched)) {
        Eq.assertFieldsEq(read, data, all);
      }
      assertThat(client.checkConsumptionStatus(p, task)).isTrue();
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C54_tagsPersist(MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "test_tags";
    try (TestSystem tq = deployment.fresh(backend);
        Batch data = ComplexBatch.range(allocator, 0, 8)) {
      MetaCalls calls = form.over(tq.client());
      BatchMeta written = calls.put(data, p);
      List<Map<String, Object>> tags = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        tags.add(
            Map.of(
                "score",
                i / 10.0,
                "label",
                "label_" + i,
                "tags",
                List.of("tag_" + i + "_a", "tag_" + i + "_b")));
      }
      calls.setTags(written.withTags(tags));
      BatchMeta all = calls.getMeta(GetMetadataRequest.forceFetch(p, ComplexBatch.FIELDS));
      assertThat(all.size()).isEqualTo(8);
      for (int i = 0; i < 8; i++) {
        int position = written.globalIndexes().indexOf(all.globalIndex(i));
        assertThat(all.tags(i)).isEqualTo(tags.get(position));
      }
    }
  }

  private static BatchMeta consumeAll(
      MetaCalls calls, String p, List<String> fields, String task, int n) {
    BatchMeta fetched = calls.getMeta(GetMetadataRequest.fetch(p, fields, task, n));
    assertThat(fetched.size()).isEqualTo(n);
    return fetched;
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C55_resetConsumptionForOneTask(
      MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "test_reset";
    try (TestSystem tq = deployment.fresh(backend);
        Batch data = ComplexBatch.range(allocator, 0, 10)) {
      MetaCalls calls = form.over(tq.client());
      calls.put(data, p);
      consumeAll(calls, p, List.of("tensor_f32"), "reset_test_task", 10);
      assertThat(tq.client().checkConsumptionStatus(p, "reset_test_task")).isTrue();
      assertThat(
              calls
                  .getMeta(GetMetadataRequest.fetch(p, List.of("tensor_f32"), "reset_test_task", 1))
                  .size())
          .as("nothing left to fetch")
          .isZero();
      tq.client().resetConsumption(p, "reset_test_task");
      assertThat(tq.client().checkConsumptionStatus(p, "reset_test_task")).isFalse();
      consumeAll(calls, p, List.of("tensor_f32"), "reset_test_task", 10);
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C56_resetAllTasks(MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "test_reset_all";
    try (TestSystem tq = deployment.fresh(backend);
        Batch data =
            batch(
                "prompt_ids",
                Rows.ones(allocator, org.transferqueue.tensor.DType.INT64, 8, 4),
                "attention_mask",
                Rows.ones(allocator, org.transferqueue.tensor.DType.INT64, 8, 4))) {
      MetaCalls calls = form.over(tq.client());
      calls.put(data, p);
      consumeAll(calls, p, List.of("prompt_ids"), "generate_sequences", 8);
      consumeAll(calls, p, List.of("attention_mask"), "another_task", 8);
      tq.client().resetConsumption(p, null);
      for (String task : List.of("generate_sequences", "another_task")) {
        ConsumptionStatus status = tq.client().getConsumptionStatus(p, task).orElseThrow();
        assertThat(status.indexes().size()).isEqualTo(8);
        assertThat(status.consumed().size()).as(task).isZero();
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C57_clearAPartition(MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "test_clear_partition";
    try (TestSystem tq = deployment.fresh(backend);
        Batch data = ComplexBatch.range(allocator, 0, 15)) {
      MetaCalls calls = form.over(tq.client());
      BatchMeta written = calls.put(data, p);
      assertThat(tq.client().checkProductionStatus(p, ComplexBatch.FIELDS)).isTrue();
      assertThat(tq.client().getPartitionList()).contains(p);
      calls.clearPartition(p);
      assertThat(tq.client().getPartitionList()).doesNotContain(p);
      assertThat(tq.client().checkProductionStatus(p, ComplexBatch.FIELDS)).isFalse();
      assertThatCode(() -> calls.clearPartition(p)).doesNotThrowAnyException();
      // The cleared indexes are free again: the next insert anywhere reuses them.
      try (Batch more = ComplexBatch.range(allocator, 0, 15)) {
        BatchMeta again = calls.put(more, "after_clear");
        assertThat(again.globalIndexes())
            .containsExactlyInAnyOrderElementsOf(written.globalIndexes());
        try (Batch read = calls.getData(again)) {
          Eq.assertBatchEq(read, more);
        }
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C61_sequentialSamplingPerTask(
      MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "sampling";
    try (TestSystem tq = deployment.fresh(backend);
        Batch data =
            batch(
                "data",
                i64(
                    allocator,
                    new long[] {0},
                    new long[] {1},
                    new long[] {2},
                    new long[] {3},
                    new long[] {4},
                    new long[] {5}))) {
      MetaCalls calls = form.over(tq.client());
      calls.put(data, p);
      List<String> fields = List.of("data");
      BatchMeta a1 = calls.getMeta(GetMetadataRequest.fetch(p, fields, "A", 3));
      BatchMeta a2 = calls.getMeta(GetMetadataRequest.fetch(p, fields, "A", 3));
      BatchMeta b1 = calls.getMeta(GetMetadataRequest.fetch(p, fields, "B", 2));
      assertThat(a1.globalIndexes()).containsExactly(0L, 1L, 2L);
      assertThat(a2.globalIndexes()).containsExactly(3L, 4L, 5L);
      assertThat(b1.globalIndexes()).containsExactly(0L, 1L);
      try (Batch r1 = calls.getData(a1);
          Batch r2 = calls.getData(a2);
          Batch r3 = calls.getData(b1)) {
        assertThat(longRows(r1.column("data"))).isDeepEqualTo(new long[][] {{0}, {1}, {2}});
        assertThat(longRows(r2.column("data"))).isDeepEqualTo(new long[][] {{3}, {4}, {5}});
        assertThat(longRows(r3.column("data"))).isDeepEqualTo(new long[][] {{0}, {1}});
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C62_partitionIsolation(MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch train =
            batch(
                "input_ids",
                i64(allocator, new long[] {1, 2, 3}, new long[] {4, 5, 6}),
                "labels",
                i64(allocator, new long[] {0}, new long[] {1}));
        Batch val =
            batch(
                "input_ids",
                i64(allocator, new long[] {7, 8, 9}, new long[] {10, 11, 12}),
                "labels",
                i64(allocator, new long[] {2}, new long[] {3}))) {
      MetaCalls calls = form.over(tq.client());
      calls.put(train, "train");
      calls.put(val, "val");
      List<String> fields = List.of("input_ids", "labels");
      BatchMeta fromTrain =
          calls.getMeta(GetMetadataRequest.fetch("train", fields, "train_task", 2));
      BatchMeta fromVal = calls.getMeta(GetMetadataRequest.fetch("val", fields, "val_task", 2));
      try (Batch t = calls.getData(fromTrain);
          Batch v = calls.getData(fromVal)) {
        Eq.assertBatchEq(t, train);
        Eq.assertBatchEq(v, val);
      }
      assertThat(fromTrain.partitionIds()).containsOnly("train");
      assertThat(fromVal.partitionIds()).containsOnly("val");
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withForms")
  void C63_rowsAndColumnsGrow(MetaCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "dynamic";
    try (TestSystem tq = deployment.fresh(backend);
        Batch first =
            batch(
                "field1",
                i64(allocator, new long[] {1, 2}, new long[] {3, 4}),
                "field2",
                i64(allocator, new long[] {5, 6}, new long[] {7, 8}));
        Batch second =
            batch(
                "field1",
                i64(allocator, new long[] {9, 10}, new long[] {11, 12}, new long[] {13, 14}),
                "field2",
                i64(allocator, new long[] {15, 16}, new long[] {17, 18}, new long[] {19, 20}));
        Batch third = batch("field3", i64(allocator, new long[] {25, 26}, new long[] {27, 28}))) {
      MetaCalls calls = form.over(tq.client());
      BatchMeta firstMeta = calls.put(first, p);
      calls.put(second, p);
      BatchMeta five =
          calls.getMeta(GetMetadataRequest.fetch(p, List.of("field1", "field2"), "grow_task", 5));
      assertThat(five.size()).isEqualTo(5);
      BatchMeta withThird = calls.put(third, firstMeta);
      var status = tq.client().getProductionStatus(p, List.of("field3")).orElseThrow();
      assertThat(status.indexes().size()).isEqualTo(5);
      List<Long> produced =
          IntStream.range(0, 5)
              .filter(r -> status.isProduced(r, 0))
              .mapToObj(r -> status.indexes().get(r))
              .toList();
      assertThat(produced).containsExactlyInAnyOrderElementsOf(firstMeta.globalIndexes());
      try (Batch read = calls.getData(withThird.selectFields(List.of("field3")))) {
        assertThat(longRows(read.column("field3")))
            .isDeepEqualTo(new long[][] {{25, 26}, {27, 28}});
      }
    }
  }
}
