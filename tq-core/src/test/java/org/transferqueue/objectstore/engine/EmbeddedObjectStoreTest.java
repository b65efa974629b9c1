package org.transferqueue.objectstore.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.objectstore.ObjectStoreContract;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.StoreStatus;
import org.transferqueue.objectstore.engine.StoreMaster.ReadTicket;
import org.transferqueue.objectstore.engine.StoreMaster.WriteTicket;

/**
 * The object-store model's client semantics (§2-§3, checklist §6.8) on the embedded engine: the
 * {@link ObjectStoreContract} and what only the engine shows (tickets, leases on a manual clock,
 * pins, eviction, memory given back).
 */
class EmbeddedObjectStoreTest extends ObjectStoreContract<EmbeddedObjectStore> {
  private static final Duration LEASE = MasterConfig.LEASE_TTL_DEFAULT;
  private static final ReplicateConfig HARD = ReplicateConfig.builder().withHardPin(true).build();
  private static final ReplicateConfig SOFT = ReplicateConfig.builder().withSoftPin(true).build();

  private final ManualClock clock = new ManualClock();

  @Override
  protected EmbeddedObjectStore newStore(BufferAllocator allocator) {
    return EmbeddedObjectStore.create(
        allocator, MasterConfig.builder().clock(clock).asyncThreads(2).build());
  }

  // ------------------------------------------------------------ visibility

  @Test
  void A1_shouldHideObjectWhenItsWriteHasNotEnded() {
    WriteTicket ticket = store.master().startWrite("k", OBJECT, PLAIN, false);
    assertThat(ticket.code()).isZero();
    ticket.allocation().memory.fill((byte) 3);

    assertThat(store.getInto("k", destination(OBJECT))).isEqualTo(-703);
    assertThat(store.isExist("k")).isZero();
    assertThat(store.getSize("k")).isEqualTo(-703);
    assertThat(store.get("k")).isNull();
    assertThat(store.remove("k", true)).isEqualTo(-703);
    assertThat(store.putFrom("k", source(OBJECT, 9), PLAIN)).isEqualTo(-705);

    assertThat(store.master().endWrite(ticket)).isZero();
    assertThat(store.isExist("k")).isEqualTo(1);
    assertThat(read("k", OBJECT, 3)).isEqualTo(OBJECT);
  }

