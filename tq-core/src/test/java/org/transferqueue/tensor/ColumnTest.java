package org.transferqueue.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;

@ExtendWith(LeakCheckExtension.class)
class ColumnTest {

  private static Tensor range(BufferAllocator allocator, DType dtype, int start, long... shape) {
    int n = (int) TensorUtils.numel(shape);
    double[] values = new double[n];
    for (int i = 0; i < n; i++) {
      values[i] = start + i;
    }
    Tensor t = Tensor.allocate(allocator, dtype, shape);
    for (int i = 0; i < n; i++) {
      t.setDouble(i, values[i]);
    }
    return t;
  }

  @Test
  void shouldExposeDenseRowsAsViews(BufferAllocator allocator) {
    try (DenseColumn column = new DenseColumn(range(allocator, DType.FLOAT32, 0, 3, 2))) {
      assertThat(column.kind()).isEqualTo(ColumnKind.DENSE);
      assertThat(column.rowCount()).isEqualTo(3);
      assertThat(column.rowShape()).containsExactly(2);
      assertThat(column.row(2).toFloatArray()).containsExactly(4f, 5f);
      assertThat(column.slice(1, 3).tensor().toFloatArray()).containsExactly(2f, 3f, 4f, 5f);
    }
  }

  @Test
  void shouldHoldScalarRowsInDenseColumn(BufferAllocator allocator) {
    try (DenseColumn column = new DenseColumn(range(allocator, DType.INT64, 7, 3))) {
      assertThat(column.rowShape()).isEmpty();
      assertThat(column.row(1).rank()).isZero();
      assertThat(column.row(1).getLong(0)).isEqualTo(8);
    }
  }

  @Test
  void shouldRejectZeroDimensionalDenseColumn(BufferAllocator allocator) {
    try (Tensor scalar = Tensor.zeros(allocator, DType.FLOAT32)) {
      assertThatThrownBy(() -> new DenseColumn(scalar))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    }
  }

