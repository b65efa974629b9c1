package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/** The EQ helper itself: it accepts equal COMPLEX batches and catches each kind of difference. */
@ExtendWith(LeakCheckExtension.class)
class EqTest {

  @Test
  void shouldAcceptEqualComplexBatches(BufferAllocator allocator) {
    try (Batch a = ComplexBatch.extended(allocator, 3, 4, 5);
        Batch b = ComplexBatch.extended(allocator, 3, 4, 5)) {
      assertThatCode(() -> Eq.assertBatchEq(a, b)).doesNotThrowAnyException();
    }
  }

  @Test
  void shouldRejectOtherRows(BufferAllocator allocator) {
    try (Batch a = ComplexBatch.range(allocator, 0, 3);
        Batch b = ComplexBatch.range(allocator, 1, 4)) {
      assertThatThrownBy(() -> Eq.assertBatchEq(a, b)).isInstanceOf(AssertionError.class);
    }
  }

  @Test
  void shouldTellNanInfinityAndNumbersApart(BufferAllocator allocator) {
    try (Tensor nan = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {Float.NaN}, 1);
        Tensor inf =
            Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {Float.POSITIVE_INFINITY}, 1);
        Tensor one = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1}, 1);
        Tensor almostOne = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1.0000001f}, 1);
        Tensor bf16 = Tensor.ofFloats(allocator, DType.BFLOAT16, new float[] {1}, 1)) {
      assertThatThrownBy(() -> Eq.assertTensorEq("x", one, nan)).isInstanceOf(AssertionError.class);
      assertThatThrownBy(() -> Eq.assertTensorEq("x", nan, inf)).isInstanceOf(AssertionError.class);
      assertThatThrownBy(() -> Eq.assertTensorEq("x", one, bf16))
          .isInstanceOf(AssertionError.class);
      assertThatCode(() -> Eq.assertTensorEq("x", almostOne, one)).doesNotThrowAnyException();
      assertThatCode(() -> Eq.assertTensorEq("x", nan, nan)).doesNotThrowAnyException();
    }
  }

  @Test
  void shouldCompareObjectValuesByValue() {
    assertThatCode(
            () ->
                Eq.assertValueEq(
                    "v",
                    Map.of("b", new byte[] {1, 2}, "l", List.of(1L, "s")),
                    Map.of("b", new byte[] {1, 2}, "l", List.of(1L, "s"))))
        .doesNotThrowAnyException();
    assertThatThrownBy(() -> Eq.assertValueEq("v", new byte[] {1}, new byte[] {2}))
        .isInstanceOf(AssertionError.class);
    assertThatThrownBy(() -> Eq.assertValueEq("v", Map.of("k", 1L), Map.of("k", 2L)))
        .isInstanceOf(AssertionError.class);
  }
}
