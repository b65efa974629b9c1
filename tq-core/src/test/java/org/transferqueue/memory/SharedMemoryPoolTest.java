package org.transferqueue.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.testing.Seeds;

/** The shared-memory pool: regions, reuse, dedicated segments, limits and accounting. */
@ExtendWith({LeakCheckExtension.class, Seeds.class})
class SharedMemoryPoolTest {
  private static final long SEGMENT = 1 << 20;

  @Test
  void shouldHandOutAlignedRegionsAndReuseFreedSpaceWithoutGrowing(BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    try (SharedMemoryPool pool = new SharedMemoryPool(allocator, "shm", 8 * SEGMENT, SEGMENT)) {
      List<NativeBuffer> live = new ArrayList<>();
      for (int round = 0; round < 2000; round++) {
        if (!live.isEmpty() && (live.size() > 20 || random.nextBoolean())) {
          live.remove(random.nextInt(live.size())).close();
          continue;
        }
        NativeBuffer region = pool.allocate(random.nextInt(40_000));
        assertThat(region.segment().address() % 64).isZero();
        SharedMemoryPool.Location location = pool.locate(region.segment());
        assertThat(location.offset()).isGreaterThanOrEqualTo(SharedSegment.HEADER_BYTES);
        assertThat(location.region()).isNotNull();
        live.add(region);
      }
      assertThat(pool.segmentCount()).isEqualTo(1);
      assertThat(allocator.allocatedBytes()).isEqualTo(SEGMENT);
      live.forEach(NativeBuffer::close);
      assertThat(pool.usedBytes()).isZero();
      assertThat(pool.segmentCount()).isEqualTo(1);
    }
    assertThat(allocator.allocatedBytes()).isZero();
  }

  @Test
  void shouldGiveALargeRegionItsOwnSegmentAndKeepItForReuseUntilTrimmed(BufferAllocator allocator) {
    try (SharedMemoryPool pool = new SharedMemoryPool(allocator, "shm", 8 * SEGMENT, SEGMENT)) {
      NativeBuffer small = pool.allocate(100);
      NativeBuffer large = pool.allocate(3 * SEGMENT + 1);
      assertThat(pool.segmentCount()).isEqualTo(2);
      long dedicated = (3 * SEGMENT + 64 + 64 + 4095) / 4096 * 4096;
      assertThat(pool.segmentBytes()).isEqualTo(SEGMENT + dedicated);
      assertThat(allocator.allocatedBytes()).isEqualTo(SEGMENT + dedicated);
      large.segment().set(ValueLayout.JAVA_BYTE, 3 * SEGMENT, (byte) 1);
      long largeAddress = large.segment().address();
      large.close();
      assertThat(pool.segmentCount()).isEqualTo(2);
      try (NativeBuffer again = pool.allocate(3 * SEGMENT)) {
        assertThat(again.segment().address()).isEqualTo(largeAddress);
        assertThat(pool.segmentCount()).isEqualTo(2);
      }
      assertThat(pool.trim()).isEqualTo(dedicated);
      assertThat(pool.segmentCount()).isEqualTo(1);
      assertThat(allocator.allocatedBytes()).isEqualTo(SEGMENT);
      small.close();
    }
  }

  @Test
  void shouldRefuseARegionOverTheLimitWithoutGrowing(BufferAllocator allocator) {
    try (SharedMemoryPool pool = new SharedMemoryPool(allocator, "shm", 2 * SEGMENT, SEGMENT)) {
      NativeBuffer first = pool.allocate(SEGMENT - 64);
      NativeBuffer second = pool.allocate(SEGMENT - 64);
      assertThatThrownBy(() -> pool.allocate(64))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.OUT_OF_MEMORY))
          .hasMessageContaining("shared_memory_limit_bytes=" + 2 * SEGMENT);
      assertThat(pool.segmentCount()).isEqualTo(2);
      first.close();
      second.close();
      assertThat(pool.locate(first.segment())).isNull();
    }
  }

  @Test
  void shouldCloseEmptySegmentsWhenANewOneWouldNotFitUnderTheLimit(BufferAllocator allocator) {
    try (SharedMemoryPool pool = new SharedMemoryPool(allocator, "shm", 4 * SEGMENT, SEGMENT)) {
      pool.allocate(2 * SEGMENT).close();
      assertThat(pool.segmentCount()).isEqualTo(1);
      try (NativeBuffer other = pool.allocate(3 * SEGMENT)) {
        // The empty 2 MiB segment made room for the 3 MiB one.
        assertThat(other.lengthBytes()).isEqualTo(3 * SEGMENT);
        assertThat(pool.segmentCount()).isEqualTo(1);
        assertThat(pool.segmentBytes()).isGreaterThan(3 * SEGMENT);
      }
    }
    assertThat(allocator.allocatedBytes()).isZero();
  }

  @Test
  void shouldLetAnotherMappingOfTheSegmentSeeTheBytesAndRefuseAWrongKey(BufferAllocator allocator) {
    try (SharedMemoryPool pool = new SharedMemoryPool(allocator, "shm", SEGMENT, SEGMENT);
        NativeBuffer region = pool.allocate(4096)) {
      SharedMemoryPool.Location location = pool.locate(region.segment());
      SharedSegment segment = location.segment();
      long pid = ProcessHandle.current().pid();
      try (SharedSegment other =
          SharedSegment.open(pid, segment.fd(), segment.key(), segment.size())) {
        region.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 8, 0x1234_5678L);
        assertThat(other.memory().get(ValueLayout.JAVA_LONG_UNALIGNED, location.offset() + 8))
            .isEqualTo(0x1234_5678L);
      }
      assertThatThrownBy(() -> SharedSegment.open(pid, segment.fd(), new byte[16], segment.size()))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR));
      assertThatThrownBy(() -> SharedSegment.open(pid, segment.fd(), segment.key(), 8192))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR));
    }
  }
}
