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

  /**
   * Many live regions of mixed sizes, each filled with its own byte as soon as it is handed out:
   * two live regions that overlapped would overwrite each other's bytes. A free-list entry read
   * after its removal from the tree (TreeMap reuses the node for the successor) once made the pool
   * hand out space still in use.
   */
  @Test
  void shouldNeverHandOutSpaceThatALiveRegionHolds(BufferAllocator allocator) {
    Random random = new Random(Seeds.seed());
    try (SharedMemoryPool pool = new SharedMemoryPool(allocator, "shm", 8 * SEGMENT, SEGMENT)) {
      List<NativeBuffer> live = new ArrayList<>();
      List<Byte> marks = new ArrayList<>();
      for (int round = 0; round < 5000; round++) {
        if (!live.isEmpty() && (live.size() > 60 || random.nextInt(3) == 0)) {
          int victim = random.nextInt(live.size());
          NativeBuffer region = live.remove(victim);
          byte mark = marks.remove(victim);
          assertFilledWith(region, mark, round);
          region.close();
          continue;
        }
        NativeBuffer region =
            pool.allocate(1 + random.nextInt(random.nextBoolean() ? 256 : 20_000));
        byte mark = (byte) random.nextInt(256);
        region.segment().fill(mark);
        live.add(region);
        marks.add(mark);
      }
      for (int i = 0; i < live.size(); i++) {
        assertFilledWith(live.get(i), marks.get(i), -1);
        live.get(i).close();
      }
      assertThat(pool.usedBytes()).isZero();
      assertThat(pool.regionCount()).isZero();
    }
  }

  private static void assertFilledWith(NativeBuffer region, byte mark, int round) {
    byte[] bytes = region.segment().toArray(ValueLayout.JAVA_BYTE);
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] != mark) {
        throw new AssertionError(
            "round " + round + ": byte " + i + " of " + region + " is " + bytes[i] + ", not "
                + mark);
      }
    }
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

  /**
   * A storage region (an engine slab) gets a segment of its own outside the pool's limit, which no
   * transfer region shares, is accounted once in the pool's allocator and goes with its release,
   * also after the pool closed.
   */
  @Test
  void shouldKeepStorageRegionsInDedicatedSegmentsOutsideTheLimit(BufferAllocator allocator) {
    NativeBuffer slab;
    try (SharedMemoryPool pool = new SharedMemoryPool(allocator, "shm", SEGMENT, SEGMENT)) {
      slab = pool.allocateStorage(3 * SEGMENT + 1);
      assertThat(slab.lengthBytes()).isEqualTo(3 * SEGMENT + 64);
      long storage = pool.storageBytes();
      assertThat(storage).isGreaterThan(3 * SEGMENT).isEqualTo(allocator.allocatedBytes());
      assertThat(pool.segmentBytes()).isZero();
      assertThat(pool.usedBytes()).isZero();
      assertThat(pool.regionCount()).isZero();
      SharedMemoryPool.Location inside = pool.locate(slab.segment().asSlice(4096, 100));
      assertThat(inside.offset()).isEqualTo(SharedSegment.HEADER_BYTES + 4096);
      assertThat(inside.region()).isSameAs(slab);
      // The limit is the transfers': a full standard segment still fits beside the slab.
      try (NativeBuffer region = pool.allocate(SEGMENT - SharedSegment.HEADER_BYTES)) {
        assertThat(pool.locate(region.segment()).segment()).isNotSameAs(inside.segment());
        assertThat(allocator.allocatedBytes()).isEqualTo(storage + SEGMENT);
      }
      assertThat(pool.trim()).isEqualTo(SEGMENT);
      assertThat(pool.trim(slab, 64)).as("a slab is never trimmed").isZero();
    }
    assertThat(allocator.allocatedBytes()).as("the slab outlives the pool").isPositive();
    slab.close();
    assertThat(allocator.allocatedBytes()).isZero();
  }
}
