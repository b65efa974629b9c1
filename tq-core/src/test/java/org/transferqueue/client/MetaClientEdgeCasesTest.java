package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;
import static org.transferqueue.client.Rows.longRows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.controller.ConsumptionStatus;
import org.transferqueue.controller.FetchMode;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.ProductionStatus;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/** Client-api §4 C51, C59 and C64-C77: the low-level client at its edges. */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class MetaClientEdgeCasesTest {
  @Parameter Deployment deployment;

  static ErrorCode code(Throwable error) {
    return ((TqException) error).code();
  }

  @ParameterizedTest
  @EnumSource(MetaCalls.Form.class)
  void C51_putWithoutMetadataOrPartition(MetaCalls.Form form, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh();
        Batch data = batch("x", i64(allocator, new long[] {1}))) {
      MetaCalls calls = form.over(tq.client());
      assertThatThrownBy(() -> calls.put(data, (String) null))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("partition_id");
      assertThatThrownBy(() -> calls.put(data, BatchMeta.empty()))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("empty");
      assertThat(tq.client().getPartitionList()).isEmpty();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void C59_dtypeConflictIsRejectedAndLeavesNoTrace(Backend backend, BufferAllocator allocator) {
    String p = "conflict";
    try (TestSystem tq = deployment.fresh(backend);
        Batch ints = batch("f", i64(allocator, new long[] {1, 2}, new long[] {3, 4}));
        Batch floats =
            batch("f", Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {5, 6, 7, 8}, 2, 2))) {
      MetaClient client = tq.client();
      BatchMeta first = client.put(ints, p);
      BatchMeta others = client.getMeta(GetMetadataRequest.insert(p, List.of("f"), 2));
      assertThatThrownBy(() -> client.put(floats, others))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
      ProductionStatus status = client.getProductionStatus(p, List.of("f")).orElseThrow();
      assertThat(status.indexes().size()).isEqualTo(4);
      assertThat(status.produced().get(0).size()).as("no new cell produced").isEqualTo(2);
      for (long gi : others.globalIndexArray()) {
        assertThat(status.produced().get(0).contains(gi)).isFalse();
      }
      try (Batch read = client.getData(first)) {
        assertThat(read.column("f").kind()).isEqualTo(org.transferqueue.tensor.ColumnKind.DENSE);
        assertThat(longRows(read.column("f"))).isDeepEqualTo(new long[][] {{1, 2}, {3, 4}});
      }
    }
  }

  @ParameterizedTest
  @EnumSource(MetaCalls.Form.class)
  void C64_pollingReturnsEmptyAndConsumesNothing(MetaCalls.Form form, BufferAllocator allocator) {
    String p = "polling";
    try (TestSystem tq = deployment.fresh();
        Batch data = batch("x", i64(allocator, new long[] {1}, new long[] {2}))) {
      MetaCalls calls = form.over(tq.client());
      calls.put(data, p);
      BatchMeta fetched = calls.getMeta(GetMetadataRequest.fetch(p, List.of("x"), "t", 3));
      assertThat(fetched.size()).isZero();
      assertThat(fetched.isReady()).isFalse();
      ConsumptionStatus status = tq.client().getConsumptionStatus(p, "t").orElseThrow();
      assertThat(status.consumed().size()).isZero();
      assertThat(calls.getMeta(GetMetadataRequest.fetch(p, List.of("x"), "t", 2)).size())
          .isEqualTo(2);
    }
  }

  @Test
  void C65_nonPollingFetchTimesOutAndConsumesNothing(BufferAllocator allocator) {
    String p = "blocking";
    try (TestSystem tq =
            deployment.start(Systems.sysConfig(b -> b.controller(c -> c.pollingMode(false))));
        Batch data = batch("x", i64(allocator, new long[] {1}, new long[] {2}))) {
      MetaClient client = tq.client();
      client.put(data, p);
      GetMetadataRequest three =
          GetMetadataRequest.fetch(p, List.of("x"), "t", 3).withTimeout(Duration.ofMillis(100));
      assertThatThrownBy(() -> client.getMeta(three)).isInstanceOf(DeadlineExceededException.class);
      assertThatThrownBy(() -> KvCalls.join(client.getMetaAsync(three)))
          .isInstanceOf(DeadlineExceededException.class);
      assertThat(client.getConsumptionStatus(p, "t").orElseThrow().consumed().size()).isZero();
    }
  }

  @Test
  void C65_nonPollingFetchReturnsOnceEnoughSamplesAreProduced(BufferAllocator allocator) {
    String p = "blocking";
    try (TestSystem tq =
            deployment.start(Systems.sysConfig(b -> b.controller(c -> c.pollingMode(false))));
        Batch two = batch("x", i64(allocator, new long[] {1}, new long[] {2}));
        Batch third = batch("x", i64(allocator, new long[] {3}))) {
      MetaClient client = tq.client();
      client.put(two, p);
      CompletableFuture<BatchMeta> waiting =
          client.getMetaAsync(
              GetMetadataRequest.fetch(p, List.of("x"), "t", 3)
                  .withTimeout(Duration.ofSeconds(30)));
      // Other requests are served while the fetch waits.
      assertThat(client.getPartitionList()).containsExactly(p);
      assertThat(tq.kv().list(p)).containsKey(p);
      client.put(third, p);
      BatchMeta fetched = KvCalls.join(waiting);
      assertThat(fetched.size()).isEqualTo(3);
      try (Batch read = client.getData(fetched)) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{1}, {2}, {3}});
      }
    }
  }

  @Test
  void C66_fetchRequiresATaskAndModesAreTyped() {
    assertThatThrownBy(() -> GetMetadataRequest.fetch("p", List.of("x"), null, 1))
        .isInstanceOf(TqException.class)
        .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("task_name");
    assertThatThrownBy(() -> new GetMetadataRequest(null, "p", List.of("x"), "t", 1, null, null))
        .isInstanceOf(TqException.class)
        .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThat(FetchMode.values())
        .containsExactlyInAnyOrder(FetchMode.INSERT, FetchMode.FETCH, FetchMode.FORCE_FETCH);
  }

  @ParameterizedTest
  @EnumSource(MetaCalls.Form.class)
  void C67_forceFetchOfAMissingPartitionIsEmpty(MetaCalls.Form form) {
    try (TestSystem tq = deployment.fresh()) {
      MetaCalls calls = form.over(tq.client());
      BatchMeta meta = calls.getMeta(GetMetadataRequest.forceFetch("missing", List.of("x")));
      assertThat(meta.isEmpty()).isTrue();
      assertThat(tq.client().getPartitionList()).isEmpty();
    }
  }

  @ParameterizedTest
  @EnumSource(MetaCalls.Form.class)
  void C68_emptyInputsAreNoOps(MetaCalls.Form form) {
    try (TestSystem tq = deployment.fresh()) {
      MetaCalls calls = form.over(tq.client());
      try (Batch empty = calls.getData(BatchMeta.empty())) {
        assertThat(empty.rowCount()).isZero();
        assertThat(empty.fields()).isEmpty();
      }
      assertThatCode(() -> calls.clearSamples(BatchMeta.empty())).doesNotThrowAnyException();
      assertThatCode(() -> calls.clearPartition("never_created")).doesNotThrowAnyException();
      assertThat(tq.client().getPartitionList()).isEmpty();
    }
  }

  @Test
  void C69_partitionListInCreationOrder(BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh();
        Batch data = batch("x", i64(allocator, new long[] {1}))) {
      for (String p : List.of("p1", "p2", "p3")) {
        tq.client().put(data, p);
      }
      assertThat(tq.client().getPartitionList()).containsExactly("p1", "p2", "p3");
    }
  }

  @Test
  void C70_statusVectors(BufferAllocator allocator) {
    String p = "train_0";
    try (TestSystem tq = deployment.fresh();
        Batch data =
            batch(
                "prompt_ids",
                Rows.ones(allocator, DType.INT64, 32, 32),
                "attention_mask",
                Rows.ones(allocator, DType.INT64, 32, 32))) {
      MetaClient client = tq.client();
      BatchMeta slots =
          client.getMeta(GetMetadataRequest.insert(p, List.of("prompt_ids", "attention_mask"), 32));
      client.put(data, slots);
      ProductionStatus production =
          client.getProductionStatus(p, List.of("prompt_ids", "attention_mask")).orElseThrow();
      assertThat(production.indexes().toArray()).isEqualTo(range(32));
      assertThat(production.fields()).containsExactly("prompt_ids", "attention_mask");
      assertThat(production.allProduced()).isTrue();
      ConsumptionStatus before = client.getConsumptionStatus(p, "generate_sequences").orElseThrow();
      assertThat(before.indexes().toArray()).isEqualTo(range(32));
      assertThat(before.consumed().size()).isZero();
      assertThat(
              client
                  .getMeta(
                      GetMetadataRequest.fetch(p, List.of("prompt_ids"), "generate_sequences", 32))
                  .size())
          .isEqualTo(32);
      ConsumptionStatus after = client.getConsumptionStatus(p, "generate_sequences").orElseThrow();
      assertThat(after.allConsumed()).isTrue();
      for (int i = 0; i < 32; i++) {
        assertThat(after.isConsumed(i)).isTrue();
      }
    }
  }

  private static long[] range(int n) {
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      out[i] = i;
    }
    return out;
  }

  @Test
  void C71_statusOfUnknownThings(BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh();
        Batch data = batch("x", i64(allocator, new long[] {1}))) {
      MetaClient client = tq.client();
      client.put(data, "p");
      assertThat(client.getProductionStatus("p", List.of("nope"))).isEmpty();
      assertThat(client.checkProductionStatus("p", List.of("nope"))).isFalse();
      assertThat(client.getProductionStatus("missing", List.of("x"))).isEmpty();
      assertThat(client.checkProductionStatus("missing", List.of("x"))).isFalse();
      assertThat(client.getConsumptionStatus("missing", "t")).isEmpty();
      assertThat(client.checkConsumptionStatus("missing", "t")).isFalse();
      assertThatCode(() -> client.resetConsumption("missing", "t")).doesNotThrowAnyException();
      assertThatCode(() -> client.resetConsumption("missing", null)).doesNotThrowAnyException();
      assertThat(client.getPartitionList()).containsExactly("p");
    }
  }

  @Test
  void C72_keyAndIndexResolution() {
    try (TestSystem tq = deployment.fresh()) {
      MetaClient client = tq.client();
      BatchMeta created =
          client.resolveKeys("kv_test_partition", List.of("key_a", "key_b", "key_c"), true);
      assertThat(created.size()).isEqualTo(3);
      assertThat(client.getPartitionList()).contains("kv_test_partition");
      assertThat(client.resolveIndexes("kv_test_partition", created.globalIndexes()))
          .containsExactly("key_a", "key_b", "key_c");

      BatchMeta existing =
          client.resolveKeys(
              "existing", List.of("existing_key_1", "existing_key_2", "existing_key_3"), true);
      BatchMeta found =
          client.resolveKeys(
              "existing",
              List.of("existing_key_1", "nonexistent_key", "existing_key_3", "another_missing_key"),
              false);
      assertThat(found.globalIndexes())
          .containsExactly(existing.globalIndex(0), existing.globalIndex(2));
      assertThat(tq.kv().list("existing").get("existing").keySet())
          .containsExactly("existing_key_1", "existing_key_2", "existing_key_3");
    }
  }

  @Test
  void C73_indexResolutionErrors() {
    try (TestSystem tq = deployment.fresh()) {
      MetaClient client = tq.client();
      BatchMeta created = client.resolveKeys("p", List.of("k"), true);
      assertThat(client.resolveIndexes("p", List.of(created.globalIndex(0)))).containsExactly("k");
      assertThatThrownBy(() -> client.resolveIndexes("p", List.of()))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
      List<String> unknown = client.resolveIndexes("p", List.of(99L));
      assertThat(unknown).hasSize(1);
      assertThat(unknown.get(0)).isNull();
      assertThatThrownBy(() -> client.resolveIndexes("missing", List.of(0L)))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNKNOWN_PARTITION))
          .hasMessageContaining("no corresponding keys");
    }
  }

  @Test
  void C74_blockingApiFromAsynchronousCode(BufferAllocator allocator) throws Exception {
    String p = "from_async";
    try (TestSystem tq = deployment.fresh();
        Batch data = batch("x", i64(allocator, new long[] {1}, new long[] {2}));
        ExecutorService virtual = Executors.newVirtualThreadPerTaskExecutor()) {
      MetaClient client = tq.client();
      List<Object> seen = new ArrayList<>();
      CompletableFuture<Void> chain =
          client
              .putAsync(data, p)
              .thenApply(
                  written -> {
                    // Blocking calls inside a completion stage of an asynchronous call.
                    BatchMeta fetched =
                        client.getMeta(GetMetadataRequest.fetch(p, List.of("x"), "t", 2));
                    try (Batch read = client.getData(fetched)) {
                      seen.add(longRows(read.column("x")));
                    }
                    seen.add(client.checkConsumptionStatus(p, "t"));
                    seen.add(tq.kv().list(p).keySet());
                    return written;
                  })
              .thenCompose(written -> client.clearSamplesAsync(written));
      KvCalls.join(chain);
      assertThat(seen.get(0)).isEqualTo(new long[][] {{1}, {2}});
      assertThat(seen.get(1)).isEqualTo(true);
      assertThat(client.getProductionStatus(p, List.of("x")).orElseThrow().indexes().size())
          .isZero();
      // Blocking calls on a virtual thread, interleaved with asynchronous ones.
      virtual
          .submit(
              () -> {
                BatchMeta again = client.put(data, p);
                try (Batch read = KvCalls.join(client.getDataAsync(again))) {
                  assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{1}, {2}});
                }
                client.clearPartition(p);
                return null;
              })
          .get();
      assertThat(client.getPartitionList()).doesNotContain(p);
    }
  }

  @ParameterizedTest
  @EnumSource(KvCalls.Form.class)
  void C76_kvAndLowLevelInteroperate(KvCalls.Form form, BufferAllocator allocator) {
    String p = "interop";
    try (TestSystem tq = deployment.fresh();
        Batch data = batch("x", i64(allocator, new long[] {1}, new long[] {2}, new long[] {3}))) {
      KvCalls kv = form.over(tq.kv());
      kv.batchPut(List.of("u", "v", "w"), p, data, null);
      BatchMeta fetched = tq.client().getMeta(GetMetadataRequest.fetch(p, List.of("x"), "t", 3));
      assertThat(fetched.size()).isEqualTo(3);
      assertThat(tq.client().resolveIndexes(p, fetched.globalIndexes()))
          .containsExactly("u", "v", "w");
      try (Batch read = tq.client().getData(fetched)) {
        Eq.assertBatchEq(read, data);
      }
      assertThat(kv.list(p).get(p).keySet()).containsExactly("u", "v", "w");
    }
  }

  @ParameterizedTest
  @EnumSource(MetaCalls.Form.class)
  void C77_staleMetadataDoesNotWipeTags(MetaCalls.Form form, BufferAllocator allocator) {
    String p = "stale_tags";
    try (TestSystem tq = deployment.fresh();
        Batch column = batch("y", i64(allocator, new long[] {1}, new long[] {2}))) {
      MetaCalls calls = form.over(tq.client());
      BatchMeta stale = calls.getMeta(GetMetadataRequest.insert(p, List.of("y"), 2));
      BatchMeta other = calls.getMeta(GetMetadataRequest.forceFetch(p, List.of()));
      calls.setTags(other.withTags(List.of(Map.of("q", 1L), Map.of("q", 1L))));
      calls.put(column, stale);
      BatchMeta after = calls.getMeta(GetMetadataRequest.forceFetch(p, List.of("y")));
      assertThat(after.tags()).containsExactly(Map.of("q", 1L), Map.of("q", 1L));
      assertThat(after.isReady()).isTrue();
    }
  }
}
