package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.transport.TransportConfig;

/** Non-owning clients of a controller served over loopback, with storage in the client. */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TqClientTest {
  private static TqConfig config(HostPort controller, String token) {
    return TqConfig.builder()
        .network(
            n -> {
              n.controllerAddress(controller);
              if (token != null) {
                n.authToken(token);
              }
            })
        .controller(c -> c.getMetadataTimeout(Duration.ofSeconds(20)))
        .build();
  }

  private static ControllerServer serve(
      Controller controller, BufferAllocator allocator, String token) {
    TransportConfig.Builder t = TransportConfig.builder().bindPort(0);
    if (token != null) {
      t.authToken(token);
    }
    return ControllerServer.start(controller, t.build(), allocator);
  }

  private static TqClient connect(TqConfig config) {
    return TqClient.builder().config(config).leakPolicy(LeakPolicy.THROW).connect();
  }

  @Test
  void shouldRoundTripKvApiWhenControllerIsRemote(BufferAllocator allocator) {
    Controller controller = new Controller(ControllerOptions.defaults());
    try (ControllerServer server = serve(controller, allocator, null);
        TqClient tq = TransferQueueSystem.connect(config(server.address(), null))) {
      KvBatchMeta written;
      try (Batch rows = Batch.builder().objects("text", List.of("hello", "world")).build()) {
        written =
            tq.kv()
                .batchPut(
                    List.of("a", "b"),
                    "train",
                    rows,
                    List.of(Map.of("score", 1L), Map.of("score", 2L)));
      }
      assertThat(written.keys()).containsExactly("a", "b");
      try (Batch back = tq.kv().batchGet(List.of("b", "a"), "train", null)) {
        assertThat(((ObjectColumn) back.column("text")).values()).containsExactly("world", "hello");
      }
      assertThat(tq.kv().list("train").get("train"))
          .containsOnlyKeys("a", "b")
          .containsEntry("b", Map.of("score", 2L));
      // The controller process saw the metadata, never the data.
      assertThat(controller.listKeys("train").partitions().get("train")).containsOnlyKeys("a", "b");
      assertThat(controller.getProductionStatus("train", List.of("text")).orElseThrow())
          .matches(s -> s.allProduced() && s.indexes().size() == 2);
      tq.kv().clear(List.of("a"), "train");
      assertThat(controller.listKeys("train").partitions().get("train")).containsOnlyKeys("b");
    }
  }

  @Test
  void shouldShareDataBetweenClientsWhenStorageUnitsAreRemote(BufferAllocator allocator) {
    Controller controller = new Controller(ControllerOptions.defaults());
    List<StorageUnit> units = new ArrayList<>();
    List<StorageUnitServer> unitServers = new ArrayList<>();
    try (ControllerServer server = serve(controller, allocator, null)) {
      for (int i = 0; i < 2; i++) {
        StorageUnit unit = new StorageUnit("unit-" + i, OptionalLong.empty(), allocator, 1L << 26);
        units.add(unit);
        unitServers.add(
            StorageUnitServer.start(
                unit, TransportConfig.builder().bindPort(0).build(), allocator));
      }
      List<HostPort> addresses = unitServers.stream().map(StorageUnitServer::address).toList();
      TqConfig config =
          TqConfig.builder()
              .network(n -> n.controllerAddress(server.address()).storageUnitAddresses(addresses))
              .build();
      try (TqClient writer = connect(config);
          TqClient reader = connect(config)) {
        try (Batch rows = Batch.builder().objects("text", List.of("a", "b", "c")).build()) {
          writer.kv().batchPut(List.of("k0", "k1", "k2"), "p", rows, null);
        }
        try (Batch back = reader.kv().batchGet(List.of("k2", "k0"), "p", null)) {
          assertThat(((ObjectColumn) back.column("text")).values()).containsExactly("c", "a");
        }
      }
      assertThat(units).allMatch(u -> u.stats().samples() > 0, "every unit holds samples");
    } finally {
      unitServers.reversed().forEach(StorageUnitServer::close);
      units.reversed().forEach(StorageUnit::close);
    }
  }

  @Test
  void shouldShareDataBetweenClientsWhenStoreNodesAreRemote(BufferAllocator allocator) {
    Controller controller = new Controller(ControllerOptions.defaults());
    List<EmbeddedObjectStore> engines = new ArrayList<>();
    List<StoreNodeServer> nodeServers = new ArrayList<>();
    try (ControllerServer server = serve(controller, allocator, null)) {
      for (int i = 0; i < 2; i++) {
        EmbeddedObjectStore engine = EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT);
        engines.add(engine);
        assertThat(
                engine.setup(
                    StoreConfig.builder()
                        .localHostname("node-" + i)
                        .globalSegmentSize(1 << 22)
                        .localBufferSize(1 << 20)
                        .build()))
            .isZero();
        nodeServers.add(
            StoreNodeServer.start(
                engine, TransportConfig.builder().bindPort(0).build(), allocator));
      }
      List<HostPort> addresses = nodeServers.stream().map(StoreNodeServer::address).toList();
      TqConfig config =
          TqConfig.builder()
              .backend(b -> b.storageBackend(StorageBackend.MOONCAKE_STORE))
              .network(n -> n.controllerAddress(server.address()).storeNodeAddresses(addresses))
              .build();
      try (TqClient writer = connect(config);
          TqClient reader = connect(config)) {
        try (Batch rows = Batch.builder().objects("text", List.of("a", "b", "c")).build()) {
          writer.kv().batchPut(List.of("k0", "k1", "k2"), "p", rows, null);
        }
        try (Batch back = reader.kv().batchGet(List.of("k2", "k0"), "p", null)) {
          assertThat(((ObjectColumn) back.column("text")).values()).containsExactly("c", "a");
        }
      }
    } finally {
      nodeServers.reversed().forEach(StoreNodeServer::close);
      engines.reversed().forEach(EmbeddedObjectStore::close);
    }
  }

  @Test
  void shouldLeaveTheSystemRunningWhenAClientCloses(BufferAllocator allocator) {
    Controller controller = new Controller(ControllerOptions.defaults());
    try (ControllerServer server = serve(controller, allocator, "tok")) {
      TqConfig config = config(server.address(), "tok");
      TqClient second = connect(config);
      try {
        try (TqClient first = connect(config);
            Batch rows = Batch.builder().objects("text", List.of("x")).build()) {
          BatchMeta meta = first.client().put(rows, "p");
          assertThat(meta.globalIndexes()).hasSize(1);
        }
        BatchMeta fetched =
            second.client().getMeta(GetMetadataRequest.fetch("p", List.of("text"), "actor", 1));
        assertThat(fetched.size()).isEqualTo(1);
        assertThat(second.client().getPartitionList()).containsExactly("p");
        second.close();
        second.close();
        assertThatThrownBy(() -> second.client().getPartitionList())
            .isInstanceOfSatisfying(
                TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CLOSED));
      } finally {
        second.close();
      }
      assertThat(controller.listPartitions()).containsExactly("p");
    }
  }

  @Test
  void shouldFailConnectWhenTokenIsWrongOrAddressMissing(BufferAllocator allocator) {
    Controller controller = new Controller(ControllerOptions.defaults());
    try (ControllerServer server = serve(controller, allocator, "tok")) {
      assertThatThrownBy(() -> connect(config(server.address(), "other")))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED));
    }
    assertThatThrownBy(() -> connect(TqConfig.defaults()))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION));
  }
}
