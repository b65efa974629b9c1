package org.transferqueue.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.TqException;
import org.transferqueue.testing.Seeds;

@ExtendWith(LeakCheckExtension.class)
class RegisteredRegionsTest {

  @Test
  void shouldFindSegmentsInsideRegisteredRegionsOnly(BufferAllocator allocator) {
    try (NativeBuffer whole = allocator.allocate(8192);
        NativeBuffer b = allocator.allocate(4096)) {
      RegisteredRegions regions = new RegisteredRegions();
      MemorySegment region = whole.segment().asSlice(0, 4096);
      regions.register(region);
      assertThat(regions.contains(region)).isTrue();
      assertThat(regions.contains(whole.segment().asSlice(100, 200))).isTrue();
      assertThat(regions.contains(whole.segment().asSlice(4000, 96))).isTrue();
      assertThat(regions.contains(b.segment())).isFalse();
      assertThat(regions.contains(MemorySegment.ofArray(new byte[16]))).isFalse();
      MemorySegment straddling = whole.segment().asSlice(4000, 200);
      assertThat(regions.contains(straddling)).isFalse();
      assertThat(regions.size()).isEqualTo(1);
      assertThat(regions.registeredBytes()).isEqualTo(4096);
    }
  }

  @Test
  void shouldCountDuplicateRegistrationsAndRejectOverlaps(BufferAllocator allocator) {
    try (NativeBuffer whole = allocator.allocate(4096)) {
      RegisteredRegions regions = new RegisteredRegions();
      regions.register(whole.segment());
      regions.register(whole.segment());
      assertThatThrownBy(() -> regions.register(whole.segment().asSlice(64, 64)))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("overlaps");
      assertThat(regions.unregister(whole.segment())).isTrue();
      assertThat(regions.contains(whole.segment())).isTrue();
      assertThat(regions.unregister(whole.segment())).isTrue();
      assertThat(regions.contains(whole.segment())).isFalse();
      assertThat(regions.unregister(whole.segment())).isFalse();
    }
  }

  @Test
  void shouldRejectHeapAndEmptyRegions() {
    RegisteredRegions regions = new RegisteredRegions();
    assertThatThrownBy(() -> regions.register(MemorySegment.ofArray(new byte[8])))
        .hasMessageContaining("native");
    assertThatThrownBy(() -> regions.register(MemorySegment.NULL)).isInstanceOf(TqException.class);
  }

  @Test
  void shouldMatchASimpleModelWhenRegionsComeAndGoRandomly(BufferAllocator allocator) {
    long seed = Seeds.seed();
    java.util.Random random = new java.util.Random(seed);
    try (NativeBuffer slab = allocator.allocate(64 * 256)) {
      RegisteredRegions regions = new RegisteredRegions();
      java.util.TreeMap<Long, long[]> model = new java.util.TreeMap<>(); // start -> {end, refs}
      for (int step = 0; step < 5_000; step++) {
        long offset = 64L * random.nextInt(250);
        long length = 64L * (1 + random.nextInt(6));
        MemorySegment region = slab.segment().asSlice(offset, length);
        long start = region.address();
        long end = start + length;
        if (random.nextBoolean()) {
          var below = model.floorEntry(end - 1);
          boolean same = model.containsKey(start) && model.get(start)[0] == end;
          boolean overlaps = below != null && below.getValue()[0] > start;
          if (same) {
            model.get(start)[1]++;
            regions.register(region);
          } else if (overlaps) {
            assertThatThrownBy(() -> regions.register(region))
                .as("seed=%d", seed)
                .hasMessageContaining("overlaps");
          } else {
            model.put(start, new long[] {end, 1});
            regions.register(region);
          }
        } else {
          long[] known = model.get(start);
          boolean expected = known != null && known[0] == end;
          assertThat(regions.unregister(region)).as("seed=%d", seed).isEqualTo(expected);
          if (expected && --known[1] == 0) {
            model.remove(start);
          }
        }
        MemorySegment probe =
            slab.segment().asSlice(64L * random.nextInt(250), 1 + random.nextInt(200));
        var floor = model.floorEntry(probe.address());
        boolean inside = floor != null && probe.address() + probe.byteSize() <= floor.getValue()[0];
        assertThat(regions.contains(probe)).as("seed=%d step=%d", seed, step).isEqualTo(inside);
        assertThat(regions.size()).as("seed=%d", seed).isEqualTo(model.size());
        long bytes = model.entrySet().stream().mapToLong(e -> e.getValue()[0] - e.getKey()).sum();
        assertThat(regions.registeredBytes()).as("seed=%d", seed).isEqualTo(bytes);
        var at = model.get(start);
        assertThat(regions.regionAt(start) != null).as("seed=%d", seed).isEqualTo(at != null);
      }
      assertThat(regions.clear()).hasSize(model.size());
      assertThat(regions.size()).isZero();
      assertThat(regions.registeredBytes()).isZero();
    }
  }
}
