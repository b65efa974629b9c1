package org.transferqueue.remote.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.tensor.DType;

/** Result columns sized from metadata a hostile controller may have sent. */
@ExtendWith(LeakCheckExtension.class)
class ExpectedColumnsTest {

  private static BatchMeta meta(FieldSchema ok, FieldSchema bad) {
    return BatchMeta.builder()
        .globalIndexes(0, 1)
        .partitionId("p")
        .field("ok", ok)
        .field("bad", bad)
        .build();
  }

  @Test
  void shouldFailCorruptDataNamingTheShapeWhenItsByteSizeOverflows(BufferAllocator allocator) {
    BatchMeta meta =
        meta(
            FieldSchema.regular(DType.FLOAT32, 3),
            FieldSchema.regular(DType.FLOAT32, 1L << 40, 1L << 40));
    assertThatThrownBy(() -> ExpectedColumns.of(meta, allocator))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
        .hasMessageContaining("field 'bad'")
        .hasMessageContaining("shape=[1099511627776, 1099511627776]");
    // The column allocated before the bad one is freed (the extension checks the allocator).
  }

  @Test
  void shouldFailCorruptDataWhenTheNestedRowsTogetherOverflow(BufferAllocator allocator) {
    BatchMeta meta =
        meta(
            FieldSchema.regular(DType.INT64, 2),
            FieldSchema.nestedOf(DType.INT64, List.of(List.of(1L << 59), List.of(1L << 59))));
    assertThatThrownBy(() -> ExpectedColumns.of(meta, allocator))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
        .hasMessageContaining("row 1 shape=[576460752303423488]");
  }
}
