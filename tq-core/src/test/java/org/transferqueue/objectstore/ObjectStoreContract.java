package org.transferqueue.objectstore;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;

/**
 * What every {@link ObjectStore} must do, whatever its engine: Mooncake's client semantics for
 * writes, upserts, reads, removal, argument checks, registration, batches, the copy path, the async
 * twins and the life cycle. An engine's test extends this class and supplies {@link #newStore}
 * (and, if the engine needs servers, {@link #startEngine} and {@link #stopEngine}); every test runs
 * with a leak-checking allocator.
 *
 * <p>The store under test is set up with a {@link #SEGMENT}-byte segment and local buffer, and has
 * an {@code 8 * SEGMENT} arena registered, from which {@link #source} and {@link #destination} hand
 * out fresh slices.
 *
 * @param <S> the store type, so that an engine's own tests can reach its extra methods
 */
@ExtendWith(LeakCheckExtension.class)
public abstract class ObjectStoreContract<S extends ObjectStore> {
  /** The segment and local-buffer size of the store under test. */
  protected static final long SEGMENT = 1 << 20;

  /** A mid-sized object. */
  protected static final long OBJECT = 64 << 10;

  /** No pins, one replica. */
  protected static final ReplicateConfig PLAIN = ReplicateConfig.DEFAULT;

  /** The test's leak-checking allocator. */
  protected BufferAllocator allocator;

  /** The store under test, set up. */
  protected S store;

  /** Registered memory that {@link #source} and {@link #destination} slice. */
  protected NativeBuffer arena;

  private long nextSlice;

  /**
   * Starts whatever the store needs besides itself (servers, nodes); called once per test before
   * {@link #newStore}.
   *
   * @param allocator the test's allocator
   */
  protected void startEngine(BufferAllocator allocator) {}

  /**
   * Creates a store that is not yet set up.
   *
   * @param allocator the test's allocator
   * @return a store the test closes
   */
  protected abstract S newStore(BufferAllocator allocator);

  /** Stops what {@link #startEngine} started, after the store and the arena are closed. */
  protected void stopEngine() {}

  @BeforeEach
  void setUpStore(BufferAllocator allocator) {
    this.allocator = allocator;
    startEngine(allocator);
    store = newStore(allocator);
    assertThat(
            store.setup(
                StoreConfig.builder()
                    .localHostname("node-a:12300")
                    .globalSegmentSize(SEGMENT)
                    .localBufferSize(SEGMENT)
                    .build()))
        .isZero();
    arena = allocator.allocate(8 * SEGMENT);
    assertThat(store.registerBuffer(arena.segment())).isZero();
  }

  @AfterEach
  void tearDownStore() {
    store.close();
    arena.close();
    stopEngine();
  }

  /**
   * A fresh slice of the registered arena filled with {@code pattern}.
   *
   * @param size the slice's length
   * @param pattern the fill byte
   * @return the slice
   */
  protected MemorySegment source(long size, int pattern) {
    MemorySegment slice = arena.segment().asSlice(nextSlice, size);
    nextSlice += (size + 63) & ~63L;
    slice.fill((byte) pattern);
    return slice;
  }

  /**
   * A fresh registered slice filled with 0x5A so that untouched bytes are visible.
   *
   * @param size the slice's length
   * @return the slice
   */
  protected MemorySegment destination(long size) {
    return source(size, 0x5A);
  }

  /**
   * Fails unless every byte of {@code segment} is {@code pattern}.
   *
   * @param segment the bytes
   * @param pattern the expected byte
   */
  protected static void assertFilled(MemorySegment segment, int pattern) {
    for (long i = 0; i < segment.byteSize(); i++) {
      if (segment.get(ValueLayout.JAVA_BYTE, i) != (byte) pattern) {
        throw new AssertionError(
            "byte " + i + " is " + segment.get(ValueLayout.JAVA_BYTE, i) + ", expected " + pattern);
      }
    }
  }

  /**
   * Reads {@code key} into a fresh destination of {@code size} bytes and checks the bytes read.
   *
   * @param key the key
   * @param size the destination's size
   * @param expectedPattern the byte every read byte must have
   * @return the result of {@link ObjectStore#getInto}
   */
  protected long read(String key, long size, int expectedPattern) {
    MemorySegment dst = destination(size);
    long result = store.getInto(key, dst);
    if (result >= 0) {
      assertFilled(dst.asSlice(0, result), expectedPattern);
    }
    return result;
  }

