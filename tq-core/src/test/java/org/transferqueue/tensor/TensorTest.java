package org.transferqueue.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;

@ExtendWith(LeakCheckExtension.class)
class TensorTest {

  @Test
  void shouldDescribeShapeWhenAllocated(BufferAllocator allocator) {
    try (Tensor t = Tensor.allocate(allocator, DType.FLOAT32, 2, 3, 4)) {
      assertThat(t.dtype()).isEqualTo(DType.FLOAT32);
      assertThat(t.shape()).containsExactly(2, 3, 4);
      assertThat(t.rank()).isEqualTo(3);
      assertThat(t.shape(1)).isEqualTo(3);
      assertThat(t.numel()).isEqualTo(24);
      assertThat(t.nbytes()).isEqualTo(96);
      assertThat(t.segment().byteSize()).isEqualTo(96);
      assertThat(t.ownsMemory()).isTrue();
      assertThat(allocator.outstandingBuffers()).isEqualTo(1);
    }
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  void shouldReturnShapeCopyWhenCallerModifiesIt(BufferAllocator allocator) {
    try (Tensor t = Tensor.allocate(allocator, DType.INT8, 2, 3)) {
      t.shape()[0] = 99;
      assertThat(t.shape()).containsExactly(2, 3);
    }
  }

  @Test
  void shouldCloseIdempotentlyAndRejectUseAfterClose(BufferAllocator allocator) {
    Tensor t = Tensor.zeros(allocator, DType.INT32, 4);
    t.close();
    t.close();
    assertThat(allocator.outstandingBuffers()).isZero();
    assertThatThrownBy(t::segment)
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CLOSED));
  }

  @Test
  void shouldHandleZeroDimensionalTensor(BufferAllocator allocator) {
    try (Tensor t = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {2.5f})) {
      assertThat(t.rank()).isZero();
      assertThat(t.shape()).isEmpty();
      assertThat(t.numel()).isEqualTo(1);
      assertThat(t.nbytes()).isEqualTo(4);
      assertThat(t.getFloat(0)).isEqualTo(2.5f);
      assertThatThrownBy(() -> t.row(0))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    }
  }

  @Test
  void shouldHandleZeroLengthDimension(BufferAllocator allocator) {
    try (Tensor t = Tensor.allocate(allocator, DType.FLOAT64, 3, 0, 5)) {
      assertThat(t.numel()).isZero();
      assertThat(t.nbytes()).isZero();
      Tensor row = t.row(2);
      assertThat(row.shape()).containsExactly(0, 5);
      assertThat(t.rows(1, 3).shape()).containsExactly(2, 0, 5);
      assertThat(t.toDoubleArray()).isEmpty();
    }
    try (Tensor empty = Tensor.allocate(allocator, DType.INT64, 0, 4)) {
      assertThat(empty.rows(0, 0).shape()).containsExactly(0, 4);
      assertThatThrownBy(() -> empty.row(0)).isInstanceOf(IndexOutOfBoundsException.class);
    }
  }

  @Test
  void shouldViewRowsWithoutCopying(BufferAllocator allocator) {
    try (Tensor t = Tensor.ofInts(allocator, DType.INT32, new int[] {0, 1, 2, 3, 4, 5}, 3, 2)) {
      Tensor row = t.row(1);
      assertThat(row.shape()).containsExactly(2);
      assertThat(row.toLongArray()).containsExactly(2, 3);
      assertThat(row.ownsMemory()).isFalse();
      row.setLong(0, 42);
      assertThat(t.getLong(2)).isEqualTo(42);
      row.close();
      assertThat(t.getLong(2)).isEqualTo(42);

      Tensor rows = t.rows(1, 3);
      assertThat(rows.shape()).containsExactly(2, 2);
      assertThat(rows.toLongArray()).containsExactly(42, 3, 4, 5);
      assertThat(rows.segment().address()).isEqualTo(t.segment().address() + 8);
      assertThatThrownBy(() -> t.rows(2, 4)).isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> t.row(3)).isInstanceOf(IndexOutOfBoundsException.class);
    }
  }

  @Test
  void shouldReshapeWhenElementCountMatches(BufferAllocator allocator) {
    try (Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4, 5, 6}, 6)) {
      Tensor view = t.reshape(2, 3);
      assertThat(view.row(1).toLongArray()).containsExactly(4, 5, 6);
      assertThatThrownBy(() -> t.reshape(4, 2))
          .isInstanceOfSatisfying(
              TqException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.SHAPE_MISMATCH);
                assertThat(e.getMessage()).contains("[4, 2]").contains("numel=6");
              });
    }
  }

  @Test
  void shouldWrapSegmentWithoutOwnership(BufferAllocator allocator) {
    try (var buffer = allocator.allocate(24)) {
      Tensor t = Tensor.wrap(DType.FLOAT32, buffer.segment(), 2, 3);
      assertThat(t.ownsMemory()).isFalse();
      t.close();
      assertThat(buffer.refCount()).isEqualTo(1);
      assertThatThrownBy(() -> Tensor.wrap(DType.FLOAT32, buffer.segment(), 2, 2))
          .isInstanceOfSatisfying(
              TqException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.SHAPE_MISMATCH);
                assertThat(e.getMessage()).contains("24 bytes").contains("nbytes=16");
              });
    }
  }

  @Test
  void shouldRejectNegativeAndOverflowingShapes(BufferAllocator allocator) {
    assertThatThrownBy(() -> Tensor.allocate(allocator, DType.FLOAT32, 2, -1))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).contains("-1").contains("index 1");
            });
    assertThatThrownBy(() -> Tensor.allocate(allocator, DType.FLOAT32, 1L << 40, 1L << 40))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).contains("overflows");
            });
    assertThatThrownBy(() -> Tensor.allocate(allocator, DType.FLOAT64, 1L << 31, 1L << 31))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.getMessage()).contains("overflows nbytes"));
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  void shouldRejectValueCountNotMatchingShape(BufferAllocator allocator) {
    assertThatThrownBy(() -> Tensor.ofFloats(allocator, DType.FLOAT32, new float[5], 2, 3))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.SHAPE_MISMATCH);
              assertThat(e.getMessage())
                  .contains("5 values")
                  .contains("[2, 3]")
                  .contains("numel=6");
            });
    assertThatThrownBy(() -> Tensor.ofBytes(allocator, DType.INT16, new byte[3], 2))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> assertThat(e.getMessage()).contains("3 bytes").contains("nbytes=4"));
    assertThatThrownBy(() -> Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1, 2}))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SHAPE_MISMATCH));
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  void shouldRejectWrongDtypeForFactory(BufferAllocator allocator) {
    assertThatThrownBy(() -> Tensor.ofFloats(allocator, DType.INT32, new float[1], 1))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).contains("ofFloats").contains("int32");
            });
    assertThatThrownBy(() -> Tensor.ofDoubles(allocator, DType.BOOL, new double[1], 1))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.getMessage()).contains("bool"));
    assertThatThrownBy(() -> Tensor.ofLongs(allocator, DType.FLOAT16, new long[1], 1))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> assertThat(e.getMessage()).contains("ofLongs").contains("float16"));
    assertThatThrownBy(() -> Tensor.ofInts(allocator, DType.BFLOAT16, new int[1], 1))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.getMessage()).contains("bfloat16"));
  }

  @Test
  void shouldRejectIntegerOutOfDtypeRange(BufferAllocator allocator) {
    assertThatThrownBy(() -> Tensor.ofInts(allocator, DType.INT8, new int[] {1, 128}, 2))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).contains("128").contains("index 1").contains("int8");
            });
    assertThatThrownBy(() -> Tensor.ofLongs(allocator, DType.UINT8, new long[] {-1}, 1))
        .isInstanceOfSatisfying(TqException.class, e -> assertThat(e.getMessage()).contains("-1"));
    assertThatThrownBy(() -> Tensor.ofBytes(allocator, DType.BOOL, new byte[] {0, 2}, 2))
        .isInstanceOfSatisfying(TqException.class, e -> assertThat(e.getMessage()).contains("2"));
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  void shouldStoreLittleEndianBytes(BufferAllocator allocator) {
    try (Tensor t = Tensor.ofInts(allocator, DType.INT32, new int[] {0x01020304}, 1);
        Tensor h = Tensor.ofFloats(allocator, DType.FLOAT16, new float[] {1.0f}, 1);
        Tensor b = Tensor.ofFloats(allocator, DType.BFLOAT16, new float[] {1.0f}, 1)) {
      assertThat(t.toByteArray()).containsExactly(4, 3, 2, 1);
      assertThat(h.toByteArray()).containsExactly(0x00, 0x3C);
      assertThat(b.toByteArray()).containsExactly(0x80, 0x3F);
    }
  }

  @Test
  void shouldConvertOnElementAccess(BufferAllocator allocator) {
    try (Tensor u8 = Tensor.ofInts(allocator, DType.UINT8, new int[] {255, 0}, 2);
        Tensor f32 = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {-2.7f, Float.NaN}, 2);
        Tensor bool = Tensor.ofBooleans(allocator, new boolean[] {true, false}, 2);
        Tensor i16 = Tensor.zeros(allocator, DType.INT16, 1)) {
      assertThat(u8.getLong(0)).isEqualTo(255);
      assertThat(u8.getDouble(0)).isEqualTo(255.0);
      assertThat(u8.getBoolean(1)).isFalse();
      assertThat(f32.getLong(0)).isEqualTo(-2);
      assertThat(f32.getLong(1)).isZero();
      assertThat(f32.getBoolean(1)).isTrue();
      assertThat(f32.getDouble(0)).isEqualTo((double) -2.7f);
      assertThat(bool.getLong(0)).isEqualTo(1);
      assertThat(bool.getFloat(1)).isZero();
      bool.setDouble(1, Double.NaN);
      assertThat(bool.getBoolean(1)).isTrue();
      bool.setLong(1, 0);
      assertThat(bool.toByteArray()).containsExactly(1, 0);
      i16.setLong(0, 0x12345);
      assertThat(i16.getLong(0)).isEqualTo(0x2345);
      i16.setDouble(0, 7.9);
      assertThat(i16.getLong(0)).isEqualTo(7);
      i16.setBoolean(0, true);
      assertThat(i16.getLong(0)).isEqualTo(1);
      assertThatThrownBy(() -> i16.getLong(1)).isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> i16.setLong(-1, 0)).isInstanceOf(IndexOutOfBoundsException.class);
    }
  }

  @Test
  void shouldCompareByDtypeShapeAndBytes(BufferAllocator allocator) {
    float[] values = {1f, Float.NaN, -0f, Float.POSITIVE_INFINITY};
    try (Tensor a = Tensor.ofFloats(allocator, DType.FLOAT32, values, 2, 2);
        Tensor b = Tensor.ofFloats(allocator, DType.FLOAT32, values, 2, 2);
        Tensor c = Tensor.ofFloats(allocator, DType.FLOAT32, values, 4);
        Tensor d =
            Tensor.ofFloats(
                allocator, DType.FLOAT32, new float[] {1f, Float.NaN, 0f, 1f / 0f}, 2, 2);
        Tensor e = Tensor.ofBytes(allocator, DType.INT32, a.toByteArray(), 2, 2)) {
      assertThat(a).isEqualTo(b);
      assertThat(a.contentEquals(b)).isTrue();
      assertThat(a.hashCode()).isEqualTo(b.hashCode());
      assertThat(a).isNotEqualTo(c);
      assertThat(a).isNotEqualTo(d);
      assertThat(a).isNotEqualTo(e);
      assertThat(a.contentEquals(null)).isFalse();
    }
  }

  @Test
  void shouldCopyIndependently(BufferAllocator allocator) {
    try (Tensor a = Tensor.ofDoubles(allocator, DType.FLOAT64, new double[] {1, 2, 3}, 3);
        Tensor copy = Tensor.copyOf(allocator, a.rows(1, 3))) {
      assertThat(copy.ownsMemory()).isTrue();
      assertThat(copy.toDoubleArray()).containsExactly(2, 3);
      copy.setDouble(0, 9);
      assertThat(a.getDouble(1)).isEqualTo(2);
    }
  }

  @Test
  void shouldAllocateNothingWhenCopyingClosedTensor(BufferAllocator allocator) {
    Tensor closed = Tensor.zeros(allocator, DType.INT32, 2);
    closed.close();
    assertThatThrownBy(() -> Tensor.copyOf(allocator, closed))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CLOSED));
    assertThatThrownBy(() -> JaggedColumn.copyOf(allocator, DType.INT32, java.util.List.of(closed)))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CLOSED));
    assertThat(allocator.outstandingBuffers()).isZero();
  }
}
