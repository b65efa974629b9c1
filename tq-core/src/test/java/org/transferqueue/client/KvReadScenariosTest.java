package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;
import static org.transferqueue.client.Rows.longRows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;

/**
 * Client-api §4 B23-B33: key-value reads, each in the blocking and the asynchronous form, over
 * SimpleStorage and MooncakeStore.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class KvReadScenariosTest {
  @Parameter Deployment deployment;

  private static final String P = "test_partition";

  static ErrorCode code(Throwable error) {
    return ((TqException) error).code();
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B23_singleKeyRead(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch row = batch("data", i64(allocator, new long[] {100, 200, 300}))) {
      KvCalls kv = form.over(tq.kv());
      kv.put("get_single", P, row, null);
      try (Batch read = kv.batchGet(List.of("get_single"), P)) {
        Eq.assertBatchEq(read, row);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B24_multiKeyReadInKeyOrder(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    List<String> keys = List.of("get_multi_0", "get_multi_1", "get_multi_2");
    try (TestSystem tq = deployment.fresh(backend);
        Batch rows =
            batch(
                "data", i64(allocator, new long[] {1, 2}, new long[] {3, 4}, new long[] {5, 6}))) {
      KvCalls kv = form.over(tq.kv());
      kv.batchPut(keys, P, rows, null);
      try (Batch read = kv.batchGet(keys, P)) {
        Eq.assertBatchEq(read, rows);
      }
      try (Batch reversed = kv.batchGet(keys.reversed(), P)) {
        assertThat(longRows(reversed.column("data")))
            .isDeepEqualTo(new long[][] {{5, 6}, {3, 4}, {1, 2}});
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B25_keySubsetWithMixedColumnKinds(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    List<String> keys = List.of("get_multi_3", "get_multi_4", "get_multi_5");
    try (TestSystem tq = deployment.fresh(backend);
        Batch rows =
            Batch.builder()
                .dense(
                    "data", i64(allocator, new long[] {1, 2}, new long[] {3, 4}, new long[] {5, 6}))
                .add(
                    "nested_data",
                    Rows.jaggedF32(
                        allocator,
                        new float[] {10, 11, 12},
                        new float[] {20},
                        new float[] {30, 31}))
                .add(
                    "nested_3d",
                    Rows.jaggedI64(
                        allocator,
                        new long[] {2, 2},
                        new long[] {10, 11, 12, 13},
                        new long[] {20, 21, 22, 23},
                        new long[] {30, 31, 32, 33}))
                .build()) {
      KvCalls kv = form.over(tq.kv());
      kv.batchPut(keys, P, rows, null);
      try (Batch read = kv.batchGet(List.of("get_multi_3", "get_multi_5"), P);
          Batch expected = rows.selectRows(allocator, new int[] {0, 2})) {
        Eq.assertBatchEq(read, expected);
        assertThat(longRows(read.column("data"))).isDeepEqualTo(new long[][] {{1, 2}, {5, 6}});
        assertThat(Rows.doubleRows(read.column("nested_data")))
            .isDeepEqualTo(new double[][] {{10, 11, 12}, {30, 31}});
        assertThat(Rows.rowShapes(read.column("nested_3d")))
            .containsExactly(List.of(2L, 2L), List.of(2L, 2L));
        assertThat(longRows(read.column("nested_3d")))
            .isDeepEqualTo(new long[][] {{10, 11, 12, 13}, {30, 31, 32, 33}});
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B26_columnSelection(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch row =
            Batch.builder()
                .dense("input_ids", i64(allocator, new long[] {1, 2, 3}))
                .dense("attention_mask", Rows.ones(allocator, DType.INT64, 1, 3))
                .dense("response", i64(allocator, new long[] {10, 20}))
                .build()) {
      KvCalls kv = form.over(tq.kv());
      kv.put("get_fields", P, row, null);
      try (Batch one = kv.batchGet(List.of("get_fields"), P, List.of("input_ids"))) {
        assertThat(one.fields()).containsExactly("input_ids");
        assertThat(longRows(one.column("input_ids"))).isDeepEqualTo(new long[][] {{1, 2, 3}});
      }
      try (Batch two = kv.batchGet(List.of("get_fields"), P, List.of("input_ids", "response"))) {
        assertThat(two.fields()).containsExactlyInAnyOrder("input_ids", "response");
        assertThat(longRows(two.column("response"))).isDeepEqualTo(new long[][] {{10, 20}});
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B27_unknownKey(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch row = batch("data", i64(allocator, new long[] {1}))) {
      KvCalls kv = form.over(tq.kv());
      kv.put("present", P, row, null);
      assertThatThrownBy(() -> kv.batchGet(List.of("nonexistent_key"), P))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNKNOWN_KEY))
          .hasMessageContaining("nonexistent_key");
      try (Batch read = kv.batchGet(List.of("present"), P)) {
        Eq.assertBatchEq(read, row);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B28_unknownPartition(KvCalls.Form form, Backend backend) {
    try (TestSystem tq = deployment.fresh(backend)) {
      KvCalls kv = form.over(tq.kv());
      assertThatThrownBy(() -> kv.batchGet(List.of("any"), "no_such_partition"))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNKNOWN_KEY))
          .hasMessageContaining("no_such_partition");
      assertThat(tq.client().getPartitionList()).doesNotContain("no_such_partition");
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B29_partiallyUnknownKeysFailByDefaultAndSkipOnRequest(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (Batch row = batch("data", i64(allocator, new long[] {7, 8}))) {
      try (TestSystem tq = deployment.fresh(backend)) {
        KvCalls kv = form.over(tq.kv());
        kv.put("a", P, row, null);
        assertThatThrownBy(() -> kv.batchGet(List.of("a", "zzz"), P))
            .isInstanceOf(TqException.class)
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNKNOWN_KEY))
            .hasMessageContaining("[zzz]");
      }
      try (TestSystem tq = deployment.start(backend.sysConfig(), MissingKeyPolicy.SKIP, null)) {
        KvCalls kv = form.over(tq.kv());
        kv.put("a", P, row, null);
        try (Batch read = kv.batchGet(List.of("zzz", "a"), P)) {
          Eq.assertBatchEq(read, row);
        }
      }
    }
  }

  private static Batch threeFields(BufferAllocator allocator) {
    return Batch.builder()
        .dense(
            "input_ids",
            i64(allocator, new long[] {1, 2, 3}, new long[] {4, 5, 6}, new long[] {7, 8, 9}))
        .dense("attention_mask", Rows.ones(allocator, DType.INT64, 3, 3))
        .dense(
            "response",
            i64(allocator, new long[] {10, 20}, new long[] {30, 40}, new long[] {50, 60}))
        .build();
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B30_readByMetaWithColumnOverride(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    List<String> keys = List.of("meta_override_0", "meta_override_1", "meta_override_2");
    try (TestSystem tq = deployment.fresh(backend);
        Batch data = threeFields(allocator)) {
      KvCalls kv = form.over(tq.kv());
      KvBatchMeta meta =
          kv.batchPut(
              keys, P, data, List.of(Map.of("idx", 0L), Map.of("idx", 1L), Map.of("idx", 2L)));
      assertThat(meta.fields()).hasSize(3);
      try (Batch ids = kv.get(meta, List.of("input_ids"))) {
        assertThat(ids.fields()).containsExactly("input_ids");
        Eq.assertFieldsEq(ids, data, List.of("input_ids"));
      }
      try (Batch two = kv.get(meta, List.of("attention_mask", "response"))) {
        assertThat(two.fields()).containsExactlyInAnyOrder("attention_mask", "response");
        Eq.assertFieldsEq(two, data, List.of("attention_mask", "response"));
      }
      try (Batch all = kv.get(meta, null)) {
        Eq.assertBatchEq(all, data);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B31_readByMetaWithInvalidSelection(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch row = batch("input_ids", i64(allocator, new long[] {1, 2}))) {
      KvCalls kv = form.over(tq.kv());
      KvBatchMeta meta = kv.put("k", P, row, null);
      assertThat(meta.fields()).containsExactly("input_ids");
      for (List<String> selection :
          List.of(List.of("nonexistent_field"), List.of("input_ids", "invalid_field"))) {
        assertThatThrownBy(() -> kv.get(meta, selection))
            .isInstanceOf(TqException.class)
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNKNOWN_FIELD))
            .hasMessageContaining("not found in the metadata");
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B32_readByMetaAfterTwoPuts(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    List<String> keys = List.of("two_0", "two_1");
    try (TestSystem tq = deployment.fresh(backend);
        Batch ids = batch("input_ids", i64(allocator, new long[] {1, 2, 3}, new long[] {4, 5, 6}));
        Batch mask =
            batch("attention_mask", i64(allocator, new long[] {1, 1, 1}, new long[] {1, 1, 1}))) {
      KvCalls kv = form.over(tq.kv());
      kv.batchPut(keys, P, ids, null);
      KvBatchMeta second = kv.batchPut(keys, P, mask, null);
      try (Batch read = kv.get(second, null)) {
        assertThat(read.fields()).containsExactlyInAnyOrder("input_ids", "attention_mask");
        Eq.assertFieldsEq(read, ids, List.of("input_ids"));
        Eq.assertFieldsEq(read, mask, List.of("attention_mask"));
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B33_metaWithoutPartition(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch row = batch("x", i64(allocator, new long[] {1}))) {
      KvCalls kv = form.over(tq.kv());
      kv.put("k", P, row, null);
      KvBatchMeta noPartition = KvBatchMeta.of(List.of("k"), List.of(Map.of()), null, null);
      assertThatThrownBy(() -> kv.get(noPartition, null))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("partition");
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B33_metaWithoutFieldsReadsTheCommonFields(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch row = batch("x", i64(allocator, new long[] {1}))) {
      KvCalls kv = form.over(tq.kv());
      kv.put("k", P, row, null);
      KvBatchMeta noFields = KvBatchMeta.of(List.of("k"), List.of(Map.of()), P, null);
      try (Batch read = kv.get(noFields, null)) {
        Eq.assertBatchEq(read, row);
      }
    }
  }
}
