package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;
import static org.transferqueue.client.Rows.longRows;

import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.ProductionStatus;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * Bad input through both client APIs over both backends: every rejection is a typed error, and the
 * data already stored stays readable and unchanged.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class BadInputTest {
  @Parameter Deployment deployment;

  private static final String P = "bad";

  static ErrorCode code(Throwable error) {
    return ((TqException) error).code();
  }

  /** Stores {@code x = [[1,2],[3,4]]} and checks it is still there after each bad call. */
  private static final class Stored implements AutoCloseable {
    final Batch data;
    final BatchMeta meta;
    final MetaClient client;

    Stored(MetaClient client, BufferAllocator allocator) {
      this.client = client;
      this.data = batch("x", i64(allocator, new long[] {1, 2}, new long[] {3, 4}));
      this.meta = client.put(data, P);
    }

    void assertUnchanged() {
      ProductionStatus status = client.getProductionStatus(P, List.of("x")).orElseThrow();
      for (long gi : meta.globalIndexArray()) {
        assertThat(status.produced().get(0).contains(gi)).as("sample %d produced", gi).isTrue();
      }
      try (Batch read = client.getData(meta.selectFields(List.of("x")))) {
        Eq.assertBatchEq(read, data);
      }
    }

    @Override
    public void close() {
      data.close();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectWrongRowCountsWithoutWriting(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Stored stored = new Stored(tq.client(), allocator);
        Batch three =
            batch("x", i64(allocator, new long[] {7, 7}, new long[] {8, 8}, new long[] {9, 9}))) {
      assertThatThrownBy(() -> tq.client().put(three, stored.meta))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.SHAPE_MISMATCH))
          .hasMessageContaining("3")
          .hasMessageContaining("2");
      assertThatThrownBy(() -> tq.kv().batchPut(List.of("a", "b"), P, three, null))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.SHAPE_MISMATCH));
      stored.assertUnchanged();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectReadsOfCellsNeverWritten(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Stored stored = new Stored(tq.client(), allocator)) {
      BatchMeta absentField =
          stored
              .meta
              .selectFields(List.of())
              .addFields(Map.of("nope", FieldSchema.regular(DType.INT64, 2)), true);
      // A field the partition does not have, on every backend.
      assertThatThrownBy(() -> tq.client().getData(absentField))
          .isInstanceOf(StorageException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNKNOWN_FIELD))
          .hasMessageContaining("nope")
          .hasMessageContaining("partition '" + P + "'");
      BatchMeta unwritten = tq.client().getMeta(GetMetadataRequest.insert(P, List.of("x"), 1));
      assertThatThrownBy(
              () ->
                  tq.client()
                      .getData(
                          unwritten
                              .selectFields(List.of())
                              .addFields(Map.of("x", FieldSchema.regular(DType.INT64, 2)), true)))
          // A field the partition has, whose cell for the new sample was never written.
          .isInstanceOf(StorageException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.NOT_FOUND));
      stored.assertUnchanged();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectUnknownPartitionsAndKeys(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Stored stored = new Stored(tq.client(), allocator)) {
      assertThat(
              tq.client().getMeta(GetMetadataRequest.fetch("nowhere", List.of("x"), "t", 1)).size())
          .isZero();
      assertThatThrownBy(() -> tq.kv().batchGet(List.of("k"), "nowhere", null))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNKNOWN_KEY));
      assertThatThrownBy(() -> tq.client().resolveIndexes("nowhere", List.of(0L)))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNKNOWN_PARTITION));
      assertThat(tq.client().getPartitionList()).containsExactly(P);
      stored.assertUnchanged();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRefuseEmptyPartitionIdsFieldNamesAndTaskNamesWhenAnyCallTakesThem(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Stored stored = new Stored(tq.client(), allocator)) {
      MetaClient client = tq.client();
      KvApi kv = tq.kv();
      List<ThrowingCallable> emptyPartition =
          List.of(
              () -> kv.put("k", "", Map.of("x", 1L), null),
              () -> kv.batchGet(List.of("k"), "", null),
              () -> kv.list(""),
              () -> client.getProductionStatus("", List.of("x")),
              () -> client.getConsumptionStatus("", "t"),
              () -> client.resetConsumption("", "t"),
              () -> client.clearPartition(""),
              () -> client.resolveIndexes("", List.of(0L)),
              () -> tq.controller().partitionStatistics(""));
      for (ThrowingCallable call : emptyPartition) {
        assertInvalid(call, "partition_id is empty");
      }
      List<ThrowingCallable> emptyField =
          List.of(
              () -> client.getProductionStatus(P, List.of("x", "")),
              () -> client.getMeta(GetMetadataRequest.forceFetch(P, List.of(""))),
              () -> kv.batchGet(List.of("k"), P, List.of("")));
      for (ThrowingCallable call : emptyField) {
        assertInvalid(call, "field name at position");
      }
      // An empty task name used to be registered by a status query and show in the statistics.
      List<ThrowingCallable> emptyTask =
          List.of(
              () -> client.getConsumptionStatus(P, ""),
              () -> client.resetConsumption(P, ""),
              () -> tq.controller().scanReady(P, List.of("x"), ""),
              () -> client.getMeta(GetMetadataRequest.fetch(P, List.of("x"), "", 1)));
      for (ThrowingCallable call : emptyTask) {
        assertInvalid(call, "task_name is empty");
      }
      assertThat(tq.controller().partitionStatistics(P).orElseThrow().consumedPerTask()).isEmpty();
      assertThat(client.getPartitionList()).containsExactly(P);
      stored.assertUnchanged();
    }
  }

  private static void assertInvalid(ThrowingCallable call, String message) {
    assertThatThrownBy(call)
        .as(message)
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining(message);
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectADtypeConflictOnStoredSamples(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Stored stored = new Stored(tq.client(), allocator);
        Batch floats =
            batch("x", Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {5, 6, 7, 8}, 2, 2));
        Batch objects = Batch.builder().objects("x", List.of("a", "b")).build()) {
      assertThatThrownBy(() -> tq.client().put(floats, stored.meta))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
      assertThatThrownBy(() -> tq.client().put(objects, stored.meta))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
      stored.assertUnchanged();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectADtypeConflictThroughTheKeyValueApi(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Tensor ints = Rows.vector(allocator, 1, 2);
        Tensor floats = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {5, 6}, 2)) {
      KvApi kv = tq.kv();
      kv.put("k", P, Map.of("x", ints), Map.of("v", 1L));
      assertThatThrownBy(() -> kv.put("fresh", P, Map.of("x", floats), null))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
      assertThat(kv.list(P).get(P).keySet())
          .as("the rejected new key is gone")
          .containsExactly("k");
      assertThatThrownBy(() -> kv.put("k", P, Map.of("x", floats), null))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
      assertThat(kv.list(P).get(P)).isEqualTo(Map.of("k", Map.of("v", 1L)));
      try (Batch read = kv.batchGet(List.of("k"), P, null)) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{1, 2}});
      }
    }
  }

  @Test
  void shouldRejectAPutBeyondCapacityAndKeepWhatIsStored(BufferAllocator allocator) {
    try (TestSystem tq =
            deployment.start(
                Systems.sysConfig(
                    b ->
                        b.backend(
                            backend ->
                                backend.simpleStorage(
                                    s -> s.numDataStorageUnits(2).totalStorageSize(4L)))));
        Stored stored = new Stored(tq.client(), allocator);
        Batch three =
            batch("x", i64(allocator, new long[] {7, 7}, new long[] {8, 8}, new long[] {9, 9}))) {
      assertThatThrownBy(() -> tq.client().put(three, P))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.CAPACITY_EXCEEDED));
      stored.assertUnchanged();
      assertThat(tq.client().checkProductionStatus(P, List.of("x")))
          .as("the rejected put left no unwritten sample behind")
          .isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectADtypeConflictOnAFieldSomeKeysHave(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Tensor ints = Rows.vector(allocator, 1, 2);
        Batch floats =
            batch("x", Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {5, 6, 7, 8}, 2, 2))) {
      KvApi kv = tq.kv();
      kv.put("has_x", P, Map.of("x", ints), null);
      kv.put("no_x", P, (Batch) null, Map.of("t", 1L));
      assertThatThrownBy(() -> kv.batchPut(List.of("has_x", "no_x"), P, floats, null))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
      assertThat(tq.client().checkProductionStatus(P, List.of("x"))).isFalse();
      assertThat(kv.list(P).get(P).keySet()).containsExactly("has_x", "no_x");
      try (Batch read = kv.batchGet(List.of("has_x"), P, null)) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{1, 2}});
      }
    }
  }
}
