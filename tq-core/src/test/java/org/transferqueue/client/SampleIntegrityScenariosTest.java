package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;
import static org.transferqueue.client.Rows.longRows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * What is read is what was written for that sample: metadata kept from before a clear never reaches
 * the sample that reuses an index, a write through it never changes live data, and the kind a
 * producer puts is the kind a consumer gets, on both backends, embedded and over loopback.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class SampleIntegrityScenariosTest {
  @Parameter Deployment deployment;

  private static void assertStale(ThrowingRead call) {
    assertThatThrownBy(call::run)
        .isInstanceOf(TqException.class)
        .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.STALE_METADATA));
  }

  @FunctionalInterface
  private interface ThrowingRead {
    void run() throws Exception;
  }

  private static long[][] read(TestSystem tq, BatchMeta meta, String field) {
    try (Batch rows = tq.client().getData(meta.selectFields(List.of(field)))) {
      return longRows(rows.column(field));
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRefuseAReadThroughMetadataFromBeforeAClearWhenTheIndexWasReused(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch a = batch("x", i64(allocator, new long[] {1, 1}, new long[] {2, 2}));
        Batch b = batch("x", i64(allocator, new long[] {7, 7}, new long[] {8, 8}))) {
      BatchMeta written = tq.client().put(a, "A");
      tq.client().clearPartition("A");
      BatchMeta reused = tq.client().put(b, "B");
      assertThat(reused.globalIndexes())
          .containsExactlyInAnyOrderElementsOf(written.globalIndexes());

      assertStale(() -> tq.client().getData(written).close());
      assertThat(read(tq, reused, "x")).isDeepEqualTo(new long[][] {{7, 7}, {8, 8}});
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRefuseAReadThroughTheMetadataOfAClearedKeyWhoseIndexAnotherKeyReuses(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch first = batch("x", i64(allocator, new long[] {1, 1}));
        Batch second = batch("x", i64(allocator, new long[] {2, 2}))) {
      tq.kv().put("k1", "kv", first, null);
      BatchMeta k1 = tq.client().resolveKeys("kv", List.of("k1"), false);
      tq.kv().clear(List.of("k1"), "kv");
      tq.kv().put("k2", "kv", second, null);
      BatchMeta k2 = tq.client().resolveKeys("kv", List.of("k2"), false);
      assertThat(k2.globalIndexes()).isEqualTo(k1.globalIndexes());

      assertStale(() -> tq.client().getData(k1).close());
      try (Batch rows = tq.kv().batchGet(List.of("k2"), "kv", null)) {
        assertThat(longRows(rows.column("x"))).isDeepEqualTo(new long[][] {{2, 2}});
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRefuseAReadThroughAKeyValueDescriptorOfAKeyThatWasClearedAndWrittenAgain(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch first = batch("x", i64(allocator, new long[] {1, 1}));
        Batch again = batch("x", i64(allocator, new long[] {2, 2}))) {
      KvBatchMeta before = tq.kv().put("k", "kv", first, null);
      tq.kv().clear(List.of("k"), "kv");
      KvBatchMeta after = tq.kv().put("k", "kv", again, null);

      assertStale(() -> tq.kv().get(before, null).close());
      try (Batch rows = tq.kv().get(after, null)) {
        assertThat(longRows(rows.column("x"))).isDeepEqualTo(new long[][] {{2, 2}});
      }
      // Created again on a fresh index of the same generation: still another sample.
      tq.kv().clear(List.of("k"), "kv");
      tq.kv().put("filler", "kv", first, null);
      KvBatchMeta fresh = tq.kv().put("k", "kv", again, null);
      assertThat(fresh.globalIndexes()).isNotEqualTo(after.globalIndexes());
      assertStale(() -> tq.kv().get(after, null).close());
      KvBatchMeta byHand = KvBatchMeta.of(List.of("k"), List.of(Map.of()), "kv", null);
      try (Batch rows = tq.kv().get(byHand, null)) {
        assertThat(longRows(rows.column("x")))
            .as("keys alone")
            .isDeepEqualTo(new long[][] {{2, 2}});
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRefuseAPutThroughStaleMetadataAndLeaveTheSampleThatReusesTheIndexUnchanged(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch a = batch("x", i64(allocator, new long[] {1, 1}, new long[] {2, 2}));
        Batch b = batch("x", i64(allocator, new long[] {7, 7}, new long[] {8, 8}));
        Batch sameSize = batch("x", i64(allocator, new long[] {5, 5}, new long[] {6, 6}));
        Batch otherSize = batch("x", i64(allocator, new long[] {5, 5, 5}, new long[] {6, 6, 6}))) {
      BatchMeta written = tq.client().put(a, "A");
      tq.client().clearPartition("A");
      BatchMeta reused = tq.client().put(b, "B");

      assertStale(() -> tq.client().put(sameSize, written));
      assertStale(() -> tq.client().put(otherSize, written));
      assertThat(read(tq, reused, "x")).isDeepEqualTo(new long[][] {{7, 7}, {8, 8}});
      assertThat(tq.client().getMeta(GetMetadataRequest.forceFetch("B", List.of("x"))).size())
          .isEqualTo(2);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldIgnoreAClearThroughStaleMetadata(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch a = batch("x", i64(allocator, new long[] {1}, new long[] {2}));
        Batch b = batch("x", i64(allocator, new long[] {7}, new long[] {8}))) {
      BatchMeta written = tq.client().put(a, "P");
      tq.client().clearSamples(written);
      BatchMeta reused = tq.client().put(b, "P");
      assertThat(reused.globalIndexes())
          .containsExactlyInAnyOrderElementsOf(written.globalIndexes());

      tq.client().clearSamples(written);

      assertThat(read(tq, reused, "x")).isDeepEqualTo(new long[][] {{7}, {8}});
      assertThat(tq.client().getMeta(GetMetadataRequest.forceFetch("P", List.of("x"))).size())
          .isEqualTo(2);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldReadAJaggedColumnBackJaggedAfterAnotherSampleOfThePartitionIsCleared(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch data =
            Batch.builder()
                .add(
                    "seq",
                    Rows.jaggedI64(allocator, new long[] {2}, new long[] {1, 2}, new long[] {3, 4}))
                .build();
        Batch longer =
            Batch.builder()
                .add("seq", Rows.jaggedI64(allocator, new long[] {3}, new long[] {5, 6, 7}))
                .build()) {
      BatchMeta same = tq.client().put(data, "P");
      BatchMeta other = tq.client().put(longer, "P");
      tq.client().clearSamples(other);

      BatchMeta fetched = tq.client().getMeta(GetMetadataRequest.forceFetch("P", List.of("seq")));
      try (Batch rows = tq.client().getData(fetched)) {
        assertThat(rows.column("seq").kind()).isEqualTo(ColumnKind.JAGGED);
        assertThat(longRows(rows.column("seq"))).isDeepEqualTo(new long[][] {{1, 2}, {3, 4}});
      }
      try (Batch rows = tq.client().getData(same)) {
        assertThat(rows.column("seq").kind()).isEqualTo(ColumnKind.JAGGED);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldReadADenseKeyBackDenseAfterAnotherKeyOfTheFieldGotAnotherShape(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch three = batch("x", i64(allocator, new long[] {1, 2, 3}));
        Batch four = batch("x", i64(allocator, new long[] {4, 5, 6, 7}))) {
      tq.kv().put("short", "kv", three, null);
      tq.kv().put("long", "kv", four, null);
      try (Batch rows = tq.kv().batchGet(List.of("short"), "kv", null)) {
        assertThat(rows.column("x").kind()).isEqualTo(ColumnKind.DENSE);
        assertThat(longRows(rows.column("x"))).isDeepEqualTo(new long[][] {{1, 2, 3}});
      }
      try (Batch rows = tq.kv().batchGet(List.of("short", "long"), "kv", null)) {
        assertThat(rows.column("x").kind()).isEqualTo(ColumnKind.JAGGED);
        assertThat(longRows(rows.column("x")))
            .isDeepEqualTo(new long[][] {{1, 2, 3}, {4, 5, 6, 7}});
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRemoveAKeyThatHasOnlyTagsAndAPartitionOfInsertedSamples(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend)) {
      tq.kv().put("tagged", "kv", (Batch) null, Map.of("status", "running"));
      tq.kv().clear(List.of("tagged"), "kv");
      assertThat(tq.kv().list("kv")).isEqualTo(Map.of("kv", Map.of()));

      tq.client().getMeta(GetMetadataRequest.insert("inserted", List.of("x"), 3));
      tq.client().clearPartition("inserted");
      assertThat(tq.client().getPartitionList()).doesNotContain("inserted");
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldReadTheNewRowsThroughTheFirstPutsMetadataAfterTheFieldWasRewrittenWithAnotherShape(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch narrow = batch("x", i64(allocator, new long[] {1, 2}, new long[] {3, 4}));
        Batch wide = batch("x", i64(allocator, new long[] {5, 6, 7}, new long[] {8, 9, 10}))) {
      BatchMeta first = tq.client().put(narrow, "P");
      tq.client().put(wide, first);

      assertThat(read(tq, first, "x")).isDeepEqualTo(new long[][] {{5, 6, 7}, {8, 9, 10}});
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldLetConcurrentPutsOfOneKeyAllSucceedWithTheLastWriterWinning(
      Backend backend, BufferAllocator allocator) throws Exception {
    int writers = 3;
    int rounds = 40;
    try (TestSystem tq = deployment.fresh(backend);
        Batch seed = batch("x", i64(allocator, new long[] {0, 0, 0, 0}))) {
      tq.kv().put("shared", "kv", seed, null);
      List<Batch> values = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        long v = w + 1;
        values.add(batch("x", i64(allocator, new long[] {v, v, v, v})));
      }
      ExecutorService pool = Executors.newFixedThreadPool(writers);
      try {
        for (int round = 0; round < rounds; round++) {
          CountDownLatch start = new CountDownLatch(1);
          List<CompletableFuture<Void>> puts = new ArrayList<>();
          for (Batch value : values) {
            puts.add(
                CompletableFuture.runAsync(
                    () -> {
                      awaitQuietly(start);
                      tq.kv().put("shared", "kv", value, null);
                    },
                    pool));
          }
          start.countDown();
          CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
          try (Batch rows = tq.kv().batchGet(List.of("shared"), "kv", null)) {
            long[] row = longRows(rows.column("x"))[0];
            assertThat(row[0]).isBetween(1L, (long) writers);
            assertThat(row).as("no torn value").containsOnly(row[0]);
          }
        }
      } finally {
        pool.shutdownNow();
        values.forEach(Batch::close);
      }
    }
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      if (!latch.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("start signal not given");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRefuseAWriteOfAnOlderGenerationInStorageItself(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch a = batch("x", Tensor.ofLongs(allocator, DType.INT64, new long[] {1}, 1, 1));
        Batch b = batch("x", Tensor.ofLongs(allocator, DType.INT64, new long[] {2}, 1, 1));
        Batch stale = batch("x", Tensor.ofLongs(allocator, DType.INT64, new long[] {3}, 1, 1))) {
      BatchMeta old = tq.client().put(a, "P");
      tq.client().clearSamples(old);
      BatchMeta fresh = tq.client().put(b, "P");
      assertThat(fresh.generation(0)).isEqualTo(old.generation(0) + 1);
      // The storage itself refuses the older generation: the put never reaches the controller.
      assertStale(() -> tq.storage().put(stale, old));
      assertThat(read(tq, fresh, "x")).isDeepEqualTo(new long[][] {{2}});
    }
  }
}
