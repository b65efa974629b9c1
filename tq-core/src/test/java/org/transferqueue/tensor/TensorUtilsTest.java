package org.transferqueue.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.tensor.DType.FLOAT16;
import static org.transferqueue.tensor.DType.FLOAT32;
import static org.transferqueue.tensor.DType.FLOAT64;
import static org.transferqueue.tensor.DType.INT32;
import static org.transferqueue.tensor.DType.INT64;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.testing.Seeds;

class TensorUtilsTest {

  private static long[] s(long... shape) {
    return shape;
  }

  private static List<MemoryRegion> merge(long[] ptrs, long[] sizes) {
    return TensorUtils.mergeContiguousMemory(ptrs, sizes);
  }

  private static List<MemoryRegion> regions(long... addressAndLength) {
    List<MemoryRegion> out = new java.util.ArrayList<>();
    for (int i = 0; i < addressAndLength.length; i += 2) {
      out.add(new MemoryRegion(addressAndLength[i], addressAndLength[i + 1]));
    }
    return out;
  }

  @Test
  void AS083_computeStride() {
    assertThat(TensorUtils.computeStride(2, 3, 4)).containsExactly(12, 4, 1);
    assertThat(TensorUtils.computeStride(5)).containsExactly(1);
    assertThat(TensorUtils.computeStride()).isEmpty();
    assertThat(TensorUtils.computeStride(3, 5)).containsExactly(5, 1);
    assertThat(TensorUtils.computeStride(4, 0, 3)).containsExactly(0, 3, 1);
  }