  @Test
  void shouldCopySelectedDenseRows(BufferAllocator allocator) {
    try (DenseColumn column = new DenseColumn(range(allocator, DType.INT32, 0, 4, 2));
        DenseColumn selected = column.selectRows(allocator, new int[] {3, 0, 3})) {
      assertThat(selected.tensor().shape()).containsExactly(3, 2);
      assertThat(selected.tensor().toLongArray()).containsExactly(6, 7, 0, 1, 6, 7);
      selected.tensor().setLong(0, -1);
      assertThat(column.tensor().getLong(6)).isEqualTo(6);
      assertThatThrownBy(() -> column.selectRows(allocator, new int[] {0, 4}))
          .isInstanceOfSatisfying(
              TqException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                assertThat(e.getMessage()).contains("position 4").contains("index 1");
              });
    }
  }

  @Test
  void shouldStoreJaggedRowsContiguously(BufferAllocator allocator) {
    try (Tensor a = range(allocator, DType.FLOAT32, 0, 2, 3);
        Tensor b = range(allocator, DType.FLOAT32, 10, 0, 3);
        Tensor c = range(allocator, DType.FLOAT32, 20, 4);
        Tensor d = range(allocator, DType.FLOAT32, 30);
        JaggedColumn column = JaggedColumn.copyOf(allocator, DType.FLOAT32, List.of(a, b, c, d))) {
      assertThat(column.kind()).isEqualTo(ColumnKind.JAGGED);
      assertThat(column.rowCount()).isEqualTo(4);
      assertThat(column.offsets()).containsExactly(0, 6, 6, 10, 11);
      assertThat(column.row(0)).isEqualTo(a);
      assertThat(column.row(1)).isEqualTo(b);
      assertThat(column.row(1).numel()).isZero();
      assertThat(column.row(2)).isEqualTo(c);
      assertThat(column.row(3)).isEqualTo(d);
      assertThat(column.row(3).rank()).isZero();
      assertThat(column.rowShape(0)).containsExactly(2, 3);
      assertThat(column.isUniform()).isFalse();
      assertThat(column.values().numel()).isEqualTo(11);
      assertThat(column.row(2).segment().address())
          .isEqualTo(column.values().segment().address() + 24);
      assertThatThrownBy(column::toDense)
          .isInstanceOfSatisfying(
              TqException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.SHAPE_MISMATCH);
                assertThat(e.getMessage()).contains("[2, 3]").contains("row 1").contains("[0, 3]");
              });

      JaggedColumn slice = column.slice(1, 3);
      assertThat(slice.rowCount()).isEqualTo(2);
      assertThat(slice.row(1)).isEqualTo(c);
      assertThat(slice.offsets()).containsExactly(0, 0, 4);
      try (JaggedColumn selected = column.selectRows(allocator, new int[] {2, 0})) {
        assertThat(selected.row(0)).isEqualTo(c);
        assertThat(selected.row(1)).isEqualTo(a);
      }
    }
  }

  @Test
  void shouldGiveZeroCopyDenseViewWhenUniform(BufferAllocator allocator) {
    try (Tensor values = range(allocator, DType.INT16, 0, 12);
        JaggedColumn column =
            JaggedColumn.fromValues(
                Tensor.copyOf(allocator, values),
                List.of(new long[] {2, 2}, new long[] {2, 2}, new long[] {2, 2}))) {
      assertThat(column.isUniform()).isTrue();
      Tensor dense = column.toDense();
      assertThat(dense.shape()).containsExactly(3, 2, 2);
      assertThat(dense.segment().address()).isEqualTo(column.values().segment().address());
      assertThat(dense.row(2).toLongArray()).containsExactly(8, 9, 10, 11);
      assertThat(dense.ownsMemory()).isFalse();
    }
  }

  @Test
  void shouldHandleEmptyJaggedColumnAndEmptyRows(BufferAllocator allocator) {
    try (JaggedColumn empty = JaggedColumn.copyOf(allocator, DType.BFLOAT16, List.of())) {
      assertThat(empty.rowCount()).isZero();
      assertThat(empty.isUniform()).isTrue();
      assertThat(empty.toDense().shape()).containsExactly(0);
    }
    try (Tensor zero = Tensor.allocate(allocator, DType.INT8, 0);
        JaggedColumn allEmpty = JaggedColumn.copyOf(allocator, DType.INT8, List.of(zero, zero))) {
      assertThat(allEmpty.isUniform()).isTrue();
      assertThat(allEmpty.toDense().shape()).containsExactly(2, 0);
      assertThat(allEmpty.row(1).numel()).isZero();
    }
  }

  @Test
  void shouldRejectJaggedRowOfOtherDtype(BufferAllocator allocator) {
    try (Tensor f = Tensor.zeros(allocator, DType.FLOAT32, 2);
        Tensor i = Tensor.zeros(allocator, DType.INT32, 2)) {
      assertThatThrownBy(() -> JaggedColumn.copyOf(allocator, DType.FLOAT32, List.of(f, i)))
          .isInstanceOfSatisfying(
              TqException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                assertThat(e.getMessage()).contains("row 1").contains("int32").contains("float32");
              });
    }
  }

  @Test
  void shouldCloseTheValuesWhenFromValuesRejectsTheShapes(BufferAllocator allocator) {
    // fromValues takes ownership of the values in every outcome, so the test never closes them.
    Tensor values = Tensor.zeros(allocator, DType.FLOAT32, 2);
    assertThatThrownBy(() -> JaggedColumn.fromValues(values, List.of(new long[] {3})))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.SHAPE_MISMATCH);
              assertThat(e.getMessage()).contains("3 elements").contains("2");
            });
    assertThat(allocator.allocatedBytes()).as("values of the rejected column").isZero();

    Tensor more = Tensor.zeros(allocator, DType.FLOAT32, 2);
    List<long[]> missingShape = new ArrayList<>();
    missingShape.add(null);
    assertThatThrownBy(() -> JaggedColumn.fromValues(more, missingShape))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("shapes[0]");
    assertThat(allocator.allocatedBytes()).as("values of the rejected column").isZero();
  }

  @Test
  void shouldCloseTheTensorWhenADenseColumnRejectsIt(BufferAllocator allocator) {
    // DenseColumn takes ownership of its tensor in every outcome, so the test never closes it.
    Tensor scalar = Tensor.zeros(allocator, DType.FLOAT32);
    assertThatThrownBy(() -> new DenseColumn(scalar))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("rank >= 1");
    assertThat(allocator.allocatedBytes()).as("the rejected tensor").isZero();
  }

  @Test
  void shouldAcceptEveryObjectValueKind(BufferAllocator allocator) {
    Map<Object, Object> map = new LinkedHashMap<>();
    map.put("s", "x");
    map.put(1L, 2.5);
    map.put(true, null);
    List<Object> values = new ArrayList<>();
    values.add(null);
    values.add(true);
    values.add(42L);
    values.add(1.5);
    values.add("text");
    values.add(new byte[] {1, 2});
    values.add(List.of(1L, "a", List.of()));
    values.add(map);
    values.add(Map.of("t", Tensor.ofInts(allocator, DType.INT32, new int[] {1, 2}, 2)));
    values.add(new BigInteger("18446744073709551615"));
    values.add(BigInteger.TEN);
    try (ObjectColumn column = new ObjectColumn(values)) {
      assertThat(column.kind()).isEqualTo(ColumnKind.OBJECT);
      assertThat(column.rowCount()).isEqualTo(11);
      assertThat(column.get(0)).isNull();
      assertThat(column.get(6)).isEqualTo(List.of(1L, "a", List.of()));
      assertThat(column.get(10)).isEqualTo(10L);
      assertThatThrownBy(() -> column.values().add(1L))
          .isInstanceOf(UnsupportedOperationException.class);
      try (ObjectColumn copy = column.selectRows(allocator, new int[] {8, 5})) {
        Tensor original = (Tensor) ((Map<?, ?>) column.get(8)).get("t");
        Tensor copied = (Tensor) ((Map<?, ?>) copy.get(0)).get("t");
        assertThat(copied).isEqualTo(original);
        assertThat(copied.segment().address()).isNotEqualTo(original.segment().address());
        try (ObjectColumn again = column.selectRows(allocator, new int[] {8, 5});
            ObjectColumn other = column.selectRows(allocator, new int[] {8, 4})) {
          assertThat(copy.contentEquals(again)).isTrue();
          assertThat(copy.contentEquals(other)).isFalse();
        }
      }
    }
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  void shouldCompareObjectColumnsDeeply() {
    ObjectColumn a = new ObjectColumn(List.of(List.of(new byte[] {1}), Map.of("k", Double.NaN)));
    ObjectColumn b = new ObjectColumn(List.of(List.of(new byte[] {1}), Map.of("k", Double.NaN)));
    ObjectColumn c = new ObjectColumn(List.of(List.of(new byte[] {2}), Map.of("k", Double.NaN)));
    assertThat(a.contentEquals(b)).isTrue();
    assertThat(a.contentEquals(c)).isFalse();
  }

  @Test
  void shouldRejectUnsupportedObjectValuesNamingClassAndRow() {
    assertThatThrownBy(() -> new ObjectColumn(List.of("ok", 3)))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).contains("row 1").contains("java.lang.Integer");
            });
    assertThatThrownBy(() -> new ObjectColumn(List.of(List.of(Set.of(1L)))))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.getMessage()).contains("row 0").contains("Set"));
    assertThatThrownBy(() -> new ObjectColumn(List.of(Map.of(List.of(), 1L))))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.getMessage()).contains("map key"));
    assertThatThrownBy(() -> new ObjectColumn(List.of(BigInteger.ONE.shiftLeft(64))))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.getMessage()).contains("18446744073709551616"));
    List<Object> cyclic = new ArrayList<>();
    cyclic.add(cyclic);
    assertThatThrownBy(() -> new ObjectColumn(List.of(cyclic)))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.getMessage()).contains("deeper than"));
  }

  @Test
  void shouldRefuseStringsWithALoneSurrogateWhereverTheyAreInAnObjectValue() {
    List<Object> values =
        List.of(
            "top\uD800",
            List.of("ok", List.of("deep\uDC00")),
            Map.of("k", "v\uDBFF"),
            Map.of("key\uDFFF", 1L));
    for (int i = 0; i < values.size(); i++) {
      List<Object> rows = new ArrayList<>(List.of("fine", "\uD83D\uDE00"));
      rows.add(values.get(i));
      assertThatThrownBy(() -> new ObjectColumn(rows))
          .as("value %d", i)
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageStartingWith("object value of row 2: string \"")
          .hasMessageContaining("is not valid Unicode: lone surrogate \\u")
          .hasMessageMatching("(?s).* at index \\d+, .*");
    }
    assertThatThrownBy(() -> Batch.builder().objects("note", List.of("a", "b\uD800")))
        .isInstanceOf(TqException.class)
        .hasMessage(
            "field \"note\": object value of row 1: string \"b\\uD800\" is not valid Unicode:"
                + " lone surrogate \\uD800 at index 1, which UTF-8 cannot encode");
    assertThat(new ObjectColumn(List.of("\uD83D\uDE00", "\uFFFD")).values())
        .containsExactly("\uD83D\uDE00", "\uFFFD");
  }

  @Test
  void shouldNotCloseTensorsThroughSlice(BufferAllocator allocator) {
    Tensor t = Tensor.zeros(allocator, DType.INT8, 3);
    try (ObjectColumn column = new ObjectColumn(Arrays.asList(t, null))) {
      column.slice(0, 1).close();
      assertThat(t.segment().byteSize()).isEqualTo(3);
    }
    assertThat(allocator.outstandingBuffers()).isZero();
  }
}
