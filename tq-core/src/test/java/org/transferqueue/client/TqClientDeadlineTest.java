package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.objectstore.StoreStatus;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.tensor.Batch;
import org.transferqueue.transport.MessageDescriptor;
import org.transferqueue.transport.TransportConfig;
import org.transferqueue.transport.TransportServer;

/**
 * The deadline keys of the configuration reach the remote clients: a server that accepts requests
 * and never answers makes the call fail with {@code DEADLINE_EXCEEDED} after {@code
 * client.request_timeout} (controller) or {@code backend.SimpleStorage.send_recv_timeout} (storage
 * units), and with the store's per-key {@code RPC_TIMEOUT} after {@code client.request_timeout}
 * (store nodes). The class timeout is below the transport's built-in 60 s default, so a key that is
 * not wired fails the test.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TqClientDeadlineTest {
  private static final Duration SHORT = Duration.ofMillis(300);
  private static final Duration LONG = Duration.ofSeconds(120);

  /** A server that takes every application request of the three services and never answers. */
  private static TransportServer silentServer(BufferAllocator allocator, AtomicInteger received) {
    TransportServer.Builder builder =
        TransportServer.builder(
            TransportConfig.builder().shutdownGracePeriod(Duration.ZERO).build(), allocator);
    for (int type = MessageDescriptor.FIRST_APPLICATION_TYPE; type < 400; type++) {
      builder.handler(type, (request, responder) -> received.incrementAndGet());
    }
    return builder.start();
  }

  private static TqClient connect(TqConfig config) {
    return TqClient.builder().config(config).leakPolicy(LeakPolicy.THROW).connect();
  }

  private static void assertDeadline(Throwable e) {
    assertThat(e).isInstanceOf(TqException.class);
    assertThat(((TqException) e).code()).as("%s", e).isEqualTo(ErrorCode.DEADLINE_EXCEEDED);
  }

  @Test
  void shouldFailWithDeadlineWhenControllerNeverAnswersWithinRequestTimeout(
      BufferAllocator allocator) {
    AtomicInteger received = new AtomicInteger();
    try (TransportServer silent = silentServer(allocator, received)) {
      TqConfig config =
          TqConfig.builder()
              .network(n -> n.controllerAddress(silent.address()))
              .client(c -> c.requestTimeout(SHORT))
              .build();
      assertThatThrownBy(() -> connect(config).close())
          .satisfies(TqClientDeadlineTest::assertDeadline);
      assertThat(received).hasPositiveValue();
    }
  }

  @Test
  void shouldFailPutWithDeadlineWhenStorageUnitNeverAnswersWithinSendRecvTimeout(
      BufferAllocator allocator) {
    AtomicInteger received = new AtomicInteger();
    Controller controller = new Controller(ControllerOptions.defaults());
    try (ControllerServer server =
            ControllerServer.start(controller, TransportConfig.builder().build(), allocator);
        TransportServer silent = silentServer(allocator, received)) {
      TqConfig config =
          TqConfig.builder()
              .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(1).sendRecvTimeout(SHORT)))
              .network(
                  n ->
                      n.controllerAddress(server.address())
                          .storageUnitAddresses(List.of(silent.address())))
              .client(c -> c.requestTimeout(LONG))
              .build();
      try (TqClient tq = connect(config);
          Batch rows = Batch.builder().objects("text", List.of("a")).build()) {
        assertThatThrownBy(() -> tq.kv().batchPut(List.of("k"), "p", rows, null))
            .satisfies(TqClientDeadlineTest::assertDeadline);
      }
      assertThat(received).hasPositiveValue();
    }
  }

  @Test
  void shouldFailWithDeadlineWhenStoreNodeNeverAnswersWithinRequestTimeout(
      BufferAllocator allocator) {
    AtomicInteger received = new AtomicInteger();
    Controller controller = new Controller(ControllerOptions.defaults());
    try (ControllerServer server =
            ControllerServer.start(controller, TransportConfig.builder().build(), allocator);
        TransportServer silent = silentServer(allocator, received)) {
      TqConfig config =
          TqConfig.builder()
              .backend(
                  b ->
                      b.storageBackend(StorageBackend.MOONCAKE_STORE)
                          .mooncakeStore(m -> m.maxRetries(0))
                          .simpleStorage(s -> s.sendRecvTimeout(LONG)))
              .network(
                  n ->
                      n.controllerAddress(server.address())
                          .storeNodeAddresses(List.of(silent.address())))
              .client(c -> c.requestTimeout(SHORT))
              .build();
      assertThatThrownBy(
              () -> {
                try (TqClient tq = connect(config);
                    Batch rows = Batch.builder().objects("text", List.of("a")).build()) {
                  tq.kv().batchPut(List.of("k"), "p", rows, null);
                }
              })
          // The store's per-key deadline code (RPC_TIMEOUT), once retries run out, is a typed
          // deadline error, as a silent storage unit's is.
          .isInstanceOfSatisfying(
              DeadlineExceededException.class,
              e ->
                  assertThat(e.getMessage())
                      .contains("error codes [" + StoreStatus.RPC_TIMEOUT.code() + "]"));
      assertThat(received).hasPositiveValue();
    }
  }
}
