package org.transferqueue.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(LeakCheckExtension.class)
class NativeBufferTest {

  @Test
  void shouldThrowOnAccessToAReleasedBufferWhenUseAfterReleaseIsChecked(BufferAllocator allocator) {
    NativeBuffer buffer = allocator.allocate(256);
    MemorySegment stale = buffer.segment();
    MemorySegment staleView = stale.asSlice(64, 64);
    stale.set(ValueLayout.JAVA_LONG, 0, 42);
    buffer.close();

    // The block is pooled: without the check the next lease would get these same bytes.
    try (NativeBuffer next = allocator.allocate(256)) {
      assertThat(next.segment().address()).isEqualTo(stale.address());
      next.segment().set(ValueLayout.JAVA_LONG, 0, 7);

      assertThatThrownBy(() -> stale.get(ValueLayout.JAVA_LONG, 0))
          .isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> staleView.set(ValueLayout.JAVA_BYTE, 0, (byte) 1))
          .isInstanceOf(IllegalStateException.class);
      assertThat(next.segment().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(7);
    }
  }

  @Test
  void shouldNotCheckUseAfterReleaseByDefault() {
    try (RootAllocator plain = RootAllocator.builder().name("plain").build()) {
      NativeBuffer buffer = plain.allocate(256);
      MemorySegment stale = buffer.segment();
      buffer.close();
      try (NativeBuffer next = plain.allocate(256)) {
        next.segment().set(ValueLayout.JAVA_LONG, 0, 7);
        // The hazard the debug mode exists for: a stale segment silently reads the next lease.
        assertThat(stale.get(ValueLayout.JAVA_LONG, 0)).isEqualTo(7);
      }
    }
  }

  @Test
  void shouldNotTakeAnotherHoldersReferenceWhenOneHolderClosesTwice(BufferAllocator allocator) {
    NativeBuffer owner = allocator.allocate(128);
    NativeBuffer sender = owner.retain();
    assertThat(owner.refCount()).isEqualTo(2);

    sender.close();
    sender.close();

    assertThat(owner.refCount()).isEqualTo(1);
    owner.segment().set(ValueLayout.JAVA_INT, 0, 5);
    assertThat(allocator.outstandingBuffers()).isEqualTo(1);
    owner.close();
    assertThat(owner.refCount()).isZero();
    assertThat(allocator.outstandingBuffers()).isZero();
    owner.close();
  }

  @Test
  void shouldDropExactlyOneReferenceWhenClosesOfOneHandleRace(BufferAllocator allocator)
      throws Exception {
    int threads = 4;
    int rounds = 500;
    try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
      for (int round = 0; round < rounds; round++) {
        NativeBuffer owner = allocator.allocate(64);
        NativeBuffer shared = owner.retain();
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<?>> closes = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          closes.add(
              pool.submit(
                  () -> {
                    start.await();
                    shared.close();
                    return null;
                  }));
        }
        for (Future<?> close : closes) {
          close.get(); // a racing close that threw (ILLEGAL_STATE) fails here
        }
        assertThat(owner.refCount()).as("round %d", round).isEqualTo(1);
        owner.close();
      }
    }
    assertThat(allocator.outstandingBuffers()).isZero();
  }

  @Test
  void shouldFreeOnceWhenTheLastHoldersCloseConcurrently(BufferAllocator allocator)
      throws Exception {
    int holders = 8;
    try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
      for (int round = 0; round < 200; round++) {
        NativeBuffer owner = allocator.allocate(64);
        List<NativeBuffer> handles = new ArrayList<>(List.of(owner));
        for (int h = 1; h < holders; h++) {
          handles.add(owner.retain());
        }
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> closes = new ArrayList<>();
        for (NativeBuffer handle : handles) {
          closes.add(
              pool.submit(
                  () -> {
                    go.await();
                    handle.close();
                    handle.close();
                    return null;
                  }));
        }
        go.countDown();
        for (Future<?> close : closes) {
          close.get();
        }
        assertThat(owner.refCount()).isZero();
        assertThat(allocator.outstandingBuffers()).as("round %d", round).isZero();
      }
    }
  }
}