  // ------------------------------------------------------------ round trip

  @Test
  void shouldReturnObjectSizeAndBytesWhenPutThenGetInto() {
    for (long size : new long[] {1, 4096, OBJECT + 1}) {
      String key = "k" + size;
      assertThat(store.putFrom(key, source(size, 7), PLAIN)).isZero();
      MemorySegment dst = destination(size + 100);
      assertThat(store.getInto(key, dst)).isEqualTo(size);
      assertFilled(dst.asSlice(0, size), 7);
      assertFilled(dst.asSlice(size), 0x5A); // bytes past the object untouched
      assertThat(store.getSize(key)).isEqualTo(size);
    }
  }

  // ------------------------------------------------------------ existing-key rule and upsert

  @Test
  void B1_shouldReturnAlreadyExistsAndKeepBytesWhenPutOnPresentKey() {
    assertThat(store.putFrom("k", source(OBJECT, 1), PLAIN)).isZero();
    assertThat(store.putFrom("k", source(OBJECT, 2), PLAIN)).isEqualTo(-705);
    assertThat(store.putFrom("k", source(2 * OBJECT, 3), PLAIN)).isEqualTo(-705);
    assertThat(store.put("k", MemorySegment.ofArray(new byte[] {4}), PLAIN)).isEqualTo(-705);
    assertThat(read("k", OBJECT, 1)).isEqualTo(OBJECT);
  }

  @Test
  void C1_shouldCreateObjectWhenUpsertOnAbsentKey() {
    assertThat(store.upsertFrom("k", source(OBJECT, 1), PLAIN)).isZero();
    assertThat(read("k", OBJECT, 1)).isEqualTo(OBJECT);
  }

  @Test
  void C_shouldUpsertInPlaceAndWithANewSize() {
    assertThat(store.upsertFrom("k", source(4096, 1), PLAIN)).isZero();
    assertThat(store.upsertFrom("k", source(4096, 2), PLAIN)).isZero();
    assertThat(read("k", 4096, 2)).isEqualTo(4096);
    assertThat(store.upsertFrom("k", source(100, 3), PLAIN)).isZero();
    assertThat(read("k", 4096, 3)).isEqualTo(100);
  }

  // ------------------------------------------------------------ removal

  @Test
  void D_shouldRemoveAndReportMissingKeys() {
    store.putFrom("a", source(64, 1), PLAIN);
    store.putFrom("b", source(64, 1), PLAIN);
    store.putFrom("x1", source(64, 1), PLAIN);
    store.putFrom("x2", source(64, 1), PLAIN);
    assertThat(store.remove("a", false)).isZero();
    assertThat(store.remove("a", false)).isEqualTo(-704);
    assertThat(store.getInto("a", destination(64))).isEqualTo(-704);
    assertThat(store.batchRemove(List.of("b", "missing"), true)).containsExactly(0, -704);
    assertThat(store.removeByRegex("^x.*", false)).isEqualTo(2);
    store.putFrom("x3", source(64, 1), PLAIN);
    assertThat(store.batchIsExist(List.of("a", "b", "x1", "x3", "")))
        .containsExactly(0, 0, 0, 1, -600);
    store.putFrom("c", source(64, 1), PLAIN);
    assertThat(store.removeAll(true)).isEqualTo(2);
    assertThat(store.isExist("c")).isZero();
  }

  // ------------------------------------------------------------ parameters and registration

  @Test
  void F1_shouldReturnInvalidParamsWhenMemoryIsNotRegistered() {
    try (NativeBuffer unregistered = allocator.allocate(OBJECT)) {
      MemorySegment heap = MemorySegment.ofArray(new byte[64]);
      assertThat(store.putFrom("k", unregistered.segment(), PLAIN)).isEqualTo(-600);
      assertThat(store.putFrom("k", heap, PLAIN)).isEqualTo(-600);
      assertThat(store.upsertFrom("k", heap, PLAIN)).isEqualTo(-600);
      store.putFrom("k", source(64, 1), PLAIN);
      assertThat(store.getInto("k", unregistered.segment())).isEqualTo(-600);
      assertThat(store.getInto("k", heap)).isEqualTo(-600);
      assertThat(store.batchGetInto(List.of("k"), List.of(heap))).containsExactly(-600);
      // A segment reaching past the end of a registered region is not inside it.
      assertThat(store.registerBuffer(unregistered.segment().asSlice(0, 64))).isZero();
      MemorySegment straddling = unregistered.segment().asSlice(32, 64);
      assertThat(store.getInto("k", straddling)).isEqualTo(-600);
    }
  }

