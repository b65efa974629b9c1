package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;

/**
 * Shape checks of received tensor cells: hostile shapes are typed errors, never arithmetic ones.
 */
class CellColumnTest {

  @Test
  void shouldRejectARowShapeWhoseSizeOverflowsAsShapeMismatch() {
    MemorySegment row = MemorySegment.ofArray(new byte[8]);
    for (long[] shape : List.of(new long[] {1L << 62, 4}, new long[] {Long.MAX_VALUE / 4, 1})) {
      assertThatThrownBy(
              () ->
                  CellColumn.tensors(
                      "f", ColumnKind.JAGGED, DType.INT64, List.of(shape), List.of(row)))
          .isInstanceOf(StorageException.class)
          .hasMessageContaining("overflows")
          .extracting(e -> ((StorageException) e).code())
          .isEqualTo(ErrorCode.SHAPE_MISMATCH);
    }
  }
}
