package org.transferqueue.meta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.meta.FieldSchema.shapeOf;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

@ExtendWith(LeakCheckExtension.class)
class SchemaExtractionTest {

  private static Batch mixed(BufferAllocator allocator) {
    try (Tensor r0 = Tensor.zeros(allocator, DType.INT64, 2);
        Tensor r1 = Tensor.zeros(allocator, DType.INT64, 5);
        Tensor r2 = Tensor.zeros(allocator, DType.INT64, 1)) {
      return Batch.builder()
          .add("dense", new DenseColumn(Tensor.zeros(allocator, DType.FLOAT32, 3, 4)))
          .add("scalar", new DenseColumn(Tensor.zeros(allocator, DType.BFLOAT16, 3)))
          .add("ragged", JaggedColumn.copyOf(allocator, DType.INT64, List.of(r0, r1, r2)))
          .add("text", new ObjectColumn(List.of("a", "b", "c")))
          .build();
    }
  }

  @Test
  void shouldExtractEveryColumnKind(BufferAllocator allocator) {
    try (Batch batch = mixed(allocator)) {
      Map<String, FieldSchema> schema = FieldSchema.extract(batch);
      assertThat(schema.keySet()).containsExactly("dense", "scalar", "ragged", "text");
      assertThat(schema.get("dense")).isEqualTo(FieldSchema.regular(DType.FLOAT32, 4));
      assertThat(schema.get("scalar"))
          .as("a 1-D tensor has scalar rows")
          .isEqualTo(FieldSchema.regular(DType.BFLOAT16));
      assertThat(schema.get("ragged"))
          .isEqualTo(
              FieldSchema.nestedOf(DType.INT64, List.of(shapeOf(2), shapeOf(5), shapeOf(1))));
      assertThat(schema.get("ragged").shape()).isNull();
      assertThat(schema.get("text")).isEqualTo(FieldSchema.nonTensorField());
    }
  }

  @Test
  void shouldExtractNothingFromEmptyBatch(BufferAllocator allocator) {
    try (Batch empty =
        Batch.builder()
            .add("x", new DenseColumn(Tensor.zeros(allocator, DType.FLOAT32, 0, 4)))
            .build()) {
      assertThat(FieldSchema.extract(empty)).isEmpty();
      BatchMeta meta = BatchMeta.builder().globalIndexes(0).partitionId("p").build();
      assertThat(meta.addFields(empty, true)).isSameAs(meta);
    }
  }

  @Test
  void K13_addFieldsFromDataMakesBatchReady(BufferAllocator allocator) {
    BatchMeta meta = BatchMeta.builder().globalIndexes(0, 1, 2).partitionId("p").build();
    try (Batch data =
        Batch.builder()
            .add("x", new DenseColumn(Tensor.zeros(allocator, DType.FLOAT32, 3, 4)))
            .build()) {
      BatchMeta added = meta.addFields(data, true);
      assertThat(added.isReady()).isTrue();
      assertThat(added.field("x")).isEqualTo(FieldSchema.regular(DType.FLOAT32, 4));
      assertThat(meta.isReady()).isFalse();
    }
  }

  @Test
  void K42_addFieldsFromTutorialBatch(BufferAllocator allocator) {
    BatchMeta meta =
        BatchMeta.builder()
            .globalIndexes(0, 1, 2, 3, 4)
            .partitionId("train")
            .field("prompts", FieldSchema.regular(DType.INT64, 16))
            .field("attention_mask", FieldSchema.regular(DType.INT64, 16))
            .build();
    try (Batch data =
        Batch.builder()
            .add("responses", new DenseColumn(Tensor.zeros(allocator, DType.INT64, 5, 128)))
            .add("log_probs", new DenseColumn(Tensor.zeros(allocator, DType.FLOAT32, 5, 128)))
            .build()) {
      BatchMeta added = meta.addFields(data, true);
      assertThat(added.fieldNames())
          .containsExactly("attention_mask", "log_probs", "prompts", "responses");
      assertThat(added.isReady()).isTrue();
      assertThat(added.shapes("responses")).containsOnly(shapeOf(128));
    }
  }

  @Test
  void shouldRejectDataWithOtherRowCount(BufferAllocator allocator) {
    BatchMeta meta = BatchMeta.builder().globalIndexes(0, 1).partitionId("p").build();
    try (Batch data = mixed(allocator)) {
      assertThatThrownBy(() -> meta.addFields(data, true))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("batch size mismatch: data has 3 rows, metadata 2 samples")
          .satisfies(t -> assertThat(((TqException) t).code()).isEqualTo(ErrorCode.SHAPE_MISMATCH));
    }
  }
}
