package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.PartitionStatistics;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.tensor.Batch;
import org.transferqueue.testing.Await;
import org.transferqueue.transport.TransportConfig;

/**
 * A key-value put whose store node stops reading (a node process under SIGSTOP, modelled by a
 * {@link MutatingProxy} that forwards nothing while frozen) fails with {@code DEADLINE_EXCEEDED} by
 * about one {@code client.request_timeout}, not once per retry and again for the removal of the
 * keys it created, and once the node runs again the controller holds nothing of the failed put.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FrozenStoreNodePutTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(2);
  private static final String P = "frozen";

  @Test
  void shouldFailByOneDeadlineAndLeaveNoKeyWhenTheStoreNodeIsFrozen(BufferAllocator allocator) {
    Controller controller = new Controller(ControllerOptions.defaults());
    TransportConfig servers = TransportConfig.builder().shutdownGracePeriod(Duration.ZERO).build();
    try (ControllerServer controllerServer =
            ControllerServer.start(controller, servers, allocator);
        EmbeddedObjectStore engine = EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT)) {
      assertThat(
              engine.setup(
                  StoreConfig.builder()
                      .localHostname("frozen-node")
                      .globalSegmentSize(16L << 20)
                      .localBufferSize(1L << 20)
                      .build()))
          .isZero();
      try (StoreNodeServer node = StoreNodeServer.start(engine, servers, allocator);
          MutatingProxy proxy = new MutatingProxy("node-0", node.address(), 0)) {
        TqConfig config =
            TqConfig.builder()
                .backend(b -> b.storageBackend(StorageBackend.MOONCAKE_STORE))
                .network(
                    n ->
                        n.controllerAddress(controllerServer.address())
                            .storeNodeAddresses(List.of(proxy.address())))
                .client(c -> c.requestTimeout(TIMEOUT))
                .build();
        try (TqClient tq =
            TqClient.builder().config(config).leakPolicy(LeakPolicy.THROW).connect()) {
          put(tq, "warm");
          tq.client().clearPartition(P);

          proxy.freeze();
          long start = System.nanoTime();
          assertThatThrownBy(() -> put(tq, "a"))
              .isInstanceOfSatisfying(
                  TqException.class,
                  e -> assertThat(e.code()).as("%s", e).isEqualTo(ErrorCode.DEADLINE_EXCEEDED));
          Duration took = Duration.ofNanos(System.nanoTime() - start);
          assertThat(took)
              .as("a failed put waits one call timeout of %s, not one per retry or step", TIMEOUT)
              .isLessThan(TIMEOUT.multipliedBy(2));

          proxy.thaw();
          Await.until(
              () -> samplesOf(tq) == 0 && keysOf(tq).isEmpty(),
              "the failed put's keys are removed once the node runs again");
          assertThat(((LocalMetaClient) tq.client()).cleanupFailures()).isZero();
        }
      }
    }
  }

  private static void put(TqClient tq, String key) {
    try (Batch rows = Batch.builder().objects("text", List.of("value of " + key)).build()) {
      tq.kv().put(key, P, rows, null);
    }
  }

  private static int samplesOf(TqClient tq) {
    return tq.controller().partitionStatistics(P).map(PartitionStatistics::totalSamples).orElse(0);
  }

  private static Map<String, Map<String, Object>> keysOf(TqClient tq) {
    return tq.client().listKeys(P).getOrDefault(P, Map.of());
  }
}
