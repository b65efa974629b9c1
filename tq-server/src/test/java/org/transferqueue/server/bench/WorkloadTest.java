package org.transferqueue.server.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.testing.Seeds;

@ExtendWith(LeakCheckExtension.class)
class WorkloadTest {
  private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;

  @Test
  void shouldGenerateDenseFloat32FieldsWhenSimple(BufferAllocator allocator) {
    BenchSize size = new BenchSize("custom", 8, 3, 16);
    try (Workload workload = Workload.generate(allocator, size, false, 7)) {
      Batch batch = workload.batch();
      assertThat(batch.fields()).containsExactly("field_0", "field_1", "field_2");
      assertThat(batch.rowCount()).isEqualTo(8);
      for (String field : batch.fields()) {
        Tensor tensor = ((DenseColumn) batch.column(field)).tensor();
        assertThat(tensor.dtype()).isEqualTo(DType.FLOAT32);
        assertThat(tensor.shape()).containsExactly(8, 16);
      }
      assertThat(workload.bytes()).isEqualTo(3L * 8 * 16 * 4);
      assertThat(workload.bytes()).isEqualTo(Workload.expectedBytes(size, false));
      assertThat(workload.keys()).hasSize(8).startsWith("test_key_0").endsWith("test_key_7");
      assertThat(workload.fieldBytes()).containsExactly(512, 512, 512);
    }
  }

  @Test
  void shouldSplitComplexFieldsIntoThirdsWhenComplex() {
    assertThat(Workload.fieldCounts(9, true)).isEqualTo(new Workload.FieldCounts(3, 3, 3));
    assertThat(Workload.fieldCounts(15, true)).isEqualTo(new Workload.FieldCounts(5, 5, 5));
    assertThat(Workload.fieldCounts(4, true)).isEqualTo(new Workload.FieldCounts(2, 2, 0));
    assertThat(Workload.fieldCounts(5, true)).isEqualTo(new Workload.FieldCounts(2, 2, 1));
    assertThat(Workload.fieldCounts(2, true)).isEqualTo(new Workload.FieldCounts(1, 1, 0));
    assertThat(Workload.fieldCounts(1, true)).isEqualTo(new Workload.FieldCounts(1, 0, 0));
    assertThat(Workload.fieldCounts(9, false)).isEqualTo(new Workload.FieldCounts(9, 0, 0));
  }

  @Test
  void shouldGenerateJaggedRowsAndStringsWhenComplex(BufferAllocator allocator) {
    BenchSize size = new BenchSize("custom", 4, 9, 10);
    try (Workload workload = Workload.generate(allocator, size, true, 7)) {
      Batch batch = workload.batch();
      assertThat(batch.fields())
          .containsExactly(
              "field_0",
              "field_1",
              "field_2",
              "nested_field_0",
              "nested_field_1",
              "nested_field_2",
              "nontensor_field_0",
              "nontensor_field_1",
              "nontensor_field_2");
      for (int f = 0; f < 3; f++) {
        Tensor dense = ((DenseColumn) batch.column("field_" + f)).tensor();
        assertThat(dense.shape()).containsExactly(4, 10);
        JaggedColumn jagged = (JaggedColumn) batch.column("nested_field_" + f);
        assertThat(jagged.dtype()).isEqualTo(DType.FLOAT32);
        // step = (10 - 1) / (4 - 1) = 3: lengths 1, 4, 7, 10
        int[] expected = {1, 4, 7, 10};
        for (int r = 0; r < 4; r++) {
          Tensor row = jagged.row(r);
          assertThat(row.shape()).containsExactly(expected[r]);
          MemorySegment values = row.segment();
          for (int k = 0; k < expected[r]; k++) {
            assertThat(values.getAtIndex(F32, k)).isEqualTo((float) k);
          }
        }
        ObjectColumn strings = (ObjectColumn) batch.column("nontensor_field_" + f);
        assertThat(strings.values()).hasSize(4);
        for (Object value : strings.values()) {
          assertThat((String) value).hasSize(40).matches("x+");
        }
      }
      long expectedBytes = 3L * 4 * 10 * 4 + 3L * (1 + 4 + 7 + 10) * 4 + 3L * 4 * 40;
      assertThat(workload.bytes()).isEqualTo(expectedBytes);
      assertThat(Workload.expectedBytes(size, true)).isEqualTo(expectedBytes);
      assertThat(workload.fieldBytes()).hasSize(9);
      assertThat(java.util.Arrays.stream(workload.fieldBytes()).sum()).isEqualTo(expectedBytes);
    }
  }

  @Test
  void shouldRiseFromOneToSeqLenInArithmeticProgressionForAnyBatch() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    for (int trial = 0; trial < 200; trial++) {
      int batch = 1 + random.nextInt(3000);
      int seqLen = 1 + random.nextInt(40000);
      int[] lengths = Workload.jaggedLengths(batch, seqLen);
      String context = "seed=" + seed + ", batch=" + batch + ", seqLen=" + seqLen;
      assertThat(lengths).as(context).hasSize(batch);
      assertThat(lengths[0]).as(context).isEqualTo(1);
      if (batch > 1) {
        assertThat(lengths[batch - 1]).as(context).isEqualTo(seqLen);
      }
      double step = batch > 1 ? (seqLen - 1) / (double) (batch - 1) : 0;
      for (int j = 0; j < batch; j++) {
        assertThat(lengths[j]).as(context).isBetween(1, seqLen);
        assertThat(Math.abs(lengths[j] - (1 + j * step)))
            .as(context + ", j=" + j)
            .isLessThanOrEqualTo(0.5);
        if (j > 0) {
          assertThat(lengths[j]).as(context).isGreaterThanOrEqualTo(lengths[j - 1]);
        }
      }
    }
  }

  @Test
  void shouldMatchThePresetSizesOfTheIssue() {
    assertThat(Workload.expectedBytes(BenchSize.TINY, false)).isEqualTo(2L << 20);
    assertThat(Workload.expectedBytes(BenchSize.SMALL, false)).isEqualTo(288L << 20);
    assertThat(Workload.expectedBytes(BenchSize.MEDIUM, false)).isEqualTo(15L << 29);
    assertThat(Workload.stringValue(1024)).hasSize(4096);
  }
}