  @Test
  void F2_shouldRejectOverlappingAndUnknownRegions() {
    try (NativeBuffer other = allocator.allocate(OBJECT)) {
      assertThat(store.registerBuffer(arena.segment().asSlice(64, 64))).isEqualTo(-600);
      assertThat(store.registerBuffer(arena.segment())).isEqualTo(-600);
      assertThat(store.registerBuffer(MemorySegment.ofArray(new byte[8]))).isEqualTo(-600);
      assertThat(store.unregisterBuffer(other.segment())).isEqualTo(-600);
      assertThat(store.registerBuffer(other.segment())).isZero();
      assertThat(store.putFrom("k", other.segment(), PLAIN)).isZero();
      assertThat(store.unregisterBuffer(other.segment().asSlice(0, 1))).isZero(); // by address
      assertThat(store.putFrom("k2", other.segment(), PLAIN)).isEqualTo(-600);
    }
  }

  @Test
  void F3_shouldValidateKeysSizesAndDestinations() {
    assertThat(store.putFrom("", source(64, 1), PLAIN)).isEqualTo(-600);
    assertThat(store.putFrom("k", source(0, 1), PLAIN)).isZero(); // Mooncake: nothing created
    assertThat(store.isExist("k")).isZero();
    assertThat(store.put("k", MemorySegment.ofArray(new byte[0]), PLAIN)).isEqualTo(-600);
    assertThat(store.isExist("")).isEqualTo(-600);
    store.putFrom("k", source(100, 1), PLAIN);
    assertThat(store.getInto("k", destination(99))).isEqualTo(-600);
    assertThat(store.getInto("k", destination(100))).isEqualTo(100);
  }

  // ------------------------------------------------------------ batches

  @Test
  void G1_shouldReturnPerKeyResultsWhenBatchPutMixesOutcomes() {
    store.putFrom("old", source(64, 1), PLAIN);
    int[] codes =
        store.batchPutFrom(
            List.of("new", "old", "", "zero", "new"),
            List.of(source(64, 2), source(64, 2), source(64, 2), source(0, 2), source(64, 3)),
            PLAIN);
    assertThat(codes).containsExactly(0, -705, -600, -600, -600);
    assertThat(read("new", 64, 2)).isEqualTo(64);
    assertThat(store.batchPutFrom(List.of("a", "b"), List.of(source(64, 1)), PLAIN))
        .containsExactly(-600, -600);
    assertThat(store.isExist("a")).isZero();
  }

  @Test
  void G2_shouldUpsertAndReadBatchesPerKey() {
    store.putFrom("b", source(64, 1), PLAIN);
    assertThat(
            store.batchUpsertFrom(
                List.of("a", "b", "c"),
                List.of(source(64, 2), source(128, 3), source(1, 4)),
                PLAIN))
        .containsExactly(0, 0, 0);
    MemorySegment a = destination(64);
    MemorySegment b = destination(128);
    MemorySegment c = destination(1);
    MemorySegment small = destination(64);
    long[] sizes =
        store.batchGetInto(
            List.of("a", "b", "missing", "b", "c"), List.of(a, b, destination(8), small, c));
    assertThat(sizes).containsExactly(64, 128, -704, -600, 1);
    assertFilled(a, 2);
    assertFilled(b, 3);
    assertFilled(c, 4);
    assertFilled(small, 0x5A);
    assertThat(store.batchGetInto(List.of("a"), List.of())).containsExactly(-600);
  }

