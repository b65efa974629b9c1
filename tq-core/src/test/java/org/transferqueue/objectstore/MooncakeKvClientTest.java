package org.transferqueue.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.objectstore.RemoteObjectStore;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.storage.kv.KvCellKind;
import org.transferqueue.storage.kv.KvCellValues;
import org.transferqueue.storage.kv.KvValues;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.TransportConfig;

/**
 * Scenarios 5.I: the MooncakeStore client against a counting store over the embedded engine, and
 * over two store-node servers in this JVM reached through a {@link RemoteObjectStore} on loopback
 * sockets (the same segment capacity in total), with every byte over TCP or through shared memory.
 */
@ParameterizedClass
@EnumSource(MooncakeKvClientTest.Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class MooncakeKvClientTest {
  private static final long SEGMENT = 32L << 20;
  private static final int NODES = 2;

  /**
   * Where the store runs: the engine in this client, or store nodes over loopback (every byte over
   * TCP, or bodies of every size through the nodes' shared memory).
   */
  enum Deployment {
    EMBEDDED,
    LOOPBACK,
    SHARED_MEMORY
  }

  @Parameter Deployment deployment;

  private BufferAllocator allocator;
  private final List<EmbeddedObjectStore> engines = new ArrayList<>();
  private final List<StoreNodeServer> servers = new ArrayList<>();
  private final List<SharedMemoryPool> pools = new ArrayList<>();

  /** The store the client runs over, without counting: the engine, or the remote store. */
  private ObjectStore backing;

  private CountingObjectStore store;
  private final AtomicLong clock = new AtomicLong(1_000_000_000L);
  private final List<Long> pauses = Collections.synchronizedList(new ArrayList<>());
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeEach
  void setUp(BufferAllocator allocator) {
    this.allocator = allocator;
    int engineCount = deployment == Deployment.EMBEDDED ? 1 : NODES;
    TransportConfig loopback =
        TransportConfig.builder()
            .bindHost("127.0.0.1")
            .bindPort(0)
            .defaultCallTimeout(Duration.ofSeconds(20))
            .sharedMemory(deployment == Deployment.SHARED_MEMORY)
            .sharedMemoryMinBytes(1)
            .sharedMemorySegmentBytes(1L << 20)
            .build();
    for (int i = 0; i < engineCount; i++) {
      // Through shared memory, the engines' slabs lie in their nodes' pools (as tq store-node).
      SharedMemoryPool pool =
          deployment == Deployment.EMBEDDED
              ? null
              : StoreNodeServer.newSharedMemoryPool(loopback, allocator, "node-" + i);
      pools.add(pool);
      EmbeddedObjectStore engine =
          EmbeddedObjectStore.create(
              allocator, MasterConfig.builder().asyncThreads(1).build(), pool);
      engines.add(engine);
      assertThat(
              engine.setup(
                  StoreConfig.builder()
                      .localHostname("node-" + i)
                      .globalSegmentSize(SEGMENT / engineCount)
                      .localBufferSize(1L << 20)
                      .build()))
          .isZero();
    }
    if (deployment == Deployment.EMBEDDED) {
      backing = engines.getFirst();
    } else {
      for (int i = 0; i < engines.size(); i++) {
        servers.add(
            StoreNodeServer.start(
                engines.get(i), loopback, allocator, StorageRequests.NOOP, pools.get(i)));
      }
      RemoteObjectStore remote =
          RemoteObjectStore.connect(
              servers.stream().map(StoreNodeServer::address).toList(), loopback, allocator);
      backing = remote;
      assertThat(
              remote.setup(
                  StoreConfig.builder()
                      .localHostname("client")
                      .globalSegmentSize(SEGMENT)
                      .localBufferSize(1L << 20)
                      .build()))
          .isZero();
    }
    store = new CountingObjectStore(backing);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    if (!servers.isEmpty()) {
      backing.close();
    }
    servers.reversed().forEach(StoreNodeServer::close);
    engines.reversed().forEach(EmbeddedObjectStore::close);
    for (SharedMemoryPool pool : pools) {
      if (pool != null) {
        pool.close();
      }
    }
  }

  private MooncakeKvClient client() {
    return client(MooncakeStoreConfig.builder().build(), true, Duration.ofSeconds(60));
  }

  private MooncakeKvClient client(
      MooncakeStoreConfig config, boolean pooled, Duration operationTimeout) {
    MooncakeKvClient client =
        MooncakeKvClient.builder()
            .store(store)
            .allocator(allocator)
            .config(ConfigMapper.kvClient(config))
            .nanoClock(clock::get)
            .retryScheduler(
                delayNs -> {
                  pauses.add(delayNs);
                  clock.addAndGet(delayNs);
                  return CompletableFuture.completedFuture(null);
                })
            .jitter(RandomGenerator.of("L64X128MixRandom"))
            .operationTimeout(operationTimeout)
            .pooledRegistration(pooled)
            .build();
    toClose.add(client);
    return client;
  }

  private <T extends AutoCloseable> T owned(T resource) {
    toClose.add(resource);
    return resource;
  }

  private Tensor floats(float... values) {
    return owned(Tensor.ofFloats(allocator, DType.FLOAT32, values, values.length));
  }

  @Test
  void shouldRunCallsOfManyThreadsAtOnceWhateverTheWorkerLimitPerCall() throws Exception {
    int threads = 6;
    CountDownLatch together = new CountDownLatch(threads);
    store =
        new CountingObjectStore(backing) {
          @Override
          public int[] batchRemove(List<String> keys, boolean force) {
            together.countDown();
            try {
              if (!together.await(20, TimeUnit.SECONDS)) {
                throw new AssertionError("clears of different threads did not run at once");
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new AssertionError(e);
            }
            return super.batchRemove(keys, force);
          }
        };
    // One slice task at a time per call, and a single call per thread: the calls of the threads
    // must still overlap, as calls of separate clients would.
    MooncakeKvClient client =
        client(
            MooncakeStoreConfig.builder().maxBatchWorkerThreads(1).build(),
            true,
            Duration.ofSeconds(60));
    client.put(List.of("k0", "k1", "k2", "k3", "k4", "k5"), List.of("a", "b", "c", "d", "e", "f"));
    List<CompletableFuture<Map<String, Integer>>> clears = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      String key = "k" + t;
      clears.add(new CompletableFuture<>());
      CompletableFuture<Map<String, Integer>> result = clears.get(t);
      Thread.ofVirtual()
          .start(
              () -> {
                try {
                  result.complete(client.clear(List.of(key), null));
                } catch (RuntimeException | Error e) {
                  result.completeExceptionally(e);
                }
              });
    }
    for (CompletableFuture<Map<String, Integer>> clear : clears) {
      assertThat(clear.get(30, TimeUnit.SECONDS)).isEmpty();
    }
    assertThat(store.calls("batchRemove")).hasSize(threads);
  }

  @Test
  void AS104_shouldSplitTensorAndObjectCellsAndReturnPackedSizes() {
    MooncakeKvClient client = client();
    List<Map<String, Object>> meta =
        client.put(List.of("k0", "k1", "k2"), List.of(floats(1, 2, 3, 4), "s", Map.of("a", 1L)));

    List<CountingObjectStore.Call> upserts = store.calls("batchUpsertFrom");
    assertThat(upserts).hasSize(2);
    assertThat(upserts)
        .anySatisfy(
            c -> {
              assertThat(c.keys()).containsExactly("k0");
              assertThat(c.sizes()).containsExactly(16L);
            })
        .anySatisfy(
            c -> {
              assertThat(c.keys()).containsExactly("k1", "k2");
              assertThat(c.sizes()).containsExactly(14L, 16L);
            });
    assertThat(meta).containsExactly(null, Map.of("packed_size", 14L), Map.of("packed_size", 16L));
    client.close();
    assertThat(store.unregisters.get()).isEqualTo(store.registers.get()).isPositive();
  }

  @Test
  void AS105_shouldSendThousandTensorKeysInSlicesOfAtMost400() {
    MooncakeKvClient client = client();
    Tensor column = owned(Tensor.zeros(allocator, DType.FLOAT32, 1000, 4));
    List<String> keys = new ArrayList<>();
    List<Object> values = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      keys.add(i + "@x");
      values.add(column.row(i));
    }
    for (int i = 0; i < 10; i++) {
      keys.add(i + "@s");
      values.add("v" + i);
    }
    client.put(keys, values);

    List<Integer> sliceSizes =
        store.calls("batchUpsertFrom").stream().map(c -> c.keys().size()).sorted().toList();
    assertThat(sliceSizes).containsExactly(10, 200, 400, 400);
  }

  @Test
  void AS105_shouldRunTensorAndObjectSlicesConcurrently() throws Exception {
    CountDownLatch bothStarted = new CountDownLatch(2);
    List<Boolean> sawOther = Collections.synchronizedList(new ArrayList<>());
    CountingObjectStore gated =
        new CountingObjectStore(backing) {
          @Override
          public int[] batchUpsertFrom(
              List<String> keys, List<java.lang.foreign.MemorySegment> s, ReplicateConfig c) {
            bothStarted.countDown();
            try {
              sawOther.add(bothStarted.await(10, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return super.batchUpsertFrom(keys, s, c);
          }
        };
    store = gated;
    client().put(List.of("t", "o"), List.of(floats(1), "object"));
    assertThat(sawOther).containsExactly(true, true);
  }

  @Test
  void AS106_shouldRejectMismatchedListsAndAcceptEmptyPut() {
    MooncakeKvClient client = client();
    assertThatThrownBy(() -> client.put(List.of("a", "b"), List.of(1L)))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("Number of keys must match number of values");
    assertThat(client.put(List.of(), List.of())).isEmpty();
    assertThat(store.calls("batchUpsertFrom")).isEmpty();
  }

  @Test
  void AS107_shouldRetryOnlyTheTransientlyFailedKeyWithoutPause() {
    MooncakeKvClient client = client();
    store.script("b", -800);
    client.put(List.of("a", "b", "c"), List.of(floats(1), floats(2), floats(3)));

    List<CountingObjectStore.Call> upserts = store.calls("batchUpsertFrom");
    assertThat(upserts).hasSize(2);
    assertThat(upserts.get(1).keys()).containsExactly("b");
    int b = upserts.get(0).keys().indexOf("b");
    assertThat(upserts.get(1).addresses().get(0)).isEqualTo(upserts.get(0).addresses().get(b));
    assertThat(upserts.get(1).sizes().get(0)).isEqualTo(4L);
    assertThat(pauses).isEmpty();
  }

  @Test
  void AS108_shouldFailAfterThreeRetriesWithTwoBackoffPauses() {
    MooncakeKvClient client = client();
    store.always("b", -800);
    assertThatThrownBy(() -> client.put(List.of("a", "b"), List.of(floats(1), floats(2))))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("batch_upsert_from failed for keys")
        .hasMessageContaining("[b]")
        .hasMessageContaining("-800")
        .hasMessageContaining("after retrying 3 times");

    assertThat(store.calls("batchUpsertFrom")).hasSize(4);
    assertThat(pauses).hasSize(2);
    long base = Duration.ofSeconds(1).toNanos();
    assertThat(pauses.get(0)).isBetween(base / 2, base);
    assertThat(pauses.get(1)).isBetween(base, 2 * base);
    client.close();
    assertThat(store.unregisters.get()).isEqualTo(store.registers.get());
  }

  @Test
  void shouldReportAnUnreachableNodeAsConnectionFailedAndASilentOneAsDeadlineExceeded() {
    MooncakeKvClient client = client();
    store.always("b", -900);
    assertThatThrownBy(() -> client.put(List.of("a", "b"), List.of(floats(1), floats(2))))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("-900")
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.CONNECTION_FAILED);
    store.always("c", -901);
    assertThatThrownBy(() -> client.put(List.of("c"), List.of(floats(3))))
        .isInstanceOf(DeadlineExceededException.class)
        .hasMessageContaining("-901");
    store.always("d", -800);
    assertThatThrownBy(() -> client.put(List.of("d"), List.of(floats(4))))
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.STORAGE_ERROR);
  }

  @Test
  void shouldFailWithDeadlineExceededWhenTheNextPauseWouldPassTheDeadline() {
    MooncakeKvClient client =
        client(MooncakeStoreConfig.builder().build(), true, Duration.ofMillis(400));
    store.always("b", -900);
    assertThatThrownBy(() -> client.put(List.of("b"), List.of(floats(2))))
        .isInstanceOf(DeadlineExceededException.class)
        .hasMessageContaining("b");
    assertThat(store.calls("batchUpsertFrom")).hasSize(2);
  }

  @Test
  void shouldFailAtOnceNamingKeyAndCodeForADeterministicCode() {
    MooncakeKvClient client = client();
    client.put(List.of("present"), List.of(floats(1, 2)));
    assertThatThrownBy(
            () ->
                client.get(
                    List.of("present", "missing"),
                    List.of(new long[] {2}, new long[] {2}),
                    List.of(DType.FLOAT32, DType.FLOAT32),
                    null))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("missing")
        .hasMessageContaining("-704");
    assertThat(store.calls("batchGetInto")).hasSize(1);
    assertThat(pauses).isEmpty();
  }

  @Test
  void AS109_shouldFailWithoutRetryWhenTheResultCountIsWrong() {
    MooncakeKvClient client = client();
    store.truncateNextResult(1);
    assertThatThrownBy(() -> client.put(List.of("a", "b"), List.of(floats(1), floats(2))))
        .hasMessageContaining("returned 1 results, expected 2");
    assertThat(store.calls("batchUpsertFrom")).hasSize(1);
  }

  @Test
  void AS110_shouldRetryATransientGetFailureAndReturnTheData() {
    MooncakeKvClient client = client();
    Tensor a = owned(Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3}, 3));
    Tensor b = owned(Tensor.ofLongs(allocator, DType.INT64, new long[] {4}, 1));
    client.put(List.of("a", "b"), List.of(a, b));
    store.script("b", -800);
    try (KvValues read =
        client.get(
            List.of("a", "b"),
            List.of(new long[] {3}, new long[] {1}),
            List.of(DType.INT64, DType.INT64),
            null)) {
      assertThat(((Tensor) read.values().get(0)).toLongArray()).containsExactly(1, 2, 3);
      assertThat(((Tensor) read.values().get(1)).toLongArray()).containsExactly(4);
    }
    List<CountingObjectStore.Call> gets = store.calls("batchGetInto");
    assertThat(gets).hasSize(2);
    assertThat(gets.get(0).sizes()).containsExactly(24L, 8L);
    assertThat(gets.get(1).keys()).containsExactly("b");
  }

  @Test
  void AS111_shouldRejectAReadOfTheWrongSizeWithoutRetry() {
    MooncakeKvClient client = client();
    client.put(List.of("k"), List.of(floats(1, 2, 3, 4, 5, 6)));
    store.script("k", 10);
    assertThatThrownBy(
            () -> client.get(List.of("k"), List.of(new long[] {6}), List.of(DType.FLOAT32), null))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("'k'")
        .hasMessageContaining("expected 24");
    assertThat(store.calls("batchGetInto")).hasSize(1);
  }

  @Test
  void AS112_shouldRejectMissingShapesLengthsAndPackedSizes() {
    MooncakeKvClient client = client();
    assertThatThrownBy(() -> client.get(List.of("a"), null, List.of(DType.FLOAT32), null))
        .hasMessageContaining("needs shapes and dtypes");
    assertThatThrownBy(
            () ->
                client.get(
                    List.of("a", "b"),
                    List.of(new long[] {1}),
                    List.of(DType.FLOAT32, DType.FLOAT32),
                    null))
        .hasMessageContaining("Lengths of keys, shapes, dtypes must match");
    assertThatThrownBy(
            () ->
                client.get(
                    List.of("a"), Arrays.asList((long[]) null), Arrays.asList((DType) null), null))
        .hasMessageContaining("custom_backend_meta is required");
    assertThatThrownBy(
            () ->
                client.get(
                    List.of("a"),
                    Arrays.asList((long[]) null),
                    Arrays.asList((DType) null),
                    Collections.singletonList(Map.of())))
        .hasMessageContaining("missing packed_size for key a");
    assertThat(store.calls("batchGetInto")).isEmpty();
  }

  @Test
  void AS113_shouldAllocateOneRegionPerDtypeForGet() {
    MooncakeKvClient client = client();
    Tensor f0 = floats(1, 2);
    Tensor i1 = owned(Tensor.ofLongs(allocator, DType.INT64, new long[] {7, 8, 9}, 3));
    Tensor f2 = floats(3);
    client.put(List.of("f0", "i1", "f2"), List.of(f0, i1, f2));
    long registrationsBefore = client.registrations();
    try (KvValues read =
        client.get(
            List.of("f0", "i1", "f2"),
            List.of(new long[] {2}, new long[] {3}, new long[] {1}),
            List.of(DType.FLOAT32, DType.INT64, DType.FLOAT32),
            null)) {
      CountingObjectStore.Call get = store.calls("batchGetInto").get(0);
      assertThat(get.sizes()).containsExactly(8L, 24L, 4L);
      List<Long> ptr = get.addresses();
      assertThat(ptr.get(2) - ptr.get(0)).isEqualTo(64); // same float32 region, 64-byte aligned
      assertThat(Math.abs(ptr.get(1) - ptr.get(0))).isGreaterThanOrEqualTo(64);
      assertThat(read.values().get(0)).isEqualTo(f0);
      assertThat(read.values().get(1)).isEqualTo(i1);
      assertThat(read.values().get(2)).isEqualTo(f2);
    }
    assertThat(client.registrations() - registrationsBefore).isEqualTo(2);
  }

  @Test
  void AS114_shouldReadObjectValuesIntoOneRegion() {
    MooncakeKvClient client = client();
    List<Map<String, Object>> meta = client.put(List.of("p0", "p1"), List.of("hi", "hello"));
    assertThat(meta).containsExactly(Map.of("packed_size", 15L), Map.of("packed_size", 18L));
    try (KvValues read =
        client.get(
            List.of("p0", "p1"), Arrays.asList(null, null), Arrays.asList(null, null), meta)) {
      assertThat(read.values()).containsExactly("hi", "hello");
    }
    CountingObjectStore.Call get = store.calls("batchGetInto").get(0);
    assertThat(get.sizes()).containsExactly(15L, 18L);
    assertThat(get.addresses().get(1) - get.addresses().get(0)).isEqualTo(15);
  }

  @Test
  void shouldWriteCellsOfTwoRegisteredColumnsFromTheirOwnMemoryWithOneReferenceEach() {
    MooncakeKvClient client = client();
    Tensor a = floats(1, 2, 3, 4, 5, 6);
    Tensor b = floats(7, 8, 9);
    KvCellValues cells =
        new KvCellValues(
            List.of(new DenseColumn(a.reshape(3, 2)), new DenseColumn(b.reshape(3, 1))), 3);
    List<String> keys = List.of("a0", "a1", "a2", "b0", "b1", "b2");

    client.put(keys, cells, cells.kinds(), List.of(a.segment(), b.segment()));

    assertThat(client.registrations()).as("one per column, none per cell").isEqualTo(2);
    assertThat(client.unregistrations()).isEqualTo(2);
    CountingObjectStore.Call put = store.calls("batchUpsertFrom").get(0);
    long base = a.segment().address();
    assertThat(put.addresses().subList(0, 3)).containsExactly(base, base + 8, base + 16);
    assertThat(put.addresses().get(3)).isEqualTo(b.segment().address());
    try (KvValues read =
        client.get(
            keys,
            List.of(
                new long[] {2},
                new long[] {2},
                new long[] {2},
                new long[] {1},
                new long[] {1},
                new long[] {1}),
            Collections.nCopies(6, DType.FLOAT32),
            null)) {
      assertThat(read.values().get(2)).isEqualTo(cells.get(2));
      assertThat(read.values().get(4)).isEqualTo(cells.get(4));
    }
  }

  @Test
  void shouldRegisterTheRegionOnceWhenPutIsToldWhereTheRowsLie() {
    MooncakeKvClient client = client();
    Tensor column = floats(1, 2, 3, 4, 5, 6, 7, 8);
    List<Tensor> rows =
        List.of(
            column.reshape(4, 2).row(0),
            column.reshape(4, 2).row(1),
            column.reshape(4, 2).row(2),
            column.reshape(4, 2).row(3));
    List<String> keys = List.of("r0", "r1", "r2", "r3");
    List<KvCellKind> kinds = Collections.nCopies(4, KvCellKind.TENSOR);

    client.put(keys, rows, kinds, List.of(column.segment()));
    assertThat(client.registrations()).isEqualTo(1);
    assertThat(client.unregistrations()).isEqualTo(1);
    client.put(keys, rows, kinds);
    assertThat(client.registrations()).as("without the region each row is registered").isEqualTo(5);

    try (KvValues read =
        client.get(
            keys,
            Collections.nCopies(4, new long[] {2}),
            Collections.nCopies(4, DType.FLOAT32),
            null)) {
      assertThat(read.values()).containsExactlyElementsOf(rows);
    }
  }

  @Test
  void shouldKeepPooledBuffersRegisteredAcrossCalls() {
    MooncakeKvClient pooled = client();
    pooled.put(List.of("a"), List.of(floats(1, 2, 3)));
    for (int round = 0; round < 3; round++) {
      try (KvValues read =
          pooled.get(List.of("a"), List.of(new long[] {3}), List.of(DType.FLOAT32), null)) {
        assertThat(read.values().get(0)).isEqualTo(floats(1, 2, 3));
      }
    }
    long afterPooled = pooled.registrations();
    // caller memory of the put (1) + one pooled destination (1)
    assertThat(afterPooled).isEqualTo(2);

    MooncakeKvClient perCall =
        client(MooncakeStoreConfig.builder().build(), false, Duration.ofSeconds(5));
    for (int round = 0; round < 3; round++) {
      try (KvValues read =
          perCall.get(List.of("a"), List.of(new long[] {3}), List.of(DType.FLOAT32), null)) {
        assertThat(read.values().get(0)).isEqualTo(floats(1, 2, 3));
      }
    }
    assertThat(perCall.registrations()).isEqualTo(3);
    assertThat(perCall.unregistrations()).isEqualTo(3);
  }

  @Test
  void shouldPutFromRegisteredCallerMemoryWithoutRegisteringPerCall() {
    MooncakeKvClient client = client();
    Tensor column = owned(Tensor.zeros(allocator, DType.FLOAT32, 8, 4));
    client.registerMemory(column.segment());
    List<String> keys = new ArrayList<>();
    List<Object> rows = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      keys.add("r" + i);
      rows.add(column.row(i));
    }
    client.put(keys, rows);
    client.put(keys, rows);
    assertThat(client.registrations()).isEqualTo(1);
    assertThat(store.calls("batchUpsertFrom").get(1).addresses().get(3))
        .isEqualTo(column.row(3).segment().address());
    assertThat(client.unregisterMemory(column.segment())).isTrue();
    assertThat(client.unregistrations()).isEqualTo(1);
    assertThat(client.unregisterMemory(column.segment())).isFalse();
  }

  @Test
  void shouldStageHeapTensorsAndDuplicateViewsOnce() {
    MooncakeKvClient client = client();
    Tensor heap =
        Tensor.wrap(DType.FLOAT32, java.lang.foreign.MemorySegment.ofArray(new float[] {1, 2}), 2);
    Tensor shared = floats(5, 6);
    client.put(List.of("h", "s1", "s2"), List.of(heap, shared, shared.reshape(2)));
    assertThat(store.registers.get()).isEqualTo(2); // the staging buffer, the shared tensor once
    try (KvValues read =
        client.get(
            List.of("h", "s2"),
            List.of(new long[] {2}, new long[] {2}),
            List.of(DType.FLOAT32, DType.FLOAT32),
            null)) {
      assertThat(((Tensor) read.values().get(0)).toFloatArray()).containsExactly(1, 2);
      assertThat(((Tensor) read.values().get(1)).toFloatArray()).containsExactly(5, 6);
    }
  }

  @Test
  void shouldRegisterOnlyTheSpanningSegmentAndStagePartialOverlaps() {
    MooncakeKvClient client = client();
    Tensor whole = owned(Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4}, 4));
    Tensor head = Tensor.wrap(DType.INT64, whole.segment().asSlice(0, 16), 2);
    Tensor middle = Tensor.wrap(DType.INT64, whole.segment().asSlice(8, 16), 2);
    client.put(List.of("whole", "head"), List.of(whole, head));
    assertThat(store.registers.get()).isEqualTo(1); // the whole tensor covers the head
    client.close();
    assertThat(store.unregisters.get()).isEqualTo(1);

    MooncakeKvClient other = client();
    other.put(List.of("head2", "middle"), List.of(head, middle));
    // head registered, middle partly overlaps it: staged through one pooled buffer
    assertThat(store.registers.get()).isEqualTo(3);
    try (KvValues read =
        other.get(List.of("middle"), List.of(new long[] {2}), List.of(DType.INT64), null)) {
      assertThat(((Tensor) read.values().get(0)).toLongArray()).containsExactly(2, 3);
    }
  }

  @Test
  void AS099_AS102_shouldRemoveWithForceAndTolerateNotFound() {
    MooncakeKvClient client = client();
    client.put(List.of("a", "b"), List.of(floats(1), floats(2)));
    assertThat(client.clear(List.of("a", "b", "c"), null)).isEmpty();
    List<CountingObjectStore.Call> removes = store.calls("batchRemove");
    assertThat(removes).hasSize(1);
    assertThat(removes.get(0).keys()).containsExactly("a", "b", "c");
    assertThat(backing.isExist("a")).isZero();

    store.script("x", -1);
    assertThat(client.clear(List.of("x", "y"), null)).containsExactly(Map.entry("x", -1));
  }

  @Test
  void AS100_AS103_shouldExpandChunkKeysFromMetadataWithoutGpuPath() {
    MooncakeKvClient client = client();
    List<Map<String, Object>> meta =
        Arrays.asList(Map.of("n_chunks", 2), Map.of("n_chunks", 3), null);
    client.clear(List.of("a", "b", "c"), meta);
    assertThat(store.calls("batchRemove").get(0).keys())
        .containsExactly("a:c0", "a:c1", "b:c0", "b:c1", "b:c2", "c");
  }

  @Test
  void shouldReadChunkedKeysIntoOneTensor() {
    MooncakeKvClient client = client();
    client.put(List.of("big:c0", "big:c1"), List.of(floats(1, 2, 3), floats(4, 5)));
    Map<String, Object> layout = Map.of("n_chunks", 2, "chunk_bytes", 12);
    try (KvValues read =
        client.get(
            List.of("big"), List.of(new long[] {5}), List.of(DType.FLOAT32), List.of(layout))) {
      assertThat(((Tensor) read.values().get(0)).toFloatArray()).containsExactly(1, 2, 3, 4, 5);
    }
  }

  @Test
  void shouldShareRegistrationsBetweenConcurrentPutsOfTheSameMemory() throws Exception {
    MooncakeKvClient client = client();
    Tensor column = owned(Tensor.zeros(allocator, DType.INT64, 16, 8));
    for (long i = 0; i < column.numel(); i++) {
      column.setLong(i, i);
    }
    int threads = 4;
    List<CompletableFuture<Void>> runs = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      runs.add(
          CompletableFuture.runAsync(
              () -> {
                for (int round = 0; round < 20; round++) {
                  List<String> keys = new ArrayList<>();
                  List<Object> rows = new ArrayList<>();
                  for (int r = 0; r < 16; r++) {
                    keys.add(thread + "/" + r);
                    rows.add(column.row(r));
                  }
                  client.put(keys, rows);
                }
              }));
    }
    for (CompletableFuture<Void> run : runs) {
      run.get(60, TimeUnit.SECONDS);
    }
    try (KvValues read =
        client.get(List.of("3/5"), List.of(new long[] {8}), List.of(DType.INT64), null)) {
      assertThat(read.values().get(0)).isEqualTo(column.row(5));
    }
    client.close();
    assertThat(store.unregisters.get()).isEqualTo(store.registers.get());
  }

  @Test
  void AS117_shouldUseTheCpuPathWhenGdrIsRequestedWithoutAGpu() {
    MooncakeStoreConfig gdr =
        MooncakeStoreConfig.builder()
            .useGdr(true)
            .protocol(org.transferqueue.config.TransportProtocol.RDMA)
            .build();
    MooncakeKvClient client = client(gdr, true, Duration.ofSeconds(5));
    client.put(List.of("g"), List.of(floats(1, 2)));
    try (KvValues read =
        client.get(List.of("g"), List.of(new long[] {2}), List.of(DType.FLOAT32), null)) {
      assertThat(((Tensor) read.values().get(0)).toFloatArray()).containsExactly(1, 2);
    }
  }

  @Test
  void AS116_shouldResolveHardPinFromTheConfig() {
    assertThat(pinOf(null, false)).isTrue();
    assertThat(pinOf(null, true)).isFalse();
    assertThat(pinOf(true, true)).isTrue();
    assertThat(pinOf(false, false)).isFalse();
    MooncakeKvClient client = client();
    client.put(List.of("a"), List.of(floats(1)));
    assertThat(store.lastConfig.withHardPin()).isTrue();
  }

  private boolean pinOf(Boolean hardPin, boolean offload) {
    MooncakeStoreConfig config =
        MooncakeStoreConfig.builder().hardPin(hardPin).offload(o -> o.enabled(offload)).build();
    return client(config, true, Duration.ofSeconds(5)).replicateConfig().withHardPin();
  }

  @Test
  void shouldReadTensorCellsStraightIntoCallerMemory() {
    MooncakeKvClient client = client();
    client.put(List.of("a", "b", "c"), List.of(floats(1, 2), floats(3, 4), floats(5, 6)));
    int registersBefore = store.registers.get();
    int unregistersBefore = store.unregisters.get();
    try (NativeBuffer column = allocator.allocate(24)) {
      MemorySegment region = column.segment();
      List<MemorySegment> rows =
          List.of(region.asSlice(0, 8), region.asSlice(8, 8), region.asSlice(16, 8));
      client.getInto(
          List.of("a", "b", "c"),
          List.of(new long[] {2}, new long[] {2}, new long[] {2}),
          List.of(DType.FLOAT32, DType.FLOAT32, DType.FLOAT32),
          null,
          rows,
          List.of(region));
      float[] read = new float[6];
      for (int i = 0; i < read.length; i++) {
        read[i] = region.getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, i);
      }
      assertThat(read).containsExactly(1, 2, 3, 4, 5, 6);
      List<CountingObjectStore.Call> gets = store.calls("batchGetInto");
      assertThat(gets).hasSize(1);
      assertThat(gets.get(0).addresses())
          .containsExactly(region.address(), region.address() + 8, region.address() + 16);
      assertThat(store.registers.get()).isEqualTo(registersBefore + 1);
    }
    assertThat(store.unregisters.get()).isEqualTo(unregistersBefore + 1);
  }

  @Test
  void shouldRejectADestinationOfTheWrongSize() {
    MooncakeKvClient client = client();
    client.put(List.of("a"), List.of(floats(1, 2)));
    try (NativeBuffer column = allocator.allocate(4)) {
      assertThatThrownBy(
              () ->
                  client.getInto(
                      List.of("a"),
                      List.<long[]>of(new long[] {2}),
                      List.of(DType.FLOAT32),
                      null,
                      List.of(column.segment()),
                      List.of(column.segment())))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("expected 8");
    }
  }
}
