package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.longRows;

import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Data-plane scenarios (data-plane §5.A, 5.B, 5.E, 5.J) end to end through the low-level client,
 * over SimpleStorage and MooncakeStore: what storage units and managers do, as a user sees it.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class DataPlaneScenariosTest {
  @Parameter Deployment deployment;

  private static final String P = "data_plane";

  @ParameterizedTest
  @EnumSource(Backend.class)
  void AS017_variableLengthCellsReadBackForASubset(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch data =
            Batch.builder()
                .add(
                    "seq",
                    Rows.jaggedF32(
                        allocator,
                        new float[] {-0.5f, -1.2f, -0.8f},
                        new float[] {-0.3f, -1.5f, -2.1f, -0.9f},
                        new float[] {-1.1f, -0.7f}))
                .add(
                    "mask",
                    Rows.jaggedF32(
                        allocator,
                        new float[] {1, 1, 1},
                        new float[] {1, 1, 1, 1},
                        new float[] {1, 1}))
                .build()) {
      BatchMeta written = tq.client().put(data, P);
      try (Batch read = tq.client().getData(written.selectSamples(0, 2))) {
        Eq.assertRowsEq("seq", read.column("seq"), 0, data.column("seq"), 0, 1);
        Eq.assertRowsEq("seq", read.column("seq"), 1, data.column("seq"), 2, 1);
        assertThat(Rows.rowShapes(read.column("mask"))).containsExactly(List.of(3L), List.of(2L));
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void AS018_AS019_AS127_stringsAndMixedKindsOfOneSample(
      Backend backend, BufferAllocator allocator) {
    String longText = "x".repeat(11_000);
    String unicode = "你好世界🌍🚀 émojis and ümläuts ".repeat(500);
    try (TestSystem tq = deployment.fresh(backend);
        Batch prompts =
            Batch.builder()
                .objects(
                    "prompt",
                    List.of(
                        "Hello world!",
                        "This is a longer sentence for testing",
                        "Test case",
                        longText,
                        unicode))
                .build();
        Batch single =
            Batch.builder()
                .objects("prompt", List.of("Hello world!"))
                .dense("mask", Rows.i64(allocator, new long[] {1, 1, 1}))
                .build()) {
      BatchMeta many = tq.client().put(prompts, P);
      BatchMeta one = tq.client().put(single, "single");
      try (Batch read = tq.client().getData(many);
          Batch readOne = tq.client().getData(one)) {
        Eq.assertBatchEq(read, prompts);
        assertThat(((ObjectColumn) readOne.column("prompt")).get(0)).isEqualTo("Hello world!");
        assertThat(longRows(readOne.column("mask"))).isDeepEqualTo(new long[][] {{1, 1, 1}});
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void AS020_clearingASubsetKeepsTheRest(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch data =
            batch(
                "log_probs",
                Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1, 2, 3}, 3, 1))) {
      BatchMeta written = tq.client().put(data, P);
      tq.client().clearSamples(written.selectSamples(0, 2));
      try (Batch read = tq.client().getData(written.selectSamples(1))) {
        assertThat(Rows.doubleRows(read.column("log_probs"))).isDeepEqualTo(new double[][] {{2.0}});
      }
      // The metadata of the cleared sample names a sample that no longer exists.
      assertThatThrownBy(() -> tq.client().getData(written.selectSamples(0)).close())
          .isInstanceOf(StorageException.class)
          .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.STALE_METADATA));
      assertThat(tq.client().getMeta(GetMetadataRequest.forceFetch(P, List.of("log_probs"))).size())
          .isEqualTo(1);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void AS057_readsFollowTheMetadataOrderAcrossUnits(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch data =
            batch("f", Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {0, 1, 2, 3}, 4, 1))) {
      BatchMeta written = tq.client().put(data, P);
      try (Batch read = tq.client().getData(written.reorder(3, 0, 1, 2))) {
        assertThat(Rows.doubleRows(read.column("f")))
            .isDeepEqualTo(new double[][] {{3}, {0}, {1}, {2}});
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void AS062_batchAndMetadataSizesMustMatch(Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch three =
            batch("x", Rows.i64(allocator, new long[] {1}, new long[] {2}, new long[] {3}))) {
      BatchMeta two = tq.client().getMeta(GetMetadataRequest.insert(P, List.of("x"), 2));
      assertThatThrownBy(() -> tq.client().put(three, two))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.SHAPE_MISMATCH))
          .hasMessageContaining("3")
          .hasMessageContaining("2");
      assertThat(tq.client().checkProductionStatus(P, List.of("x"))).isFalse();
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void AS124_AS125_emptyShapesSpecialValuesAndDtypes(Backend backend, BufferAllocator allocator) {
    Batch.Builder builder =
        Batch.builder()
            .dense("empty", Tensor.zeros(allocator, DType.FLOAT32, 2, 3, 0))
            .dense(
                "special",
                Tensor.ofFloats(
                    allocator,
                    DType.FLOAT32,
                    new float[] {
                      Float.POSITIVE_INFINITY,
                      Float.NEGATIVE_INFINITY,
                      Float.NaN,
                      0f,
                      -0.0f,
                      1e-10f,
                      0f,
                      0f,
                      0f,
                      0f,
                      0f,
                      0f
                    },
                    2,
                    2,
                    3));
    for (DType dtype :
        List.of(
            DType.FLOAT16,
            DType.FLOAT32,
            DType.FLOAT64,
            DType.INT8,
            DType.INT16,
            DType.INT32,
            DType.INT64,
            DType.BOOL,
            DType.UINT8,
            DType.BFLOAT16)) {
      Tensor tensor = Tensor.zeros(allocator, dtype, 2, 2, 3);
      for (long i = 0; i < tensor.numel(); i++) {
        tensor.setDouble(i, element(dtype, i));
      }
      builder.dense("t_" + dtype.torchName(), tensor);
    }
    try (TestSystem tq = deployment.fresh(backend);
        Batch data = builder.build()) {
      BatchMeta written = tq.client().put(data, P);
      try (Batch read = tq.client().getData(written)) {
        Eq.assertBatchEq(read, data);
        for (String field : data.fields()) {
          assertThat(read.column(field).kind()).as(field).isEqualTo(ColumnKind.DENSE);
        }
        Tensor special = (Tensor) Eq.rowValue(read.column("special"), 0);
        assertThat(Float.floatToRawIntBits(special.getFloat(4)))
            .as("-0.0 keeps its sign")
            .isEqualTo(Float.floatToRawIntBits(-0.0f));
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void AS132_integerRangeOfObjectValues(Backend backend) {
    BigInteger u64Max = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
    BigInteger twoTo63 = BigInteger.ONE.shiftLeft(63);
    try (TestSystem tq = deployment.fresh(backend);
        Batch data =
            Batch.builder().objects("n", List.of(u64Max, twoTo63, Long.MIN_VALUE, -1L)).build()) {
      BatchMeta written = tq.client().put(data, P);
      try (Batch read = tq.client().getData(written)) {
        assertThat(((ObjectColumn) read.column("n")).values())
            .containsExactly(u64Max, twoTo63, Long.MIN_VALUE, -1L);
      }
    }
    assertThatThrownBy(
            () -> Batch.builder().objects("n", List.of(BigInteger.ONE.shiftLeft(64))).build())
        .isInstanceOf(TqException.class)
        .hasMessageContaining(BigInteger.ONE.shiftLeft(64).toString());
  }

  /** A value of element {@code i} that {@code dtype} holds exactly, negative where it can be. */
  private static double element(DType dtype, long i) {
    return switch (dtype) {
      case BOOL -> i % 2;
      case UINT8 -> 250 + i % 6;
      default -> dtype.isFloatingPoint() ? i * 0.5 - 3 : i - 6;
    };
  }
}
