package org.transferqueue.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.MooncakeKvClient;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.storage.kv.KvCellKind;
import org.transferqueue.storage.kv.KvValues;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.TransportClient;

/** The object-store client semantics through a remote store over two nodes on loopback. */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteObjectStoreTest {
  private static final long SEGMENT = 1 << 20;
  private static final ReplicateConfig PLAIN = ReplicateConfig.DEFAULT;

  private BufferAllocator allocator;
  private final List<EmbeddedObjectStore> engines = new ArrayList<>();
  private final List<StoreNodeServer> servers = new ArrayList<>();
  private RemoteObjectStore store;
  private NativeBuffer arena;
  private long nextSlice;

  @BeforeEach
  void setUp(BufferAllocator allocator) {
    this.allocator = allocator;
    for (int i = 0; i < 2; i++) {
      EmbeddedObjectStore engine =
          EmbeddedObjectStore.create(allocator, MasterConfig.builder().asyncThreads(1).build());
      engines.add(engine);
      assertThat(
              engine.setup(
                  StoreConfig.builder()
                      .localHostname("node-" + i)
                      .globalSegmentSize(4 * SEGMENT)
                      .localBufferSize(SEGMENT)
                      .build()))
          .isZero();
      servers.add(StoreNodeServer.start(engine, RemoteUnits.config(), allocator));
    }
    List<HostPort> nodes = servers.stream().map(StoreNodeServer::address).toList();
    store = RemoteObjectStore.connect(nodes, RemoteUnits.config(), allocator);
    assertThat(
            store.setup(
                StoreConfig.builder()
                    .localHostname("client")
                    .globalSegmentSize(SEGMENT)
                    .localBufferSize(SEGMENT)
                    .build()))
        .isZero();
    arena = allocator.allocate(8 * SEGMENT);
    assertThat(store.registerBuffer(arena.segment())).isZero();
  }

  @AfterEach
  void tearDown() {
    store.close();
    arena.close();
    servers.reversed().forEach(StoreNodeServer::close);
    engines.reversed().forEach(EmbeddedObjectStore::close);
  }

  private MemorySegment source(long size, int pattern) {
    MemorySegment slice = arena.segment().asSlice(nextSlice, size);
    nextSlice += (size + 63) & ~63L;
    slice.fill((byte) pattern);
    return slice;
  }

  private MemorySegment destination(long size) {
    return source(size, 0x5A);
  }

  private static void assertFilled(MemorySegment segment, int pattern) {
    for (long i = 0; i < segment.byteSize(); i++) {
      assertThat(segment.get(ValueLayout.JAVA_BYTE, i)).as("byte " + i).isEqualTo((byte) pattern);
    }
  }

  private long read(String key, long size, int pattern) {
    MemorySegment dst = destination(size);
    long result = store.getInto(key, dst);
    if (result >= 0) {
      assertFilled(dst.asSlice(0, result), pattern);
    }
    return result;
  }

  @Test
  void shouldReturnObjectSizeAndBytesWhenPutThenGetIntoOnEveryNode() {
    List<Integer> nodesUsed = new ArrayList<>();
    for (long size : new long[] {1, 4096, 64 << 10, 100_001}) {
      for (String key : List.of("a" + size, "b" + size, "c" + size)) {
        nodesUsed.add(store.nodeOf(key));
        assertThat(store.putFrom(key, source(size, 7), PLAIN)).isZero();
        MemorySegment dst = destination(size + 100);
        assertThat(store.getInto(key, dst)).isEqualTo(size);
        assertFilled(dst.asSlice(0, size), 7);
        assertFilled(dst.asSlice(size), 0x5A);
        assertThat(store.getSize(key)).isEqualTo(size);
        assertThat(engines.get(store.nodeOf(key)).getSize(key)).isEqualTo(size);
      }
    }
    assertThat(nodesUsed).contains(0, 1);
  }

  @Test
  void B1_shouldReturnAlreadyExistsAndKeepBytesWhenPutOnPresentKey() {
    assertThat(store.putFrom("k", source(4096, 1), PLAIN)).isZero();
    assertThat(store.putFrom("k", source(4096, 2), PLAIN)).isEqualTo(-705);
    assertThat(store.put("k", MemorySegment.ofArray(new byte[] {4}), PLAIN)).isEqualTo(-705);
    assertThat(read("k", 4096, 1)).isEqualTo(4096);
  }

  @Test
  void C_shouldUpsertInPlaceAndWithANewSize() {
    assertThat(store.upsertFrom("k", source(4096, 1), PLAIN)).isZero();
    assertThat(store.upsertFrom("k", source(4096, 2), PLAIN)).isZero();
    assertThat(read("k", 4096, 2)).isEqualTo(4096);
    assertThat(store.upsertFrom("k", source(100, 3), PLAIN)).isZero();
    assertThat(read("k", 4096, 3)).isEqualTo(100);
  }

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

  @Test
  void F_shouldValidateRegistrationKeysSizesAndDestinations() {
    try (NativeBuffer unregistered = allocator.allocate(4096)) {
      MemorySegment heap = MemorySegment.ofArray(new byte[64]);
      assertThat(store.putFrom("k", unregistered.segment(), PLAIN)).isEqualTo(-600);
      assertThat(store.putFrom("k", heap, PLAIN)).isEqualTo(-600);
      assertThat(store.putFrom("", source(64, 1), PLAIN)).isEqualTo(-600);
      assertThat(store.putFrom("k", source(0, 1), PLAIN)).isZero();
      assertThat(store.isExist("k")).isZero();
      store.putFrom("k", source(100, 1), PLAIN);
      assertThat(store.getInto("k", unregistered.segment())).isEqualTo(-600);
      assertThat(store.getInto("k", destination(99))).isEqualTo(-600);
      assertThat(store.getInto("k", destination(100))).isEqualTo(100);
      assertThat(store.registerBuffer(arena.segment())).isEqualTo(-600);
    }
  }

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

  @Test
  void H_shouldCompleteAsyncTwinsAndReturnInvalidParamsWhenClosed() throws Exception {
    assertThat(store.putFromAsync("k", source(64, 1), PLAIN).get()).isZero();
    assertThat(store.putFromAsync("k", source(64, 1), PLAIN).get()).isEqualTo(-705);
    assertThat(store.getIntoAsync("k", destination(64)).get()).isEqualTo(64);
    store.close();
    assertThat(store.putFrom("j", source(64, 1), PLAIN)).isEqualTo(-600);
    assertThat(store.putFromAsync("j", source(64, 1), PLAIN).get()).isEqualTo(-600);
  }

  @Test
  void shouldGiveRpcFailForKeysOfAStoppedNode() {
    String onZero = "n0";
    for (int i = 0; store.nodeOf(onZero) != 0; i++) {
      onZero = "n" + i;
    }
    String onOne = "m0";
    for (int i = 0; store.nodeOf(onOne) != 1; i++) {
      onOne = "m" + i;
    }
    servers.get(1).close();
    assertThat(
            store.batchPutFrom(List.of(onZero, onOne), List.of(source(8, 1), source(8, 1)), PLAIN))
        .containsExactly(0, -900);
    assertThat(store.getInto(onZero, destination(8))).isEqualTo(8);
  }

  @Test
  void shouldAnswerMalformedRequestsWithAnErrorAndKeepServing() {
    HostPort address = servers.getFirst().address();
    try (TransportClient client = new TransportClient(RemoteUnits.config(), allocator)) {
      for (int type = StoreNodeProtocol.WRITE.typeId();
          type <= StoreNodeProtocol.ABORT_LOAD.typeId();
          type++) {
        Request garbage = Request.of(type, new byte[] {(byte) 0xC1});
        assertThatThrownBy(() -> client.call(address, garbage).close())
            .as("type " + type)
            .isInstanceOfSatisfying(
                ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR));
      }
    }
    String key = "k0";
    for (int i = 0; store.nodeOf(key) != 0; i++) {
      key = "k" + i;
    }
    assertThat(store.putFrom(key, source(64, 9), PLAIN)).isZero();
    assertThat(read(key, 64, 9)).isEqualTo(64);
  }

  @Test
  void shouldRoundTripMooncakeKvClientThroughTwoNodes() {
    try (MooncakeKvClient client =
        MooncakeKvClient.builder()
            .store(store)
            .allocator(allocator)
            .config(MooncakeStoreConfig.builder().build())
            .nanoClock(System::nanoTime)
            .operationTimeout(Duration.ofSeconds(30))
            .build()) {
      List<String> keys = new ArrayList<>();
      List<Object> values = new ArrayList<>();
      List<Tensor> tensors = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        keys.add("t" + i);
        Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {i, i + 1, i + 2}, 3);
        tensors.add(t);
        values.add(t);
      }
      keys.add("o");
      values.add(Map.of("a", 1L, "b", "text"));
      List<KvCellKind> kinds = new ArrayList<>();
      for (Object v : values) {
        kinds.add(v instanceof Tensor ? KvCellKind.TENSOR : KvCellKind.OBJECT);
      }
      try {
        List<Map<String, Object>> meta = client.put(keys, values, kinds);
        List<long[]> shapes = new ArrayList<>();
        List<DType> dtypes = new ArrayList<>();
        for (Object v : values) {
          shapes.add(v instanceof Tensor ? new long[] {3} : null);
          dtypes.add(v instanceof Tensor ? DType.INT64 : null);
        }
        try (KvValues read = client.get(keys, shapes, dtypes, meta)) {
          for (int i = 0; i < 8; i++) {
            assertThat(((Tensor) read.values().get(i)).toLongArray())
                .containsExactly(i, i + 1, i + 2);
          }
          assertThat(read.values().get(8)).isEqualTo(Map.of("a", 1L, "b", "text"));
        }
        assertThat(engines.get(0).batchIsExist(keys)).contains(1);
        assertThat(engines.get(1).batchIsExist(keys)).contains(1);
        assertThat(client.clear(keys, meta).values()).allMatch(code -> code == 0);
        assertThat(store.batchIsExist(keys)).containsOnly(0);
      } finally {
        tensors.forEach(Tensor::close);
      }
    }
  }
}