  @Test
  void AS084_getNbytes() {
    assertThat(TensorUtils.nbytes(List.of(FLOAT32, INT32), List.of(s(2, 3), s(4))))
        .containsExactly(24, 16);
    assertThat(TensorUtils.nbytes(List.of(FLOAT64), List.of(s()))).containsExactly(8);
    assertThat(TensorUtils.nbytes(FLOAT32)).isEqualTo(4);
    assertThat(TensorUtils.nbytes(List.of(FLOAT16, FLOAT32, INT64), List.of(s(10), s(10), s(10))))
        .containsExactly(20, 40, 80);
    assertThat(TensorUtils.nbytes(FLOAT32, 3, 0)).isZero();
    assertThatThrownBy(() -> TensorUtils.nbytes(List.of(FLOAT32), List.of()))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).contains("same length");
            });
  }

  @Test
  @ExtendWith(LeakCheckExtension.class)
  void AS085_allocateEmptyTensorsBasic(BufferAllocator allocator) {
    try (GroupedAllocation grouped =
        TensorUtils.allocateGrouped(
            allocator, List.of(FLOAT32, FLOAT32, INT32), List.of(s(2, 3), s(4), s(5)))) {
      assertThat(grouped.tensors()).extracting(Tensor::shape).containsExactly(s(2, 3), s(4), s(5));
      assertThat(grouped.regions()).hasSize(2);
      assertThat(grouped.regionDtypes()).containsExactly(FLOAT32, INT32);
      long r0 = grouped.regions().get(0).address();
      long r1 = grouped.regions().get(1).address();
      assertThat(grouped.addresses()).containsExactly(r0, r0 + 64, r1);
      assertThat(grouped.regions().get(0).byteSize()).isEqualTo(64 + 16);
      for (Tensor t : grouped.tensors()) {
        assertThat(t.segment().address() % 64).isZero();
        assertThat(t.ownsMemory()).isFalse();
      }
      assertThat(allocator.outstandingBuffers()).isEqualTo(2);
    }
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  @ExtendWith(LeakCheckExtension.class)
  void AS086_allocateEmptyTensorsScalarsAndEmpty(BufferAllocator allocator) {
    try (GroupedAllocation grouped =
        TensorUtils.allocateGrouped(allocator, List.of(FLOAT32, INT32), List.of(s(), s()))) {
      assertThat(grouped.tensors()).extracting(Tensor::numel).containsExactly(1L, 1L);
      assertThat(grouped.regions()).hasSize(2);
    }
    try (GroupedAllocation empty = TensorUtils.allocateGrouped(allocator, List.of(), List.of())) {
      assertThat(empty.tensors()).isEmpty();
      assertThat(empty.addresses()).isEmpty();
      assertThat(empty.regions()).isEmpty();
      assertThat(empty.memoryRegions()).isEmpty();
    }
  }

  @Test
  @ExtendWith(LeakCheckExtension.class)
  void AS087_allocateEmptyTensorsOffsetsPackedAsUpstream(BufferAllocator allocator) {
    try (GroupedAllocation grouped =
        TensorUtils.allocateGrouped(
            allocator,
            List.of(FLOAT32, INT32, FLOAT32, FLOAT64, INT32),
            List.of(s(2, 3), s(4), s(), s(2, 2), s(3, 2)),
            1)) {
      assertThat(grouped.regionDtypes()).containsExactly(FLOAT32, INT32, FLOAT64);
      assertThat(grouped.memoryRegions())
          .extracting(MemoryRegion::lengthBytes)
          .containsExactly(28L, 40L, 32L);
      long r0 = grouped.regions().get(0).address();
      long r1 = grouped.regions().get(1).address();
      long r2 = grouped.regions().get(2).address();
      assertThat(List.of(r0, r1, r2)).doesNotHaveDuplicates();
      assertThat(grouped.addresses()).containsExactly(r0, r1, r0 + 24, r2, r1 + 16);
    }
  }

  @Test
  @ExtendWith(LeakCheckExtension.class)
  void AS087_allocateEmptyTensorsOffsetsAlignedTo64(BufferAllocator allocator) {
    try (GroupedAllocation grouped =
        TensorUtils.allocateGrouped(
            allocator,
            List.of(FLOAT32, INT32, FLOAT32, FLOAT64, INT32),
            List.of(s(2, 3), s(4), s(), s(2, 2), s(3, 2)))) {
      assertThat(grouped.memoryRegions())
          .extracting(MemoryRegion::lengthBytes)
          .containsExactly(68L, 88L, 32L);
      long r0 = grouped.regions().get(0).address();
      long r1 = grouped.regions().get(1).address();
      long r2 = grouped.regions().get(2).address();
      assertThat(grouped.addresses()).containsExactly(r0, r1, r0 + 64, r2, r1 + 64);
      grouped.tensors().get(4).setLong(5, 7);
      assertThat(grouped.tensors().get(4).getLong(5)).isEqualTo(7);
    }
  }

  @Test
  @ExtendWith(LeakCheckExtension.class)
  void shouldRejectBadGroupedAllocationArguments(BufferAllocator allocator) {
    assertThatThrownBy(
            () -> TensorUtils.allocateGrouped(allocator, List.of(FLOAT32), List.of(s(1)), 3))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.getMessage()).contains("alignmentBytes=3"));
    assertThatThrownBy(
            () -> TensorUtils.allocateGrouped(allocator, List.of(FLOAT32, INT32), List.of(s(1))))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.getMessage()).contains("same length"));
    assertThatThrownBy(
            () ->
                TensorUtils.allocateGrouped(
                    allocator, List.of(FLOAT32, INT32), List.of(s(1), s(-2))))
        .isInstanceOfSatisfying(TqException.class, e -> assertThat(e.getMessage()).contains("-2"));
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  void AS088_mergeContiguousMemory() {
    assertThat(merge(new long[] {0, 10, 30}, new long[] {10, 20, 10})).isEqualTo(regions(0, 40));
    assertThat(merge(new long[] {0, 100, 200}, new long[] {50, 50, 50}))
        .isEqualTo(regions(0, 50, 100, 50, 200, 50));
    assertThat(merge(new long[] {100, 0, 50}, new long[] {50, 50, 50})).isEqualTo(regions(0, 150));
    assertThat(merge(new long[] {10}, new long[] {100})).isEqualTo(regions(10, 100));
    assertThat(merge(new long[] {}, new long[] {})).isEmpty();
    assertThat(merge(new long[] {0, 10, 20}, new long[] {10, 10, 10})).isEqualTo(regions(0, 30));
    assertThat(merge(new long[] {0, 5, 20}, new long[] {5, 5, 10}))
        .isEqualTo(regions(0, 10, 20, 10));
  }

  @Test
  void AS089_mergeContiguousMemoryLengthMismatch() {
    assertThatThrownBy(() -> merge(new long[] {}, new long[] {10}))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).contains("ptrs and sizes must have the same length");
            });
    assertThatThrownBy(() -> merge(new long[] {0}, new long[] {}))
        .hasMessageContaining("ptrs and sizes must have the same length");
    assertThatThrownBy(() -> merge(new long[] {0}, new long[] {-1}))
        .hasMessageContaining("lengthBytes=-1");
  }

  @Test
  void AS090_mergeContiguousMemoryOverlaps() {
    assertThat(merge(new long[] {0, 0}, new long[] {8, 8})).isEqualTo(regions(0, 8));
    assertThat(merge(new long[] {0, 4}, new long[] {8, 8})).isEqualTo(regions(0, 12));
    assertThat(merge(new long[] {0, 2}, new long[] {100, 3})).isEqualTo(regions(0, 100));
    assertThat(merge(new long[] {50, 0, 10}, new long[] {5, 60, 5})).isEqualTo(regions(0, 60));
  }

  @Test
  void shouldMergeRandomRegionsIntoDisjointCover() {
    long seed = Seeds.seed();
    java.util.Random random = new java.util.Random(seed);
    for (int round = 0; round < 200; round++) {
      int n = random.nextInt(12);
      long[] ptrs = new long[n];
      long[] sizes = new long[n];
      boolean[] covered = new boolean[300];
      for (int i = 0; i < n; i++) {
        ptrs[i] = random.nextInt(250);
        sizes[i] = 1 + random.nextInt(40);
        for (long b = ptrs[i]; b < ptrs[i] + sizes[i]; b++) {
          covered[(int) b] = true;
        }
      }
      List<MemoryRegion> merged = merge(ptrs, sizes);
      boolean[] mergedCover = new boolean[300];
      for (int i = 0; i < merged.size(); i++) {
        MemoryRegion r = merged.get(i);
        if (i > 0) {
          assertThat(r.address()).as("seed " + seed).isGreaterThan(merged.get(i - 1).end());
        }
        for (long b = r.address(); b < r.end(); b++) {
          mergedCover[(int) b] = true;
        }
      }
      assertThat(mergedCover).as("seed " + seed).isEqualTo(covered);
    }
  }
}
