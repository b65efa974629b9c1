package org.transferqueue.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.TqException;

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
}
