package org.transferqueue.remote.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.objectstore.MooncakeKvClient;
import org.transferqueue.objectstore.ObjectStoreContract;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.RemoteUnits;
import org.transferqueue.storage.kv.KvCellKind;
import org.transferqueue.storage.kv.KvValues;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * The object-store client semantics through a remote store over two nodes on loopback: the {@link
 * ObjectStoreContract} and what only the remote store shows (sharding, a stopped node, malformed
 * requests, the key-value client across nodes). Every byte travels over TCP here; {@link
 * RemoteObjectStoreSharedMemoryTest} runs the same with shared memory.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteObjectStoreTest extends ObjectStoreContract<RemoteObjectStore> {
  private final List<EmbeddedObjectStore> engines = new ArrayList<>();
  private final List<StoreNodeServer> servers = new ArrayList<>();
  private final List<SharedMemoryPool> pools = new ArrayList<>();

  @Override
  protected void startEngine(BufferAllocator allocator) {
    for (int i = 0; i < 2; i++) {
      // With shared memory on, the engines' slabs lie in their nodes' pools (as tq store-node).
      SharedMemoryPool pool =
          StoreNodeServer.newSharedMemoryPool(transport(), allocator, "node-" + i);
      if (pool != null) {
        pools.add(pool);
      }
      EmbeddedObjectStore engine =
          EmbeddedObjectStore.create(
              allocator, MasterConfig.builder().asyncThreads(1).build(), pool);
      engines.add(engine);
      assertThat(
              engine.setup(
                  StoreConfig.builder()
                      .localHostname("node-" + i)
                      .globalSegmentSize(4 * SEGMENT)
                      .localBufferSize(SEGMENT)
                      .build()))
          .isZero();
      servers.add(
          StoreNodeServer.start(engine, transport(), allocator, StorageRequests.NOOP, pool));
    }
  }

  @Override
  protected RemoteObjectStore newStore(BufferAllocator allocator) {
    List<HostPort> nodes = servers.stream().map(StoreNodeServer::address).toList();
    return RemoteObjectStore.connect(nodes, transport(), allocator);
  }

  /** The nodes' and the remote store's transport settings: every byte over TCP. */
  TransportConfig transport() {
    return RemoteUnits.config();
  }

  @Override
  protected void stopEngine() {
    servers.reversed().forEach(StoreNodeServer::close);
    engines.reversed().forEach(EmbeddedObjectStore::close);
    pools.forEach(SharedMemoryPool::close);
    pools.clear();
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
    try (TransportClient client = new TransportClient(transport(), allocator)) {
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
            .config(ConfigMapper.kvClient(MooncakeStoreConfig.builder().build()))
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
