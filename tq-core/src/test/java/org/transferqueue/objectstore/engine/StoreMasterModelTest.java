package org.transferqueue.objectstore.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.engine.StoreMaster.Allocation;
import org.transferqueue.objectstore.engine.StoreMaster.ReadTicket;
import org.transferqueue.objectstore.engine.StoreMaster.WriteTicket;
import org.transferqueue.testing.Seeds;

/**
 * Random sequences of starts, ends, revokes, reads, removes, clock jumps and sweeps on the master,
 * checked after every step: memory accounting matches the live allocations, live allocations never
 * overlap, and memory a reader holds is never freed or rewritten.
 */
@ExtendWith(LeakCheckExtension.class)
class StoreMasterModelTest {
  private static final long SLAB = 16 << 10;
  private static final ReplicateConfig[] CONFIGS = {
    ReplicateConfig.DEFAULT,
    ReplicateConfig.builder().withHardPin(true).build(),
    ReplicateConfig.builder().withSoftPin(true).build()
  };

  @Test
  void shouldKeepAccountingAndReaderMemoryIntactWhenOperationsInterleave(
      BufferAllocator allocator) {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    ManualClock clock = new ManualClock();
    try (NativeBuffer slab0 = allocator.allocate(SLAB);
        NativeBuffer slab1 = allocator.allocate(SLAB)) {
      StoreMaster master =
          new StoreMaster(
              List.of(slab0.segment(), slab1.segment()),
              MasterConfig.builder().clock(clock).build());
      Set<Allocation> seen = Collections.newSetFromMap(new IdentityHashMap<>());
      Map<Allocation, Byte> stamp = new IdentityHashMap<>();
      List<WriteTicket> writes = new ArrayList<>();
      List<ReadTicket> reads = new ArrayList<>();
      byte nextStamp = 1;
      for (int step = 0; step < 5_000; step++) {
        String key = "k" + random.nextInt(12);
        switch (random.nextInt(9)) {
          case 0, 1 -> {
            WriteTicket ticket =
                master.startWrite(
                    key,
                    1 + random.nextInt(3000),
                    CONFIGS[random.nextInt(CONFIGS.length)],
                    random.nextBoolean());
            if (ticket.code() == 0) {
              Allocation allocation = ticket.allocation();
              seen.add(allocation);
              allocation.memory.fill(nextStamp);
              stamp.put(allocation, nextStamp);
              nextStamp = (byte) (nextStamp == 127 ? 1 : nextStamp + 1);
              writes.add(ticket);
            } else {
              assertThat(ticket.code()).as("seed=%d", seed).isIn(-705, -200);
            }
          }
          case 2, 3 -> {
            if (!writes.isEmpty()) {
              WriteTicket ticket = writes.remove(random.nextInt(writes.size()));
              int code =
                  random.nextInt(4) == 0 ? master.revokeWrite(ticket) : master.endWrite(ticket);
              assertThat(code).as("seed=%d", seed).isIn(0, -601, -704);
            }
          }
          case 4 -> {
            ReadTicket ticket = master.acquireRead(key, -1);
            if (ticket.code() == 0) {
              reads.add(ticket);
            } else {
              assertThat(ticket.code()).as("seed=%d", seed).isIn(-703L, -704L);
            }
          }
          case 5 -> {
            if (!reads.isEmpty()) {
              master.releaseReads(reads.remove(random.nextInt(reads.size())));
            }
          }
          case 6 -> {
            int[] codes = new int[1];
            master.remove(List.of(key), random.nextBoolean(), codes);
            assertThat(codes[0]).as("seed=%d", seed).isIn(0, -703, -704, -706);
          }
          case 7 -> clock.advance(Duration.ofSeconds(random.nextInt(40)));
          default -> master.sweep();
        }
        checkInvariants(master, seen, stamp, reads, seed, step);
      }
      master.releaseReads(reads.toArray(new ReadTicket[0]));
      writes.forEach(master::revokeWrite);
      int objects = master.objectCount();
      assertThat(master.removeMatching(key -> true, true)).as("seed=%d", seed).isEqualTo(objects);
      clock.advance(MasterConfig.PUT_START_RELEASE_TIMEOUT_DEFAULT);
      master.sweep();
      assertThat(master.usedBytes()).as("seed=%d", seed).isZero();
      assertThat(master.objectCount()).as("seed=%d", seed).isZero();
      assertThat(master.unpinnedObjects()).as("seed=%d", seed).isZero();
      assertThat(seen).as("seed=%d", seed).allMatch(allocation -> allocation.freed);
    }
  }

  private static void checkInvariants(
      StoreMaster master,
      Set<Allocation> seen,
      Map<Allocation, Byte> stamp,
      List<ReadTicket> reads,
      long seed,
      int step) {
    long live = 0;
    List<Allocation> alive = new ArrayList<>();
    for (Allocation allocation : seen) {
      if (!allocation.freed) {
        live += SlabAllocator.aligned(allocation.size);
        alive.add(allocation);
      }
    }
    assertThat(master.usedBytes()).as("seed=%d step=%d", seed, step).isEqualTo(live);
    alive.sort(
        (a, b) ->
            a.slab != b.slab ? Integer.compare(a.slab, b.slab) : Long.compare(a.offset, b.offset));
    for (int i = 1; i < alive.size(); i++) {
      Allocation previous = alive.get(i - 1);
      Allocation current = alive.get(i);
      if (previous.slab == current.slab) {
        assertThat(previous.offset + previous.size)
            .as("seed=%d step=%d: overlapping allocations", seed, step)
            .isLessThanOrEqualTo(current.offset);
      }
    }
    for (ReadTicket read : reads) {
      Allocation allocation = read.allocation();
      assertThat(allocation.freed)
          .as("seed=%d step=%d: reader's memory freed", seed, step)
          .isFalse();
      assertThat(allocation.writing)
          .as("seed=%d step=%d: a writer writes into a reader's memory", seed, step)
          .isFalse();
      assertThat(allocation.memory.get(ValueLayout.JAVA_BYTE, allocation.size - 1))
          .as("seed=%d step=%d: reader's memory rewritten", seed, step)
          .isEqualTo(stamp.get(allocation));
    }
  }
}
