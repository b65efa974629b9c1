package org.transferqueue.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;

@ExtendWith(LeakCheckExtension.class)
class BatchTest {

  private static Batch sample(BufferAllocator allocator, int first) {
    Tensor ids =
        Tensor.ofLongs(
            allocator, DType.INT64, new long[] {first, first + 1, first + 2, first + 3}, 2, 2);
    Tensor a = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {first}, 1);
    Tensor b = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1, 2, 3}, 3);
    try (a;
        b) {
      return Batch.builder()
          .dense("ids", ids)
          .add("resp", JaggedColumn.copyOf(allocator, DType.FLOAT32, List.of(a, b)))
          .objects("prompt", List.of("p" + first, "q" + first))
          .build();
    }
  }

  @Test
  void shouldKeepFieldOrderAndRowCount(BufferAllocator allocator) {
    try (Batch batch = sample(allocator, 0)) {
      assertThat(batch.rowCount()).isEqualTo(2);
      assertThat(batch.fields()).containsExactly("ids", "resp", "prompt");
      assertThat(batch.column("resp").kind()).isEqualTo(ColumnKind.JAGGED);
      assertThat(batch.hasField("ids")).isTrue();
      assertThatThrownBy(() -> batch.column("nope"))
          .isInstanceOfSatisfying(
              TqException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_FIELD);
                assertThat(e.getMessage()).contains("nope").contains("ids");
              });
    }
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  void shouldRejectRowCountMismatchAndCloseColumns(BufferAllocator allocator) {
    Batch.Builder builder =
        Batch.builder()
            .dense("a", Tensor.zeros(allocator, DType.FLOAT32, 3))
            .dense("b", Tensor.zeros(allocator, DType.FLOAT32, 4));
    assertThatThrownBy(builder::build)
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.SHAPE_MISMATCH);
              assertThat(e.getMessage())
                  .contains("'b'")
                  .contains("4 rows")
                  .contains("'a'")
                  .contains("3");
            });
    assertThat(allocator.outstandingBuffers()).isZero();
    assertThatThrownBy(() -> Batch.builder().rowCount(2).objects("x", List.of("only one")).build())
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.getMessage()).contains("rowCount has 2"));
  }

  @Test
  void shouldRejectDuplicateField(BufferAllocator allocator) {
    Batch.Builder builder = Batch.builder().dense("a", Tensor.zeros(allocator, DType.INT8, 1));
    assertThatThrownBy(() -> builder.dense("a", Tensor.zeros(allocator, DType.INT8, 1)))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DUPLICATE_KEY));
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  void shouldBuildEmptyBatchWithExplicitRowCount() {
    try (Batch batch = Batch.builder().rowCount(5).build()) {
      assertThat(batch.rowCount()).isEqualTo(5);
      assertThat(batch.fields()).isEmpty();
    }
  }

  @Test
  void shouldSelectRowsIntoIndependentMemory(BufferAllocator allocator) {
    try (Batch batch = sample(allocator, 0);
        Batch selected = batch.selectRows(allocator, new int[] {1, 1, 0})) {
      assertThat(selected.rowCount()).isEqualTo(3);
      DenseColumn ids = (DenseColumn) selected.column("ids");
      assertThat(ids.tensor().toLongArray()).containsExactly(2, 3, 2, 3, 0, 1);
      assertThat(((JaggedColumn) selected.column("resp")).row(2).toFloatArray())
          .containsExactly(0f);
      assertThat(((ObjectColumn) selected.column("prompt")).values())
          .containsExactly("q0", "q0", "p0");
      ids.tensor().setLong(0, 99);
      assertThat(((DenseColumn) batch.column("ids")).tensor().getLong(2)).isEqualTo(2);
      assertThatThrownBy(() -> batch.selectRows(allocator, new int[] {2}))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.getMessage()).contains("position 2"));
    }
  }

  @Test
  void shouldSelectFieldsAsView(BufferAllocator allocator) {
    try (Batch batch = sample(allocator, 0)) {
      Batch view = batch.selectFields("prompt", "ids");
      assertThat(view.fields()).containsExactly("prompt", "ids");
      assertThat(view.column("ids")).isSameAs(batch.column("ids"));
      view.close();
      assertThat(((DenseColumn) batch.column("ids")).tensor().getLong(0)).isZero();
      assertThatThrownBy(() -> batch.selectFields("ids", "ids"))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DUPLICATE_KEY));
      assertThatThrownBy(() -> batch.selectFields("x"))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_FIELD));
    }
  }

  @Test
  void shouldConcatAndChunkBackToEqualBatches(BufferAllocator allocator) {
    try (Batch first = sample(allocator, 0);
        Batch second = sample(allocator, 10);
        Batch joined = Batch.concat(allocator, List.of(first, second))) {
      assertThat(joined.rowCount()).isEqualTo(4);
      assertThat(joined.column("ids").kind()).isEqualTo(ColumnKind.DENSE);
      assertThat(joined.column("resp").kind()).isEqualTo(ColumnKind.JAGGED);
      List<Batch> chunks = joined.chunk(2);
      assertThat(chunks).hasSize(2);
      assertThat(chunks.get(0).contentEquals(first)).isTrue();
      assertThat(chunks.get(1).contentEquals(second)).isTrue();
      assertThat(chunks.get(0).contentEquals(second)).isFalse();
    }
  }

  @Test
  void shouldChunkIntoNearlyEqualParts(BufferAllocator allocator) {
    long[] values = new long[10];
    for (int i = 0; i < values.length; i++) {
      values[i] = i;
    }
    try (Batch batch =
        Batch.builder().dense("x", Tensor.ofLongs(allocator, DType.INT64, values, 10)).build()) {
      List<Batch> chunks = batch.chunk(3);
      assertThat(chunks).extracting(Batch::rowCount).containsExactly(4, 3, 3);
      assertThat(((DenseColumn) chunks.get(2).column("x")).tensor().toLongArray())
          .containsExactly(7, 8, 9);
      assertThat(batch.chunk(12)).extracting(Batch::rowCount).containsOnly(1, 0).hasSize(12);
      assertThatThrownBy(() -> batch.chunk(0))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.getMessage()).contains("chunks=0"));
    }
  }

  @Test
  void shouldConcatDenseColumnsOfDifferentRowShapesAsJagged(BufferAllocator allocator) {
    try (Batch a = Batch.builder().dense("x", Tensor.zeros(allocator, DType.INT32, 1, 2)).build();
        Batch b = Batch.builder().dense("x", Tensor.zeros(allocator, DType.INT32, 2, 3)).build();
        Batch joined = Batch.concat(allocator, List.of(a, b))) {
      JaggedColumn x = (JaggedColumn) joined.column("x");
      assertThat(x.rowShape(0)).containsExactly(2);
      assertThat(x.rowShape(2)).containsExactly(3);
    }
  }

  @Test
  void shouldRejectConcatOfConflictingColumns(BufferAllocator allocator) {
    try (Batch a = Batch.builder().dense("x", Tensor.zeros(allocator, DType.INT32, 1)).build();
        Batch b = Batch.builder().dense("x", Tensor.zeros(allocator, DType.INT64, 1)).build();
        Batch c = Batch.builder().objects("x", List.of("s")).build();
        Batch d = Batch.builder().objects("y", List.of("s")).build()) {
      assertThatThrownBy(() -> Batch.concat(allocator, List.of(a, b)))
          .isInstanceOfSatisfying(
              TqException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_CONFLICT);
                assertThat(e.getMessage()).contains("'x'").contains("int32").contains("int64");
              });
      assertThatThrownBy(() -> Batch.concat(allocator, List.of(a, c)))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.getMessage()).contains("mixes"));
      assertThatThrownBy(() -> Batch.concat(allocator, List.of(c, d)))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    }
    try (Batch empty = Batch.concat(allocator, List.of())) {
      assertThat(empty.rowCount()).isZero();
    }
  }

  @Test
  void shouldCloseEverythingWhenBuilderRejectsScalarTensor(BufferAllocator allocator) {
    Batch.Builder builder = Batch.builder().dense("a", Tensor.zeros(allocator, DType.INT8, 2));
    assertThatThrownBy(() -> builder.dense("b", Tensor.zeros(allocator, DType.INT8)))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThat(allocator.outstandingBuffers()).isZero();
  }
}
