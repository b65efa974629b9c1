package org.transferqueue.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

@ExtendWith(LeakCheckExtension.class)
class RootAllocatorTest {

  @Test
  void shouldAllocateAlignedBufferOfExactLength(BufferAllocator allocator) {
    try (NativeBuffer buffer = allocator.allocate(1000)) {
      assertThat(buffer.lengthBytes()).isEqualTo(1000);
      assertThat(buffer.segment().byteSize()).isEqualTo(1000);
      assertThat(buffer.capacityBytes()).isEqualTo(1024);
      assertThat(buffer.segment().address() % BufferAllocator.ALIGNMENT_BYTES).isZero();
      assertThat(allocator.allocatedBytes()).isEqualTo(1024);
      assertThat(allocator.outstandingBuffers()).isEqualTo(1);
    }
    assertThat(allocator.allocatedBytes()).isZero();
    assertThat(allocator.outstandingBuffers()).isZero();
    assertThat(allocator.peakBytes()).isEqualTo(1024);
  }

  @Test
  void shouldRefuseWithOutOfMemoryWhenTheOperatingSystemRefusesABlock() {
    // 64 TiB: no limit stops it in an unlimited root, the operating system does.
    long refused = 1L << 46;
    try (RootAllocator unlimited =
        RootAllocator.builder()
            .name("unlimited")
            .limitBytes(Long.MAX_VALUE)
            .leakPolicy(LeakPolicy.THROW)
            .build()) {
      assertThatThrownBy(() -> unlimited.allocate(refused))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("refused a block of " + refused)
          .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.OUT_OF_MEMORY));
      assertThat(unlimited.allocatedBytes()).isZero();
      try (NativeBuffer after = unlimited.allocate(4096)) {
        assertThat(after.lengthBytes()).isEqualTo(4096);
      }
    }
  }

  @Test
  void shouldReuseReleasedBlockWithoutCreatingNewOne(RootAllocator allocator) {
    long address;
    try (NativeBuffer first = allocator.allocate(1 << 20)) {
      address = first.segment().address();
    }
    long created = allocator.blocksCreated();
    try (NativeBuffer second = allocator.allocate((1 << 20) - 7)) {
      assertThat(second.segment().address()).isEqualTo(address);
    }
    assertThat(allocator.blocksCreated()).isEqualTo(created);
    assertThat(allocator.pooledBytes()).isEqualTo(1 << 20);
  }

  @Test
  void shouldServePreallocatedBlocksWithoutGrowing(RootAllocator allocator) {
    allocator.preallocate(4096, 8);
    long created = allocator.blocksCreated();
    List<NativeBuffer> buffers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      buffers.add(allocator.allocate(4096));
    }
    assertThat(allocator.blocksCreated()).isEqualTo(created);
    buffers.forEach(NativeBuffer::close);
  }

  @Test
  void shouldRejectAllocationOverChildLimitWithoutSideEffects(BufferAllocator allocator) {
    try (BufferAllocator child = allocator.newChildAllocator("unit-0", 8192);
        NativeBuffer held = child.allocate(4096)) {
      assertThatThrownBy(() -> child.allocate(8192))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.OUT_OF_MEMORY))
          .hasMessageContaining("unit-0")
          .hasMessageContaining("limitBytes=8192");
      assertThat(child.allocatedBytes()).isEqualTo(4096);
      assertThat(allocator.allocatedBytes()).isEqualTo(4096);
      assertThat(held.refCount()).isEqualTo(1);
    }
  }

  @Test
  void shouldCountChildAllocationsInParent(BufferAllocator allocator) {
    try (BufferAllocator child = allocator.newChildAllocator("conn", 1 << 20);
        NativeBuffer buffer = child.allocate(100)) {
      assertThat(allocator.allocatedBytes()).isEqualTo(128);
      assertThat(child.allocatedBytes()).isEqualTo(128);
      assertThat(allocator.outstandingBuffers()).isZero();
      assertThat(child.outstandingBuffers()).isEqualTo(1);
      assertThat(buffer.allocator()).isSameAs(child);
    }
  }

  @Test
  void shouldTrimPooledBlocksWhenRootLimitNeedsRoom() {
    try (RootAllocator root =
        RootAllocator.builder().limitBytes(1 << 20).leakPolicy(LeakPolicy.THROW).build()) {
      root.allocate(1 << 19).close();
      root.allocate(1 << 19).close(); // reuses the pooled block
      assertThat(root.reservedBytes()).isEqualTo(1 << 19);
      try (NativeBuffer big = root.allocate(1 << 20)) {
        assertThat(big.lengthBytes()).isEqualTo(1 << 20);
        assertThat(root.reservedBytes()).isEqualTo(1 << 20);
      }
    }
  }

  @Test
  void shouldThrowLeakWhenClosedWithOutstandingBuffer() {
    RootAllocator root =
        RootAllocator.builder()
            .name("leaky")
            .leakPolicy(LeakPolicy.THROW)
            .trackAllocationSites(true)
            .build();
    NativeBuffer leaked = root.allocate(64);
    assertThatThrownBy(root::close)
        .isInstanceOf(TqException.class)
        .hasMessageContaining("leaky")
        .hasMessageContaining("1 outstanding buffers")
        .satisfies(e -> assertThat(e.getSuppressed()).isNotEmpty());
    assertThat(root.leakCount()).isEqualTo(1);
    leaked.close();
  }

  @Test
  void shouldLogAndCountLeakUnderLogPolicy() {
    RootAllocator root = RootAllocator.builder().leakPolicy(LeakPolicy.LOG).build();
    BufferAllocator child = root.newChildAllocator("forgotten", 1024);
    root.close();
    assertThat(root.leakCount()).isEqualTo(1);
    child.close();
  }

  @Test
  void shouldRejectNegativeLengthAndUseAfterClose(BufferAllocator allocator) {
    assertThatThrownBy(() -> allocator.allocate(-1))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("lengthBytes=-1");
    BufferAllocator child = allocator.newChildAllocator("closed", 1024);
    child.close();
    child.close();
    assertThatThrownBy(() -> child.allocate(1))
        .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.CLOSED));
  }

  @Test
  void shouldReleaseOnlyAfterLastReference(BufferAllocator allocator) {
    NativeBuffer buffer = allocator.allocate(256);
    buffer.retain();
    assertThat(buffer.release()).isFalse();
    assertThat(allocator.outstandingBuffers()).isEqualTo(1);
    assertThat(buffer.release()).isTrue();
    assertThat(allocator.outstandingBuffers()).isZero();
    assertThatThrownBy(buffer::release)
        .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
    assertThatThrownBy(buffer::retain).isInstanceOf(TqException.class);
  }

  @Test
  void shouldKeepAccountingExactUnderConcurrentAllocation(BufferAllocator allocator)
      throws Exception {
    try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
      List<Future<Long>> results = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        final int seed = t;
        results.add(
            pool.submit(
                () -> {
                  long sum = 0;
                  for (int i = 0; i < 2000; i++) {
                    try (NativeBuffer b = allocator.allocate(64L << ((i + seed) % 8))) {
                      MemorySegment s = b.segment();
                      s.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, i);
                      sum += s.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
                    }
                  }
                  return sum;
                }));
      }
      for (Future<Long> f : results) {
        assertThat(f.get()).isEqualTo(1999L * 2000 / 2);
      }
    }
    assertThat(allocator.allocatedBytes()).isZero();
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  void shouldUsePowersOfTwoForSmallBlocksAndQuarterStepsForLargeOnes() {
    assertThat(BlockPool.blockSize(1)).isEqualTo(64);
    assertThat(BlockPool.blockSize(1000)).isEqualTo(1024);
    assertThat(BlockPool.blockSize(1 << 20)).isEqualTo(1 << 20);
    assertThat(BlockPool.blockSize((1 << 20) + 1)).isEqualTo(5L << 18);
    assertThat(BlockPool.blockSize((100L << 20) + 1)).isEqualTo(112L << 20);
    assertThat(BlockPool.blockSize(128L << 20)).isEqualTo(128L << 20);
    java.util.Random random = new java.util.Random(42);
    for (int i = 0; i < 10_000; i++) {
      long length = 1 + (random.nextLong() & ((1L << 40) - 1));
      long block = BlockPool.blockSize(length);
      assertThat(block).as("length=%d", length).isGreaterThanOrEqualTo(length);
      if (length > 1 << 20) {
        assertThat((double) block / length).as("length=%d", length).isLessThanOrEqualTo(1.25);
      }
    }
  }

  @Test
  void shouldReuseALargeBlockOfAFineClass(RootAllocator allocator) {
    long length = (3L << 20) + 12345;
    long address;
    try (NativeBuffer first = allocator.allocate(length)) {
      assertThat(first.capacityBytes()).isEqualTo(7L << 19);
      address = first.segment().address();
    }
    long created = allocator.blocksCreated();
    try (NativeBuffer second = allocator.allocate((7L << 19) - 10)) {
      assertThat(second.segment().address()).isEqualTo(address);
    }
    assertThat(allocator.blocksCreated()).isEqualTo(created);
  }
}