  @Test
  void A2_shouldFreeMemoryAndLeaveKeyAbsentWhenWriteIsRevoked() {
    WriteTicket ticket = store.master().startWrite("k", OBJECT, PLAIN, false);
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT);
    assertThat(store.master().revokeWrite(ticket)).isZero();
    assertThat(store.master().usedBytes()).isZero();
    assertThat(store.getInto("k", destination(OBJECT))).isEqualTo(-704);
    assertThat(store.master().endWrite(ticket)).isEqualTo(-704);
  }

  @Test
  void shouldHidePlacedWritesUntilCommitAndReportEachKeysCode() {
    assertThat(store.putFrom("present", source(OBJECT, 1), PLAIN)).isZero();
    List<String> keys = List.of("a", "present", "", "b", "a", "empty");
    PendingWrites writes =
        store.startWrites(keys, new long[] {OBJECT, OBJECT, 8, 4096, 8, 0}, PLAIN, false);
    assertThat(writes.size()).isEqualTo(6);
    assertThat(new int[] {writes.code(0), writes.code(1), writes.code(2), writes.code(3)})
        .containsExactly(0, -705, -600, 0);
    assertThat(writes.code(4)).isEqualTo(-600); // repeated key
    assertThat(writes.code(5)).isEqualTo(-600); // empty value
    assertThat(writes.destination(1)).isNull();
    assertThat(writes.destination(0).byteSize()).isEqualTo(OBJECT);
    writes.destination(0).fill((byte) 4);
    writes.destination(3).fill((byte) 6);
    assertThat(store.isExist("a")).isZero();
    assertThat(store.getInto("b", destination(4096))).isEqualTo(-703);

    assertThat(writes.commit()).containsExactly(0, -705, -600, 0, -600, -600);
    assertThat(read("a", OBJECT, 4)).isEqualTo(OBJECT);
    assertThat(read("b", 4096, 6)).isEqualTo(4096);
    assertThat(read("present", OBJECT, 1)).isEqualTo(OBJECT);
    writes.close(); // after a commit: nothing to revoke
    assertThat(store.isExist("a")).isEqualTo(1);
  }

  @Test
  void shouldRevokePlacedWritesWhenClosedWithoutCommitOrNotReceived() {
    try (PendingWrites writes =
        store.startWrites(List.of("x", "y"), new long[] {OBJECT, OBJECT}, PLAIN, false)) {
      assertThat(writes.destination(1).byteSize()).isEqualTo(OBJECT);
      assertThat(store.master().usedBytes()).isEqualTo(2 * OBJECT);
    }
    assertThat(store.master().usedBytes()).isZero();
    assertThat(store.getInto("x", destination(OBJECT))).isEqualTo(-704);

    PendingWrites partial =
        store.startWrites(List.of("x", "y"), new long[] {OBJECT, OBJECT}, PLAIN, false);
    partial.destination(0).fill((byte) 2);
    assertThat(partial.commit(new boolean[] {true, false})).containsExactly(0, -800);
    assertThat(read("x", OBJECT, 2)).isEqualTo(OBJECT);
    assertThat(store.isExist("y")).isZero();
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT);
  }

  @Test
  void shouldUpsertPresentKeysThroughPlacedWrites() {
    assertThat(store.putFrom("k", source(OBJECT, 1), PLAIN)).isZero();
    try (PendingWrites writes = store.startWrites(List.of("k"), new long[] {4096}, HARD, true)) {
      writes.destination(0).fill((byte) 9);
      assertThat(writes.commit()).containsExactly(0);
    }
    assertThat(read("k", 4096, 9)).isEqualTo(4096);
  }

  @Test
  void shouldServeReadsFromTheSegmentAndKeepTheirMemoryUntilClosed() {
    assertThat(store.putFrom("a", source(OBJECT, 3), PLAIN)).isZero();
    assertThat(store.putFrom("b", source(4096, 5), PLAIN)).isZero();
    PendingReads reads =
        store.startReads(List.of("a", "missing", "", "b", "b"), new long[] {-1, -1, -1, 100, -1});
    assertThat(reads.size()).isEqualTo(5);
    assertThat(new long[] {reads.result(0), reads.result(1), reads.result(2), reads.result(3)})
        .containsExactly(OBJECT, -704, -600, -600); // b is larger than its capacity of 100
    assertThat(reads.result(4)).isEqualTo(4096);
    assertThat(reads.source(1)).isNull();
    assertThat(reads.source(0).byteSize()).isEqualTo(OBJECT);
    assertThat(reads.source(0).isReadOnly()).isTrue();
    // A forced removal while the read is open frees nothing: the bytes stay as they were.
    assertThat(store.batchRemove(List.of("a"), true)).containsExactly(0);
    assertThat(store.isExist("a")).isZero();
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT + 4096);
    assertThat(store.putFrom("c", source(OBJECT, 7), PLAIN)).isZero();
    for (long j = 0; j < OBJECT; j++) {
      assertThat(reads.source(0).get(ValueLayout.JAVA_BYTE, j)).isEqualTo((byte) 3);
    }
    reads.close();
    reads.close(); // idempotent
    assertThatThrownBy(() -> reads.source(0)).isInstanceOf(IllegalStateException.class);
    // The removed object's memory is free once the read closed.
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT + 4096);
    assertThat(read("c", OBJECT, 7)).isEqualTo(OBJECT);
  }

  @Test
  void shouldRefuseEveryReadWhenTheStoreIsClosed() {
    assertThat(store.putFrom("a", source(OBJECT, 3), PLAIN)).isZero();
    store.closeStore();
    try (PendingReads reads = store.startReads(List.of("a"), new long[] {-1})) {
      assertThat(reads.result(0)).isEqualTo(-600);
      assertThat(reads.source(0)).isNull();
    }
  }

  @Test
  void A3_shouldPreemptAbandonedWriteOnlyAfterDiscardTimeout() {
    WriteTicket zombie = store.master().startWrite("k", OBJECT, PLAIN, false);
    clock.advance(MasterConfig.PUT_START_DISCARD_TIMEOUT_DEFAULT);
    assertThat(store.putFrom("k", source(OBJECT, 1), PLAIN)).isEqualTo(-705);
    clock.advance(Duration.ofNanos(1));
    assertThat(store.putFrom("k", source(OBJECT, 2), PLAIN)).isZero();
    assertThat(read("k", OBJECT, 2)).isEqualTo(OBJECT);
    // The zombie's memory is kept (its writer might still write) until start + release timeout.
    assertThat(store.master().usedBytes()).isEqualTo(2 * OBJECT);
    assertThat(store.master().endWrite(zombie)).isEqualTo(-601);
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT);
  }

  @Test
  void A4_shouldReclaimUnpreemptedZombieWhenReleaseTimeoutPassed() {
    store.master().startWrite("k", OBJECT, PLAIN, false);
    WriteTicket preempted = store.master().startWrite("p", OBJECT, PLAIN, false);
    clock.advance(MasterConfig.PUT_START_DISCARD_TIMEOUT_DEFAULT.plusSeconds(1));
    assertThat(store.putFrom("p", source(OBJECT, 1), PLAIN)).isZero();
    assertThat(store.master().usedBytes()).isEqualTo(3 * OBJECT);

    clock.advance(MasterConfig.PUT_START_RELEASE_TIMEOUT_DEFAULT);
    store.master().sweep();

    assertThat(store.getInto("k", destination(OBJECT))).isEqualTo(-704);
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT); // only "p"'s committed value
    assertThat(store.master().endWrite(preempted)).isEqualTo(-601);
  }

  // ------------------------------------------------------------ upsert

  @Test
  void C2_shouldOverwriteInPlaceWhenSameSizeAndNoReadInFlight() {
    store.putFrom("k", source(OBJECT, 1), PLAIN);
    long address = store.master().committedMemory("k").address();
    assertThat(store.upsertFrom("k", source(OBJECT, 2), PLAIN)).isZero();
    assertThat(store.master().committedMemory("k").address()).isEqualTo(address);
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT);
    assertThat(read("k", OBJECT, 2)).isEqualTo(OBJECT);
  }

  @Test
  void C3_shouldHideObjectWhileInPlaceUpsertRuns() {
    store.putFrom("k", source(OBJECT, 1), PLAIN);
    WriteTicket upsert = store.master().startWrite("k", OBJECT, PLAIN, true);
    assertThat(store.getInto("k", destination(OBJECT))).isEqualTo(-703);
    assertThat(store.isExist("k")).isZero();
    upsert.allocation().memory.fill((byte) 2);
    assertThat(store.master().endWrite(upsert)).isZero();
    assertThat(read("k", OBJECT, 2)).isEqualTo(OBJECT);
  }

  @Test
  void C4_shouldWriteFreshBufferAndSwapWhenSameSizeAndReadInFlight() {
    store.putFrom("k", source(OBJECT, 1), PLAIN);
    ReadTicket reader = store.master().acquireRead("k", OBJECT);
    assertThat(reader.code()).isZero();

    WriteTicket upsert = store.master().startWrite("k", OBJECT, PLAIN, true);
    assertThat(upsert.allocation().memory.address())
        .isNotEqualTo(reader.allocation().memory.address());
    assertThat(read("k", OBJECT, 1)).isEqualTo(OBJECT); // old value readable meanwhile
    upsert.allocation().memory.fill((byte) 2);
    assertThat(store.master().endWrite(upsert)).isZero();

    assertThat(read("k", OBJECT, 2)).isEqualTo(OBJECT);
    assertFilled(reader.allocation().memory, 1); // the reader's bytes never changed
    assertThat(store.master().usedBytes()).isEqualTo(2 * OBJECT);
    store.master().releaseReads(reader);
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT);
  }

  @Test
  void C5_shouldReallocateAndKeepOldBufferForReadersWhenSizeChanges() {
    store.putFrom("k", source(OBJECT, 1), HARD);
    ReadTicket reader = store.master().acquireRead("k", OBJECT);

    assertThat(store.upsertFrom("k", source(2 * OBJECT, 2), PLAIN)).isZero();

    assertThat(read("k", 2 * OBJECT, 2)).isEqualTo(2 * OBJECT);
    assertFilled(reader.allocation().memory, 1);
    assertThat(store.master().usedBytes()).isEqualTo(3 * OBJECT);
    store.master().releaseReads(reader);
    assertThat(store.master().usedBytes()).isEqualTo(2 * OBJECT);
    // The hard pin of the old object is carried over (OR-ed) though the upsert did not ask.
    clock.advance(LEASE.multipliedBy(2));
    fillWithUnpinned("filler", 20);
    assertThat(store.isExist("k")).isEqualTo(1);
  }

  @Test
  void C6_shouldPreemptWriteInProgressWhenUpsertArrives() {
    WriteTicket put = store.master().startWrite("k", OBJECT, PLAIN, false);
    assertThat(store.upsertFrom("k", source(OBJECT, 2), PLAIN)).isZero();
    put.allocation().memory.fill((byte) 9); // the preempted writer keeps writing its own buffer
    assertThat(store.master().endWrite(put)).isEqualTo(-601);
    assertThat(read("k", OBJECT, 2)).isEqualTo(OBJECT);
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT);
  }

  @Test
  void C7_shouldLoseValueWhenInPlaceUpsertIsRevoked() {
    store.putFrom("k", source(OBJECT, 1), PLAIN);
    WriteTicket upsert = store.master().startWrite("k", OBJECT, PLAIN, true);
    assertThat(store.master().revokeWrite(upsert)).isZero();
    assertThat(store.getInto("k", destination(OBJECT))).isEqualTo(-704);
    assertThat(store.master().usedBytes()).isZero();
  }

  @Test
  void C8_shouldKeepOldValueWhenCopyOnWriteUpsertIsRevoked() {
    store.putFrom("k", source(OBJECT, 1), PLAIN);
    ReadTicket reader = store.master().acquireRead("k", OBJECT);
    WriteTicket upsert = store.master().startWrite("k", OBJECT, PLAIN, true);
    assertThat(store.master().revokeWrite(upsert)).isZero();
    store.master().releaseReads(reader);
    assertThat(read("k", OBJECT, 1)).isEqualTo(OBJECT);
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT);
  }

  // ------------------------------------------------------------ leases and removal

  @Test
  void D1_shouldBlockNonForcedRemoveWhileLeasedAndAllowItAfterTtl() {
    store.putFrom("k", source(OBJECT, 1), PLAIN);
    assertThat(store.remove("k", false)).isZero(); // a fresh commit carries no lease
    store.putFrom("k", source(OBJECT, 1), PLAIN);
    assertThat(read("k", OBJECT, 1)).isEqualTo(OBJECT);
    assertThat(store.remove("k", false)).isEqualTo(-706);
    clock.advance(LEASE.minusNanos(1));
    assertThat(store.remove("k", false)).isEqualTo(-706);
    clock.advance(Duration.ofNanos(1));
    assertThat(store.remove("k", false)).isZero();
    assertThat(store.remove("k", false)).isEqualTo(-704);
  }

  @Test
  void D2_shouldGrantLeaseOnlyOnPositiveAnswers() {
    store.putFrom("a", source(OBJECT, 1), PLAIN);
    store.putFrom("b", source(OBJECT, 1), PLAIN);
    store.putFrom("c", source(OBJECT, 1), PLAIN);
    assertThat(store.isExist("a")).isEqualTo(1);
    assertThat(store.getSize("b")).isEqualTo(OBJECT);
    assertThat(store.getInto("c", destination(1))).isEqualTo(-600); // too small: leased anyway
    assertThat(store.batchRemove(List.of("a", "b", "c", "d"), false))
        .containsExactly(-706, -706, -706, -704);
    assertThat(store.isExist("d")).isZero();
  }

  @Test
  void D3_shouldRemoveLeasedObjectWhenForced() {
    store.putFrom("k", source(OBJECT, 1), PLAIN);
    store.isExist("k");
    assertThat(store.remove("k", true)).isZero();
    assertThat(store.isExist("k")).isZero();
  }

  @Test
  void D4_shouldKeepReadersMemoryWhenForcedRemoveRunsDuringRead() {
    store.putFrom("k", source(OBJECT, 1), PLAIN);
    ReadTicket reader = store.master().acquireRead("k", OBJECT);
    assertThat(store.remove("k", true)).isZero();
    // Memory is not reused while the read is in flight: a new object goes elsewhere.
    assertThat(store.putFrom("other", source(OBJECT, 2), PLAIN)).isZero();
    assertFilled(reader.allocation().memory, 1);
    store.master().releaseReads(reader);
    assertThat(store.master().usedBytes()).isEqualTo(OBJECT);
  }

  @Test
  void D5_shouldReturnLeaseExpiredWhenReadEndsAfterTtl() {
    store.putFrom("k", source(OBJECT, 1), PLAIN);
    clock.stepOnEveryReading(LEASE);
    assertThat(store.getInto("k", destination(OBJECT))).isEqualTo(-707);
    assertThat(store.batchGetInto(List.of("k", "x"), List.of(destination(OBJECT), destination(1))))
        .containsExactly(-707, -704);
    assertThat(store.get("k")).isNull();
  }

  @Test
  void D6_shouldSkipLeasedAndIncompleteObjectsWhenRemovingByRegexOrAll() {
    store.putFrom("p0/a", source(OBJECT, 1), PLAIN);
    store.putFrom("p0/b", source(OBJECT, 1), PLAIN);
    store.putFrom("p1/a", source(OBJECT, 1), PLAIN);
    store.putFrom("x/p0/c", source(OBJECT, 1), PLAIN);
    WriteTicket pending = store.master().startWrite("p0/pending", OBJECT, PLAIN, false);
    store.isExist("p0/b");

    assertThat(store.removeByRegex("p0/", false)).isEqualTo(2); // find(): also x/p0/c
    assertThat(store.batchIsExist(List.of("p0/a", "p0/b", "p1/a", "x/p0/c")))
        .containsExactly(0, 1, 1, 0);
    assertThat(store.removeByRegex("^p0/", true)).isEqualTo(1);
    assertThat(store.removeByRegex("(", true)).isEqualTo(-600);
    store.isExist("p1/a");
    assertThat(store.removeAll(false)).isZero();
    assertThat(store.removeAll(true)).isEqualTo(1);
    assertThat(store.master().endWrite(pending)).isZero();
    assertThat(store.removeAll(false)).isEqualTo(1);
  }

  // ------------------------------------------------------------ eviction and pins

  /** Puts {@code count} unpinned objects named prefix+i, one clock millisecond apart. */
  private void fillWithUnpinned(String prefix, int count) {
    for (int i = 0; i < count; i++) {
      clock.advance(Duration.ofMillis(1));
      store.putFrom(prefix + i, source(OBJECT, i), PLAIN);
    }
  }

  @Test
  void E1_shouldEvictOldestUnpinnedFirstWhenUsageCrossesWatermark() {
    store.putFrom("hard", source(OBJECT, 1), HARD);
    clock.advance(Duration.ofMillis(1));
    store.putFrom("soft", source(OBJECT, 1), SOFT);
    fillWithUnpinned("u", 12); // 14 of 16 slots: 87.5 %, below the 90 % watermark
    assertThat(store.master().evictedObjects()).isZero();
    assertThat(store.isExist("u5")).isEqualTo(1); // leased: protected from eviction
    clock.advance(Duration.ofMillis(1));

    store.putFrom("u12", source(OBJECT, 12), PLAIN); // 93.75 %: evict down to 85 %

    assertThat(store.master().evictedObjects()).isEqualTo(2);
    assertThat(store.batchIsExist(List.of("hard", "soft", "u0", "u1", "u2", "u5", "u12")))
        .containsExactly(1, 1, 0, 0, 1, 1, 1);
  }

  @Test
  void E2_shouldEvictSoftPinnedLastAndHardPinnedNever() {
    store.putFrom("soft", source(OBJECT, 1), SOFT); // the oldest lease of all
    fillWithUnpinned("u", 2);
    for (int i = 0; i < 12; i++) {
      store.putFrom("hard" + i, source(OBJECT, 1), HARD);
    }
    // The 15th object crossed the watermark: the two unpinned ones went, the soft pin stayed.
    assertThat(store.master().evictedObjects()).isEqualTo(2);
    assertThat(store.batchIsExist(List.of("soft", "u0", "u1"))).containsExactly(1, 0, 0);
    clock.advance(LEASE); // that check leased "soft"; let the lease run out

    store.putFrom("hard12", source(OBJECT, 1), HARD);
    store.putFrom("hard13", source(OBJECT, 1), HARD);
    // Only pinned objects are left: the soft-pinned one goes in the second pass.
    assertThat(store.master().evictedObjects()).isEqualTo(3);
    assertThat(store.isExist("soft")).isZero();

    store.putFrom("hard14", source(OBJECT, 1), HARD);
    store.putFrom("hard15", source(OBJECT, 1), HARD);
    assertThat(store.putFrom("next", source(OBJECT, 2), PLAIN)).isEqualTo(-200);
    assertThat(store.master().unpinnedObjects()).isZero();
    for (int i = 0; i < 16; i++) {
      assertThat(store.isExist("hard" + i)).isEqualTo(1);
    }
  }

  @Test
  void E2b_shouldEvictSoftPinnedObjectWhenItsPinExpired() {
    store.putFrom("soft", source(OBJECT, 1), SOFT);
    clock.advance(MasterConfig.SOFT_PIN_TTL_DEFAULT);
    fillWithUnpinned("u", 1);
    store.isExist("u0"); // leased, so the expired soft pin is the only candidate of pass 1
    for (int i = 0; i < 13; i++) {
      store.putFrom("hard" + i, source(OBJECT, 1), HARD);
    }
    assertThat(store.batchIsExist(List.of("soft", "u0"))).containsExactly(0, 1);
  }

  @Test
  void E3_shouldReturnNoAvailableHandleWhenNothingCanBeFreedThenSucceedAfterRemove() {
    for (int i = 0; i < 16; i++) {
      assertThat(store.putFrom("hard" + i, source(OBJECT, 1), HARD)).isZero();
    }
    assertThat(store.putFrom("more", source(OBJECT, 2), PLAIN)).isEqualTo(-200);
    assertThat(store.upsertFrom("more", source(OBJECT, 2), PLAIN)).isEqualTo(-200);
    assertThat(store.putFrom("huge", source(2 * SEGMENT, 2), PLAIN)).isEqualTo(-200);
    assertThat(store.remove("hard3", false)).isZero(); // hard pin does not block remove
    assertThat(store.putFrom("more", source(OBJECT, 2), PLAIN)).isZero();
  }

  @Test
  void E4_shouldNotEvictLeasedObjectsWhenSpaceIsNeeded() {
    for (int i = 0; i < 14; i++) {
      store.putFrom("k" + i, source(OBJECT, 1), PLAIN);
      store.isExist("k" + i);
    }
    assertThat(store.putFrom("big", source(3 * OBJECT, 2), PLAIN)).isEqualTo(-200);
    assertThat(store.master().evictedObjects()).isZero();
    clock.advance(LEASE);
    assertThat(store.putFrom("big", source(3 * OBJECT, 2), PLAIN)).isZero();
    assertThat(read("big", 3 * OBJECT, 2)).isEqualTo(3 * OBJECT);
  }

  // ------------------------------------------------------------ lifecycle, leaks

  @Test
  void H3_shouldGiveEveryByteBackWhenClosed() {
    long before = allocator.allocatedBytes();
    for (int i = 0; i < 10; i++) {
      store.putFrom("k" + i, source(OBJECT, i), i % 2 == 0 ? HARD : PLAIN);
    }
    store.master().startWrite("pending", OBJECT, PLAIN, false);
    store.master().acquireRead("k1", OBJECT);
    store.close();
    assertThat(allocator.allocatedBytes()).isEqualTo(before - SEGMENT);
  }

  @Test
  void I1_shouldStoreBestEffortReplicasAndFailWithoutContributedSegment() {
    ReplicateConfig three = ReplicateConfig.builder().replicaNum(3).build();
    assertThat(store.putFrom("k", source(64, 1), three)).isZero(); // one segment name: 1 replica
    assertThat(store.master().usedBytes()).isEqualTo(64);
    try (EmbeddedObjectStore requester =
        EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT)) {
      assertThat(requester.setup(StoreConfig.builder().globalSegmentSize(0).build())).isZero();
      assertThat(requester.registerBuffer(arena.segment())).isZero();
      assertThat(requester.putFrom("k", source(64, 1), PLAIN)).isEqualTo(-200);
    }
  }

  @Test
  void H4_shouldMapErrorCodesToMooncakeNumbers() {
    assertThat(StoreStatus.NO_AVAILABLE_HANDLE.code()).isEqualTo(-200);
    assertThat(StoreStatus.INVALID_PARAMS.code()).isEqualTo(-600);
    assertThat(StoreStatus.REPLICA_IS_NOT_READY.code()).isEqualTo(-703);
    assertThat(StoreStatus.OBJECT_NOT_FOUND.code()).isEqualTo(-704);
    assertThat(StoreStatus.OBJECT_ALREADY_EXISTS.code()).isEqualTo(-705);
    assertThat(StoreStatus.OBJECT_HAS_LEASE.code()).isEqualTo(-706);
    assertThat(StoreStatus.LEASE_EXPIRED.code()).isEqualTo(-707);
    assertThat(StoreStatus.fromCode(-601)).isEqualTo(StoreStatus.ILLEGAL_CLIENT);
    assertThat(StoreStatus.fromCode(1234)).isEqualTo(StoreStatus.OK);
    assertThat(StoreStatus.fromCode(-12345)).isEqualTo(StoreStatus.INTERNAL_ERROR);
  }
}
