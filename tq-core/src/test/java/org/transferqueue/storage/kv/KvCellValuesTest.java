package org.transferqueue.storage.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

@ExtendWith(LeakCheckExtension.class)
class KvCellValuesTest {

  @Test
  void shouldGiveEachTensorCellsBytesWithoutATensorView(BufferAllocator allocator) {
    try (Tensor dense =
            Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4, 5, 6}, 3, 2);
        Tensor scalars = Tensor.ofLongs(allocator, DType.INT64, new long[] {7, 8, 9}, 3);
        JaggedColumn jagged =
            JaggedColumn.copyOf(
                allocator,
                DType.INT64,
                List.of(
                    Tensor.wrap(DType.INT64, MemorySegment.ofArray(new long[] {10}), 1),
                    Tensor.wrap(DType.INT64, MemorySegment.ofArray(new long[0]), 0),
                    Tensor.wrap(DType.INT64, MemorySegment.ofArray(new long[] {11, 12}), 2)))) {
      KvCellValues cells =
          new KvCellValues(
              List.of(
                  new DenseColumn(dense),
                  new DenseColumn(scalars),
                  jagged,
                  new ObjectColumn(List.of("a", "b", "c"))),
              3);

      assertThat(cells).hasSize(12);
      for (int i = 0; i < 9; i++) {
        Tensor view = (Tensor) cells.get(i);
        assertThat(cells.kind(i)).isEqualTo(KvCellKind.TENSOR);
        assertThat(cells.tensorBytes(i).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
            .as("cell %d", i)
            .containsExactly(view.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        assertThat(cells.tensorBytes(i).address()).isEqualTo(view.segment().address());
      }
      assertThat(((Tensor) cells.get(3)).rank()).isZero(); // a rank-1 column gives 0-d cells
      assertThat(cells.tensorBytes(4).get(java.lang.foreign.ValueLayout.JAVA_LONG, 0)).isEqualTo(8);
      assertThat(cells.tensorBytes(7).byteSize()).isZero();
      assertThat(cells.subList(9, 12)).containsExactly("a", "b", "c");
      assertThat(cells.kinds().subList(8, 10))
          .containsExactly(KvCellKind.TENSOR, KvCellKind.OBJECT);
      assertThatThrownBy(() -> cells.tensorBytes(10)).isInstanceOf(IllegalArgumentException.class);
    }
  }
}