  @Test
  void G3_shouldReturnSingleResultAndOwnedBuffersOnCopyPath() {
    MemorySegment heapValue = MemorySegment.ofArray(new byte[] {1, 2, 3});
    assertThat(store.put("a", heapValue, PLAIN)).isZero();
    assertThat(
            store.putBatch(
                List.of("b", "a", "c"),
                List.of(heapValue, heapValue, MemorySegment.ofArray(new byte[] {9})),
                PLAIN))
        .isEqualTo(-705);
    assertThat(store.isExist("c")).isEqualTo(1); // later keys still stored
    assertThat(store.upsertBatch(List.of("a", "c"), List.of(heapValue, heapValue), PLAIN)).isZero();
    assertThat(store.put("big", MemorySegment.ofArray(new byte[(int) SEGMENT + 1]), PLAIN))
        .isEqualTo(-600);

    try (NativeBuffer a = store.get("a")) {
      assertThat(a.segment().toArray(ValueLayout.JAVA_BYTE)).containsExactly(1, 2, 3);
    }
    assertThat(store.get("missing")).isNull();
    List<NativeBuffer> batch = store.getBatch(List.of("c", "missing"));
    try (NativeBuffer c = batch.get(0)) {
      assertThat(c.lengthBytes()).isEqualTo(3);
      assertThat(batch.get(1)).isNull();
    }
  }

  @Test
  void G3_shouldReturnOwnedBuffersOnTheCopyPath() {
    MemorySegment value = source(3, 0);
    value.copyFrom(MemorySegment.ofArray(new byte[] {1, 2, 3}));
    assertThat(store.put("a", value, PLAIN)).isZero();
    assertThat(store.putBatch(List.of("b", "a"), List.of(value, value), PLAIN)).isEqualTo(-705);
    assertThat(store.isExist("b")).isEqualTo(1);
    assertThat(store.put("big", source(SEGMENT + 1, 1), PLAIN)).isEqualTo(-600);
    try (NativeBuffer a = store.get("a")) {
      assertThat(a.segment().toArray(ValueLayout.JAVA_BYTE)).containsExactly(1, 2, 3);
    }
    assertThat(store.get("missing")).isNull();
    List<NativeBuffer> batch = store.getBatch(List.of("b", "missing"));
    try (NativeBuffer b = batch.get(0)) {
      assertThat(b.lengthBytes()).isEqualTo(3);
      assertThat(batch.get(1)).isNull();
    }
  }

  // ------------------------------------------------------------ async and life cycle

  @Test
  void H1_shouldCompleteAsyncTwinsWithTheBlockingResults() throws Exception {
    assertThat(store.putFromAsync("k", source(64, 1), PLAIN).get()).isZero();
    assertThat(store.putFromAsync("k", source(64, 1), PLAIN).get()).isEqualTo(-705);
    assertThat(store.getIntoAsync("k", destination(64)).get()).isEqualTo(64);
    assertThat(
            store
                .batchUpsertFromAsync(
                    List.of("k", "j"), List.of(source(64, 2), source(8, 3)), PLAIN)
                .get())
        .containsExactly(0, 0);
    MemorySegment dst = destination(64);
    assertThat(store.batchGetIntoAsync(List.of("k"), List.of(dst)).get()).containsExactly(64);
    assertFilled(dst, 2);
    assertThat(store.getSizeAsync("j").get()).isEqualTo(8);
    assertThat(store.isExistAsync("j").get()).isEqualTo(1);
    assertThat(store.removeAsync("j", true).get()).isZero();
    assertThat(store.removeAllAsync(true).get()).isEqualTo(1);
    try (NativeBuffer none = store.getAsync("k").get()) {
      assertThat(none).isNull();
    }
  }

  @Test
  void H2_shouldReturnInvalidParamsWhenNotSetUpOrClosed() throws Exception {
    try (ObjectStore fresh = newStore(allocator)) {
      assertThat(fresh.putFrom("k", source(64, 1), PLAIN)).isEqualTo(-600);
      assertThat(fresh.putFromAsync("k", source(64, 1), PLAIN).get()).isEqualTo(-600);
      assertThat(fresh.hostname()).isEmpty();
    }
    assertThat(store.hostname()).isEqualTo("node-a:12300");
    store.putFrom("k", source(64, 1), PLAIN);
    assertThat(store.closeStore()).isZero();
    assertThat(store.closeStore()).isZero();
    assertThat(store.isExist("k")).isEqualTo(-600);
    assertThat(store.getIntoAsync("k", destination(64)).get()).isEqualTo(-600);
    assertThat(store.putFrom("j", source(64, 1), PLAIN)).isEqualTo(-600);
    assertThat(store.putFromAsync("j", source(64, 1), PLAIN).get()).isEqualTo(-600);
    assertThat(store.setup(StoreConfig.builder().build())).isEqualTo(-600);
  }
}
