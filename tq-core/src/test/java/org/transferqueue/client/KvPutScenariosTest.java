package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;
import static org.transferqueue.client.Rows.longRows;

import java.util.List;
import java.util.Map;
import java.util.Random;
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
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Client-api §4 B12-B22: key-value writes, each in the blocking and the asynchronous form, over
 * SimpleStorage and MooncakeStore.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class KvPutScenariosTest {
  @Parameter Deployment deployment;

  private static final String P = "test_partition";

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B12_mapFieldsGetBatchDimension(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Tensor data = Rows.vector(allocator, 1, 2, 3, 4)) {
      KvCalls kv = form.over(tq.kv());
      kv.put("sample_0", P, Map.of("data", data), Map.of("type", "dict_test"));
      try (Batch read = kv.batchGet(List.of("sample_0"), P)) {
        assertThat(read.rowCount()).isEqualTo(1);
        assertThat(read.column("data").kind()).isEqualTo(ColumnKind.DENSE);
        assertThat(Rows.rowShapes(read.column("data"))).containsExactly(List.of(4L));
        assertThat(longRows(read.column("data"))).isDeepEqualTo(new long[][] {{1, 2, 3, 4}});
      }
      assertThat(kv.list(P)).isEqualTo(Map.of(P, Map.of("sample_0", Map.of("type", "dict_test"))));
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B13_oneRowBatch(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch row = batch("input_ids", i64(allocator, new long[] {1, 2, 3, 4}))) {
      KvCalls kv = form.over(tq.kv());
      kv.put("sample_1", P, row, Map.of("type", "tensordict_test"));
      try (Batch read = kv.batchGet(List.of("sample_1"), P)) {
        assertThat(longRows(read.column("input_ids"))).isDeepEqualTo(new long[][] {{1, 2, 3, 4}});
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B14_fieldsAndTagsTogether(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Tensor ids = Rows.vector(allocator, 1, 2, 3);
        Tensor mask = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1, 1, 1}, 3)) {
      KvCalls kv = form.over(tq.kv());
      Map<String, Object> tags = Map.of("global_steps", 0L, "status", "running");
      KvBatchMeta meta =
          kv.put("sample_2", P, Map.of("input_ids", ids, "attention_mask", mask), tags);
      assertThat(meta.keys()).containsExactly("sample_2");
      assertThat(meta.fields()).containsExactly("attention_mask", "input_ids");
      assertThat(meta.partitionId()).isEqualTo(P);
      assertThat(meta.tags()).containsExactly(tags);
      assertThat(tq.client().checkProductionStatus(P, List.of("input_ids", "attention_mask")))
          .isTrue();
      try (Batch read = kv.batchGet(List.of("sample_2"), P)) {
        assertThat(longRows(read.column("input_ids"))).isDeepEqualTo(new long[][] {{1, 2, 3}});
        assertThat(read.column("attention_mask").kind()).isEqualTo(ColumnKind.DENSE);
        assertThat(Rows.doubleRows(read.column("attention_mask")))
            .isDeepEqualTo(new double[][] {{1.0, 1.0, 1.0}});
      }
      assertThat(kv.list(P).get(P)).containsEntry("sample_2", tags);
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B15_tagOnlyUpdateKeepsData(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch row = batch("value", i64(allocator, new long[] {10}))) {
      KvCalls kv = form.over(tq.kv());
      kv.put("sample_3", P, row, Map.of("version", 1L));
      KvBatchMeta meta =
          kv.put("sample_3", P, (Batch) null, Map.of("version", 2L, "status", "updated"));
      Map<String, Object> expected = Map.of("version", 2L, "status", "updated");
      assertThat(meta.tags()).containsExactly(expected);
      assertThat(meta.fields()).containsExactly("value");
      assertThat(kv.list(P).get(P)).containsEntry("sample_3", expected);
      try (Batch read = kv.batchGet(List.of("sample_3"), P)) {
        assertThat(longRows(read.column("value"))).isDeepEqualTo(new long[][] {{10}});
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B16_tagMergeIsKeyLevel(KvCalls.Form form, Backend backend) {
    try (TestSystem tq = deployment.fresh(backend)) {
      KvCalls kv = form.over(tq.kv());
      kv.put("t", P, (Batch) null, Map.of("a", 1L));
      kv.put("t", P, (Batch) null, Map.of("b", 2L));
      assertThat(kv.list(P).get(P).get("t")).isEqualTo(Map.of("a", 1L, "b", 2L));
      KvBatchMeta meta = kv.put("t", P, (Batch) null, Map.of("a", 3L));
      assertThat(meta.tags()).containsExactly(Map.of("a", 3L, "b", 2L));
      assertThat(kv.list(P).get(P).get("t")).isEqualTo(Map.of("a", 3L, "b", 2L));
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B17_addingAFieldToAnExistingKey(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch ids = batch("input_ids", i64(allocator, new long[] {1, 2, 3, 4}));
        Batch response = batch("response", i64(allocator, new long[] {5, 6}))) {
      KvCalls kv = form.over(tq.kv());
      kv.put("sample_4", P, ids, null);
      KvBatchMeta meta = kv.put("sample_4", P, response, Map.of("v", 2L));
      assertThat(meta.fields()).containsExactly("input_ids", "response");
      assertThat(tq.client().checkProductionStatus(P, List.of("response"))).isTrue();
      try (Batch read = kv.batchGet(List.of("sample_4"), P, List.of("input_ids", "response"))) {
        assertThat(longRows(read.column("input_ids"))).isDeepEqualTo(new long[][] {{1, 2, 3, 4}});
        assertThat(longRows(read.column("response"))).isDeepEqualTo(new long[][] {{5, 6}});
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B18_returnedFieldsAccumulate(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch ids = batch("input_ids", i64(allocator, new long[] {1, 2, 3}));
        Batch mask = batch("attention_mask", i64(allocator, new long[] {1, 1, 1}));
        Batch response = batch("response", i64(allocator, new long[] {10, 20}))) {
      KvCalls kv = form.over(tq.kv());
      assertThat(kv.put("k", P, ids, null).fields()).containsExactly("input_ids");
      assertThat(kv.put("k", P, mask, null).fields())
          .containsExactly("attention_mask", "input_ids");
      assertThat(kv.put("k", P, response, null).fields())
          .containsExactly("attention_mask", "input_ids", "response");
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B19_batchPut(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    List<String> keys = List.of("batch_0", "batch_1", "batch_2", "batch_3");
    long[][] ids = {{4, 5, 6}, {7, 8, 9}, {10, 11, 12}, {13, 14, 15}};
    List<Map<String, Object>> tags =
        List.of(
            Map.of("idx", 0L, "batch", true),
            Map.of("idx", 1L, "batch", true),
            Map.of("idx", 2L, "batch", true),
            Map.of("idx", 3L, "batch", true));
    try (TestSystem tq = deployment.fresh(backend);
        Batch data =
            batch(
                "input_ids",
                i64(allocator, ids),
                "attention_mask",
                Rows.ones(allocator, DType.INT64, 4, 3))) {
      KvCalls kv = form.over(tq.kv());
      KvBatchMeta meta = kv.batchPut(keys, P, data, tags);
      assertThat(meta.keys()).containsExactlyElementsOf(keys);
      assertThat(meta.tags()).containsExactlyElementsOf(tags);
      assertThat(meta.fields()).containsExactly("attention_mask", "input_ids");
      Map<String, Map<String, Object>> listed = kv.list(P).get(P);
      assertThat(listed.keySet()).containsExactlyElementsOf(keys);
      for (int i = 0; i < keys.size(); i++) {
        assertThat(listed.get(keys.get(i))).isEqualTo(tags.get(i));
      }
      try (Batch read = kv.batchGet(keys, P)) {
        Eq.assertBatchEq(read, data);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B20_partialRowColumnUpdate(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    List<String> keys = List.of("partial_0", "partial_1");
    try (TestSystem tq = deployment.fresh(backend);
        Batch ids = batch("input_ids", i64(allocator, new long[] {1, 2}, new long[] {3, 4}));
        Batch response = batch("response", i64(allocator, new long[] {5, 6}))) {
      KvCalls kv = form.over(tq.kv());
      kv.batchPut(keys, P, ids, List.of(Map.of("v", 1L), Map.of("v", 1L)));
      kv.batchPut(List.of("partial_1"), P, response, List.of(Map.of("v", 2L)));
      BatchMeta all = tq.client().getMeta(GetMetadataRequest.forceFetch(P, List.of("response")));
      assertThat(all.size()).isEqualTo(2);
      long partial1 = tq.client().resolveKeys(P, List.of("partial_1"), false).globalIndex(0);
      for (int i = 0; i < all.size(); i++) {
        assertThat(all.isProduced(i)).isEqualTo(all.globalIndex(i) == partial1);
      }
      try (Batch both = kv.batchGet(keys, P)) {
        assertThat(both.fields()).containsExactly("input_ids");
        assertThat(longRows(both.column("input_ids"))).isDeepEqualTo(new long[][] {{1, 2}, {3, 4}});
      }
      try (Batch one = kv.batchGet(List.of("partial_1"), P)) {
        assertThat(one.fields()).containsExactlyInAnyOrder("input_ids", "response");
        assertThat(longRows(one.column("input_ids"))).isDeepEqualTo(new long[][] {{3, 4}});
        assertThat(longRows(one.column("response"))).isDeepEqualTo(new long[][] {{5, 6}});
      }
      assertThat(kv.list(P).get(P).get("partial_1")).isEqualTo(Map.of("v", 2L));
      assertThat(kv.list(P).get(P).get("partial_0")).isEqualTo(Map.of("v", 1L));
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B21_batchPutReturnsCumulativeFields(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    List<String> keys = List.of("c_0", "c_1");
    try (TestSystem tq = deployment.fresh(backend);
        Batch ids = batch("input_ids", i64(allocator, new long[] {1}, new long[] {2}));
        Batch mask = batch("attention_mask", i64(allocator, new long[] {1}, new long[] {1}))) {
      KvCalls kv = form.over(tq.kv());
      assertThat(kv.batchPut(keys, P, ids, null).fields()).containsExactly("input_ids");
      assertThat(kv.batchPut(keys, P, mask, null).fields())
          .containsExactly("attention_mask", "input_ids");
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B22_raggedAcrossSinglePuts(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    long seed = 22L;
    Random random = new Random(seed);
    float[][] rows = new float[3][];
    try (TestSystem tq = deployment.fresh(backend)) {
      KvCalls kv = form.over(tq.kv());
      for (int k = 0; k < 3; k++) {
        rows[k] = new float[k + 1];
        for (int j = 0; j <= k; j++) {
          rows[k][j] = random.nextFloat();
        }
        try (Tensor data = Tensor.ofFloats(allocator, DType.FLOAT32, rows[k], k + 1)) {
          kv.put("nested_tensor_" + (k + 1), P, Map.of("data", data), null);
        }
      }
      try (Batch read =
              kv.batchGet(List.of("nested_tensor_1", "nested_tensor_2", "nested_tensor_3"), P);
          JaggedColumn expected = Rows.jaggedF32(allocator, rows)) {
        assertThat(read.column("data").kind()).as("seed %d", seed).isEqualTo(ColumnKind.JAGGED);
        Eq.assertColumnEq("data", read.column("data"), expected);
      }
    }
  }
}
