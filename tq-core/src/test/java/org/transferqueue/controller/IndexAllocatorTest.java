package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

class IndexAllocatorTest {
  private final IndexAllocator allocator = new IndexAllocator();

  @Test
  void shouldHandOutSequentialIndexesAndReuseReleasedOnesFifo() {
    assertThat(allocator.allocate("train_0", 32)).containsExactly(range(0, 32));
    assertThat(allocator.allocate("val_0", 16)).containsExactly(range(32, 48));
    assertThat(allocator.releasePartition("train_0")).containsExactly(range(0, 32));
    int[] reused = allocator.allocate("train_1", 64);
    assertThat(java.util.Arrays.copyOf(reused, 32)).containsExactly(range(0, 32));
    assertThat(java.util.Arrays.copyOfRange(reused, 32, 64)).containsExactly(range(48, 80));
    assertThat(allocator.reusableCount()).isZero();
    assertThat(allocator.allocatedCount()).isEqualTo(80);
  }

  @Test
  void A7_allocatingZeroIndexesIsRejected() {
    assertThatThrownBy(() -> allocator.allocate("x", 0))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("must be larger than 0")
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
  }

  @Test
  void A8_releasingForeignIndexFailsAndUnknownPartitionIsNoOp() {
    allocator.allocate("Y", 2);
    assertThatThrownBy(() -> allocator.releaseIndexes("Y", new int[] {3}))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("do not belong to the specified partition");
    assertThat(allocator.indexesOf("Y")).isEqualTo(IndexSet.of(0, 1));
    assertThat(allocator.releaseIndexes("Z", new int[] {3})).isEmpty();
    assertThat(allocator.reusableCount()).isZero();
  }

  @Test
  void A9_reusedIndexesAreCountedAsAllocated() {
    allocator.allocate("X", 4);
    allocator.releasePartition("X");
    assertThat(allocator.allocate("Y", 2)).containsExactly(0, 1);
    assertThat(allocator.snapshot().pool()).containsExactly(2L, 3L);
    assertThat(allocator.allocatedCount()).isEqualTo(2);
  }

  @Test
  void shouldDeduplicateReleasedIndexesAndAppendAscending() {
    allocator.allocate("p", 8);
    allocator.releaseIndexes("p", new int[] {6, 1, 3, 1});
    assertThat(allocator.snapshot().pool()).containsExactly(1L, 3L, 6L);
    assertThat(allocator.allocate("q", 4)).containsExactly(1, 3, 6, 8);
  }

  @Test
  void shouldDropOwnerWhenLastIndexReleased() {
    allocator.allocate("p", 2);
    allocator.releaseIndexes("p", new int[] {0, 1});
    assertThat(allocator.snapshot().owners()).doesNotContainKey("p");
    assertThat(allocator.indexesOf("p").isEmpty()).isTrue();
  }

  @Test
  void shouldRestoreSnapshot() {
    allocator.allocate("a", 3);
    allocator.allocate("b", 2);
    allocator.releasePartition("a");
    AllocatorState state = allocator.snapshot();
    IndexAllocator other = new IndexAllocator();
    other.restore(state);
    assertThat(other.snapshot()).isEqualTo(state);
    assertThat(other.allocatedCount()).isEqualTo(2);
    assertThat(other.allocate("c", 4)).containsExactly(0, 1, 2, 5);
  }

  private static int[] range(int from, int to) {
    return java.util.stream.IntStream.range(from, to).toArray();
  }

  @Test
  void shouldCountOneGenerationMoreEachTimeAnIndexIsReleased() {
    allocator.allocate("a", 3);
    assertThat(allocator.generations(new long[] {0, 1, 2, 99})).containsExactly(0, 0, 0, 0);
    allocator.releaseIndexes("a", new int[] {1});
    assertThat(allocator.generation(1)).isEqualTo(1);
    assertThat(allocator.allocate("b", 1)).containsExactly(1);
    assertThat(allocator.generation(1)).as("reuse keeps the new generation").isEqualTo(1);
    allocator.releasePartition("a");
    allocator.releasePartition("b");
    assertThat(allocator.generations(new long[] {0, 1, 2})).containsExactly(1, 2, 1);
  }

  @Test
  void shouldRestoreGenerationsFromASnapshot() {
    allocator.allocate("a", 4);
    allocator.releaseIndexes("a", new int[] {2});
    allocator.allocate("a", 1);
    allocator.releaseIndexes("a", new int[] {2});
    AllocatorState state = allocator.snapshot();
    assertThat(state.generations()).containsExactlyEntriesOf(java.util.Map.of(2L, 2L));
    IndexAllocator other = new IndexAllocator();
    other.restore(state);
    assertThat(other.generations(new long[] {0, 1, 2, 3})).containsExactly(0, 0, 2, 0);
    assertThat(other.snapshot()).isEqualTo(state);
  }

  @Test
  void shouldRejectAGenerationOfAnIndexNeverHandedOut() {
    assertThatThrownBy(
            () ->
                new AllocatorState(
                    java.util.Map.of(), java.util.List.of(), 2, java.util.Map.of(5L, 1L)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("index 5");
  }
}
