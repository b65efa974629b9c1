package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;
import static org.transferqueue.client.Rows.longRows;

import java.util.ArrayList;
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
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * Client-api §4 B34-B43: listings, clears, recycled indexes, default columns and tag-only keys,
 * each in the blocking and the asynchronous form, over SimpleStorage and MooncakeStore.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class KvListClearScenariosTest {
  @Parameter Deployment deployment;

  private static void putTagged(KvCalls kv, String partition, List<String> keys, long firstId) {
    List<Map<String, ?>> tags = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      tags.add(Map.of("id", firstId + i));
    }
    kv.batchPut(keys, partition, null, tags);
  }

  private static void putValues(
      KvCalls kv, BufferAllocator allocator, String partition, List<String> keys) {
    long[][] rows = new long[keys.size()][];
    for (int i = 0; i < rows.length; i++) {
      rows[i] = new long[] {i};
    }
    try (Batch data = batch("x", i64(allocator, rows))) {
      kv.batchPut(keys, partition, data, null);
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B34_listOnePartition(KvCalls.Form form, Backend backend) {
    try (TestSystem tq = deployment.fresh(backend)) {
      KvCalls kv = form.over(tq.kv());
      putTagged(kv, "test_partition", List.of("list_0", "list_1", "list_2"), 0);
      putTagged(kv, "other_partition", List.of("list_9"), 9);
      Map<String, Map<String, Map<String, Object>>> listed = kv.list("test_partition");
      assertThat(listed.keySet()).containsExactly("test_partition");
      Map<String, Map<String, Object>> keys = listed.get("test_partition");
      assertThat(keys.keySet()).containsExactly("list_0", "list_1", "list_2");
      assertThat(keys.values().stream().map(t -> t.get("id")).toList()).containsExactly(0L, 1L, 2L);
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B35_listAllPartitions(KvCalls.Form form, Backend backend) {
    try (TestSystem tq = deployment.fresh(backend)) {
      KvCalls kv = form.over(tq.kv());
      putTagged(kv, "test_partition0", List.of("list_0", "list_1", "list_2"), 0);
      putTagged(kv, "test_partition1", List.of("list_0", "list_1", "list_2"), 3);
      putTagged(kv, "test_partition2", List.of("list_3", "list_4", "list_5", "list_6"), 6);
      Map<String, Map<String, Map<String, Object>>> listed = kv.list(null);
      assertThat(listed.keySet())
          .containsExactlyInAnyOrder("test_partition0", "test_partition1", "test_partition2");
      assertThat(listed.get("test_partition0")).hasSize(3);
      assertThat(listed.get("test_partition1")).hasSize(3);
      assertThat(listed.get("test_partition2")).hasSize(4);
      assertThat(listed.get("test_partition0").get("list_1")).isEqualTo(Map.of("id", 1L));
      assertThat(listed.get("test_partition1").get("list_1")).isEqualTo(Map.of("id", 4L));
      assertThat(listed.get("test_partition2").values().stream().map(t -> t.get("id")).toList())
          .containsExactly(6L, 7L, 8L, 9L);
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B36_listMissingPartition(KvCalls.Form form, Backend backend) {
    try (TestSystem tq = deployment.fresh(backend)) {
      KvCalls kv = form.over(tq.kv());
      assertThat(kv.list("test_partition_empty")).isEmpty();
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B37_lowLevelPartitionsAppearInListings(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch data = batch("x", i64(allocator, new long[] {1}, new long[] {2}))) {
      KvCalls kv = form.over(tq.kv());
      tq.client().put(data, "lowlevel");
      Map<String, Map<String, Map<String, Object>>> listed = kv.list(null);
      assertThat(listed).containsEntry("lowlevel", Map.of());
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B38_clearOneKey(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "clear_partition";
    try (TestSystem tq = deployment.fresh(backend)) {
      KvCalls kv = form.over(tq.kv());
      putValues(kv, allocator, p, List.of("clear_single", "clear_other"));
      kv.batchPut(List.of("clear_single"), p, null, List.of(Map.of("id", "single")));
      kv.clear(List.of("clear_single"), p);
      Map<String, Map<String, Map<String, Object>>> listed = kv.list(p);
      assertThat(listed.keySet()).containsExactly(p);
      assertThat(listed.get(p).keySet()).containsExactly("clear_other");
      try (Batch read = kv.batchGet(List.of("clear_other"), p)) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{1}});
      }
      assertThatThrownBy(() -> kv.batchGet(List.of("clear_single"), p))
          .isInstanceOf(TqException.class);
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B39_clearSeveralKeys(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "clear_partition";
    List<String> keys = List.of("clear_multi_0", "clear_multi_1", "clear_multi_2", "clear_multi_3");
    try (TestSystem tq = deployment.fresh(backend)) {
      KvCalls kv = form.over(tq.kv());
      putValues(kv, allocator, p, keys);
      kv.clear(keys.subList(0, 2), p);
      assertThat(kv.list(p).get(p).keySet()).containsExactly("clear_multi_2", "clear_multi_3");
      try (Batch read = kv.batchGet(keys.subList(2, 4), p)) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{2}, {3}});
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B40_clearIsIdempotent(KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "idempotent_partition";
    List<String> keys = List.of("idempotent_0", "idempotent_1", "idempotent_2", "idempotent_3");
    try (TestSystem tq = deployment.fresh(backend)) {
      KvCalls kv = form.over(tq.kv());
      putValues(kv, allocator, p, keys);
      kv.clear(List.of("nonexistent_key_1", "nonexistent_key_2"), p);
      assertThat(kv.list(p).get(p)).hasSize(4);
      kv.clear(List.of("idempotent_0", "nonexistent_key_3"), p);
      assertThat(kv.list(p).get(p)).hasSize(3);
      kv.clear(List.of("idempotent_0", "nonexistent_key_4"), p);
      assertThat(kv.list(p).get(p).keySet())
          .containsExactly("idempotent_1", "idempotent_2", "idempotent_3");
      assertThatCode(() -> kv.clear(List.of("any_key"), "nonexistent_partition"))
          .doesNotThrowAnyException();
      assertThat(tq.client().getPartitionList()).doesNotContain("nonexistent_partition");
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B41_noLeakThroughRecycledIndexes(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Tensor one = Rows.vector(allocator, 1);
        Tensor two = Rows.vector(allocator, 2)) {
      KvCalls kv = form.over(tq.kv());
      kv.put("a", "clear_reuse_partition_1", Map.of("x", one), null);
      kv.clear(List.of("a"), "clear_reuse_partition_1");
      kv.put("b", "clear_reuse_partition_2", Map.of("x", two), null);
      BatchMeta fetched =
          tq.client()
              .getMeta(
                  GetMetadataRequest.fetch("clear_reuse_partition_1", List.of("x"), "new_task", 1));
      assertThat(fetched.size()).isZero();
      assertThat(fetched.isReady()).isFalse();
      assertThat(fetched.globalIndexes()).isEmpty();
      try (Batch read = kv.batchGet(List.of("b"), "clear_reuse_partition_2")) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{2}});
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B42_defaultColumnsAreTheIntersection(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "expand_partition";
    try (TestSystem tq = deployment.fresh(backend);
        Batch first =
            batch(
                "field_a",
                i64(allocator, new long[] {1}),
                "field_b",
                i64(allocator, new long[] {2}));
        Batch second =
            batch(
                "field_a",
                i64(allocator, new long[] {3}),
                "field_c",
                i64(allocator, new long[] {4}))) {
      KvCalls kv = form.over(tq.kv());
      kv.put("expand_0", p, first, null);
      kv.put("expand_1", p, second, null);
      try (Batch both = kv.batchGet(List.of("expand_0", "expand_1"), p)) {
        assertThat(both.fields()).containsExactly("field_a");
        assertThat(longRows(both.column("field_a"))).isDeepEqualTo(new long[][] {{1}, {3}});
      }
      try (Batch alone = kv.batchGet(List.of("expand_0"), p)) {
        assertThat(alone.fields()).containsExactlyInAnyOrder("field_a", "field_b");
      }
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B43_tagsOnlyNoData(KvCalls.Form form, Backend backend) {
    String p = "tags_only_partition";
    try (TestSystem tq = deployment.fresh(backend)) {
      KvCalls kv = form.over(tq.kv());
      kv.put("t_only", p, (Batch) null, Map.of("s", 1L));
      // Java has no FieldNotReadyException: "not ready" is ILLEGAL_STATE.
      assertThatThrownBy(() -> kv.batchGet(List.of("t_only"), p))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.ILLEGAL_STATE))
          .hasMessageContaining("not ready");
      assertThat(kv.list(p).get(p)).isEqualTo(Map.of("t_only", Map.of("s", 1L)));
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void B38_clearRemovesEveryStoredCellOfTheKeys(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    String p = "clear_cells";
    try (TestSystem tq = deployment.fresh(backend);
        Batch first =
            batch(
                "field_a",
                i64(allocator, new long[] {1}),
                "field_b",
                i64(allocator, new long[] {2}));
        Batch second =
            batch(
                "field_a",
                i64(allocator, new long[] {3}),
                "field_c",
                i64(allocator, new long[] {4}))) {
      KvCalls kv = form.over(tq.kv());
      kv.put("k0", p, first, null);
      kv.put("k1", p, second, null);
      kv.put("tags_only", p, (Batch) null, Map.of("t", 1L));
      long k0 = tq.client().resolveKeys(p, List.of("k0"), false).globalIndex(0);
      long k1 = tq.client().resolveKeys(p, List.of("k1"), false).globalIndex(0);
      kv.clear(List.of("k0", "k1", "tags_only"), p);
      assertThat(kv.list(p).get(p)).isEmpty();
      // Storage itself no longer holds any cell of the cleared keys, not only the common field.
      for (String field : List.of("field_a", "field_b", "field_c")) {
        for (long gi : new long[] {k0, k1}) {
          BatchMeta cell =
              BatchMeta.builder()
                  .globalIndexes(gi)
                  .partitionId(p)
                  .field(field, FieldSchema.regular(DType.INT64, 1))
                  .build();
          assertThatThrownBy(() -> tq.storage().get(cell, tq.allocator()).close())
              .as("%s of sample %d", field, gi)
              .isInstanceOf(TqException.class)
              .satisfies(
                  e ->
                      assertThat(((TqException) e).code())
                          .isIn(ErrorCode.NOT_FOUND, ErrorCode.UNKNOWN_FIELD));
        }
      }
    }
  }
}
