package org.transferqueue.objectstore.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.transferqueue.testing.Seeds;

class SlabAllocatorTest {

  @Test
  void shouldFailWhenNoFreeRangeIsLongEnough() {
    SlabAllocator slab = new SlabAllocator(1024);
    assertThat(slab.allocate(1024)).isZero();
    assertThat(slab.allocate(1)).isEqualTo(-1);
    slab.free(0, 1024);
    assertThat(slab.allocate(1000)).isZero();
  }

  @Test
  void shouldCoalesceNeighboursWhenFreed() {
    SlabAllocator slab = new SlabAllocator(4 * 64);
    long a = slab.allocate(64);
    long b = slab.allocate(64);
    long c = slab.allocate(64);
    slab.free(a, 64);
    slab.free(c, 64);
    assertThat(slab.largestFree()).isEqualTo(128); // c merged with the tail, a alone
    slab.free(b, 64);
    assertThat(slab.freeRanges()).isEqualTo(1);
    assertThat(slab.largestFree()).isEqualTo(256);
  }

  @Test
  void shouldPickTheSmallestFittingRangeWhenSeveralFit() {
    SlabAllocator slab = new SlabAllocator(10 * 64);
    long a = slab.allocate(3 * 64);
    long keep1 = slab.allocate(64);
    long b = slab.allocate(64);
    long keep2 = slab.allocate(64);
    slab.free(a, 3 * 64);
    slab.free(b, 64);
    assertThat(keep1).isNotEqualTo(keep2);
    assertThat(slab.allocate(10)).isEqualTo(b);
  }

  @Test
  void shouldNeverOverlapAndRestoreEverythingWhenRandomlyUsed() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    long capacity = 1 << 20;
    SlabAllocator slab = new SlabAllocator(capacity);
    TreeMap<Long, Long> live = new TreeMap<>();
    for (int step = 0; step < 20_000; step++) {
      if (live.isEmpty() || random.nextInt(3) > 0) {
        long size = 1 + random.nextInt(8192);
        long offset = slab.allocate(size);
        if (offset < 0) {
          continue;
        }
        var below = live.floorEntry(offset + SlabAllocator.aligned(size) - 1);
        assertThat(
                below == null || below.getKey() + SlabAllocator.aligned(below.getValue()) <= offset)
            .as("seed=%d: [%d,+%d) overlaps %s", seed, offset, size, below)
            .isTrue();
        assertThat(offset + size).as("seed=%d", seed).isLessThanOrEqualTo(capacity);
        live.put(offset, size);
      } else {
        List<Long> offsets = new ArrayList<>(live.keySet());
        long offset = offsets.get(random.nextInt(offsets.size()));
        slab.free(offset, live.remove(offset));
      }
      long expectedUsed = live.values().stream().mapToLong(SlabAllocator::aligned).sum();
      assertThat(slab.usedBytes()).as("seed=%d", seed).isEqualTo(expectedUsed);
    }
    live.forEach(slab::free);
    assertThat(slab.usedBytes()).as("seed=%d", seed).isZero();
    assertThat(slab.freeRanges()).as("seed=%d", seed).isEqualTo(1);
  }
}
