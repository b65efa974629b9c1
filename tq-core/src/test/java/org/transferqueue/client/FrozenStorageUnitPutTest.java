package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.PartitionStatistics;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.remote.storage.RemoteSimpleStorage;
import org.transferqueue.remote.storage.RemoteSimpleStorageManager;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;
import org.transferqueue.testing.Await;
import org.transferqueue.transport.TransportConfig;

/**
 * A put whose storage unit stops reading (a unit process under SIGSTOP, modelled by a {@link
 * MutatingProxy} that forwards nothing while frozen) fails by about one {@code
 * backend.SimpleStorage.send_recv_timeout}, not one per step (PUT, rollback FINISH, removal of the
 * created samples), and once the unit runs again nothing of the failed put remains: no held put on
 * the unit, no cell, no sample or key in the controller, no failed background cleanup.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FrozenStorageUnitPutTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(2);
  private static final String P = "frozen";

  /** The two puts that create samples and remove them again when storing fails. */
  enum PutForm {
    KEY_VALUE {
      @Override
      void put(TqClient tq, List<String> values) {
        List<String> keys = values.stream().map(v -> "key_" + v).toList();
        try (Batch rows = Batch.builder().objects("text", values).build()) {
          tq.kv().batchPut(keys, P, rows, null);
        }
      }
    },
    INSERT {
      @Override
      void put(TqClient tq, List<String> values) {
        try (Batch rows = Batch.builder().objects("text", values).build()) {
          tq.client().put(rows, P);
        }
      }
    };

    abstract void put(TqClient tq, List<String> values);
  }

  @ParameterizedTest
  @EnumSource(PutForm.class)
  void shouldFailByOneDeadlineAndLeaveNothingWhenTheStorageUnitIsFrozen(
      PutForm form, BufferAllocator allocator) {
    Controller controller = new Controller(ControllerOptions.defaults());
    TransportConfig servers = TransportConfig.builder().shutdownGracePeriod(Duration.ZERO).build();
    try (ControllerServer controllerServer =
            ControllerServer.start(controller, servers, allocator);
        StorageUnit unit = new StorageUnit("unit-0", OptionalLong.empty(), allocator, 1L << 30);
        StorageUnitServer unitServer = StorageUnitServer.start(unit, servers, allocator);
        MutatingProxy proxy = new MutatingProxy("unit-0", unitServer.address(), 0)) {
      TqConfig config =
          TqConfig.builder()
              .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(1).sendRecvTimeout(TIMEOUT)))
              .network(
                  n ->
                      n.controllerAddress(controllerServer.address())
                          .storageUnitAddresses(List.of(proxy.address())))
              .client(c -> c.requestTimeout(Duration.ofSeconds(30)))
              .build();
      AtomicReference<RemoteSimpleStorageManager> storage = new AtomicReference<>();
      StorageManagerRegistry backends =
          StorageManagerRegistry.builder()
              .register(
                  StorageManagerRegistry.SIMPLE_STORAGE,
                  context -> {
                    storage.set(
                        (RemoteSimpleStorageManager)
                            RemoteSimpleStorage.factory(
                                    List.of(proxy.address()),
                                    ConfigMapper.storageUnitClient(config))
                                .create(context));
                    return storage.get();
                  })
              .build();
      try (TqClient tq =
          TqClient.builder()
              .config(config)
              .storageBackends(backends)
              .leakPolicy(LeakPolicy.THROW)
              .connect()) {
        // One put opens both pooled connections to the unit (its PUT and FINISH go round robin).
        form.put(tq, List.of("warm"));
        tq.client().clearPartition(P);
        assertThat(unit.stats().samples()).isZero();

        proxy.freeze();
        long start = System.nanoTime();
        assertThatThrownBy(() -> form.put(tq, List.of("a", "b")))
            .isInstanceOfSatisfying(
                TqException.class,
                e -> assertThat(e.code()).as("%s", e).isEqualTo(ErrorCode.DEADLINE_EXCEEDED));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took)
            .as("a failed put waits one call timeout of %s, not one per step", TIMEOUT)
            .isLessThan(TIMEOUT.multipliedBy(2));

        proxy.thaw();
        Await.until(
            () ->
                unitServer.heldPuts() == 0
                    && unit.stats().samples() == 0
                    && samplesOf(tq) == 0
                    && keysOf(tq).isEmpty(),
            "the failed put's cleanup, once the unit runs again");
        assertThat(storage.get().failedDecisions()).isZero();
        assertThat(((LocalMetaClient) tq.client()).cleanupFailures()).isZero();
      }
    }
  }

  private static int samplesOf(TqClient tq) {
    return tq.controller().partitionStatistics(P).map(PartitionStatistics::totalSamples).orElse(0);
  }

  private static Map<String, Map<String, Object>> keysOf(TqClient tq) {
    return tq.client().listKeys(P).getOrDefault(P, Map.of());
  }
}
