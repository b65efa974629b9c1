package org.transferqueue.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.transferqueue.codec.MsgpackValue.newArray;
import static org.transferqueue.codec.MsgpackValue.newInteger;
import static org.transferqueue.codec.MsgpackValue.newNil;
import static org.transferqueue.codec.MsgpackValue.newString;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.TqException;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.tensor.DType;
import org.transferqueue.transport.TransportConfig;

/**
 * A consumer that dies (its connection ends) while its blocking fetch waits in the controller must
 * not consume the samples that arrive afterwards: its reply could never be delivered, so those
 * samples would be marked consumed for the task and lost to it.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AbandonedFetchTest {

  @RepeatedTest(5)
  void shouldNotConsumeSamplesForAFetchWhoseConnectionEnded(BufferAllocator allocator)
      throws Exception {
    Controller controller = new Controller(ControllerOptions.defaults());
    CountDownLatch fetchWaiting = new CountDownLatch(1);
    CompletableFuture<Object> abandoned = new CompletableFuture<>();
    ControllerApi observed =
        (ControllerApi)
            Proxy.newProxyInstance(
                ControllerApi.class.getClassLoader(),
                new Class<?>[] {ControllerApi.class},
                (proxy, method, args) -> {
                  boolean fetch =
                      method.getName().equals("getMetadata")
                          && ((GetMetadataRequest) args[0]).taskName() != null;
                  if (fetch) {
                    fetchWaiting.countDown();
                  }
                  try {
                    Object result = method.invoke(controller, args);
                    if (fetch) {
                      abandoned.complete(result);
                    }
                    return result;
                  } catch (InvocationTargetException e) {
                    if (fetch) {
                      abandoned.complete(e.getCause());
                    }
                    throw e.getCause();
                  }
                });
    ControllerServer server =
        ControllerServer.start(observed, TransportConfig.builder().bindPort(0).build(), allocator);
    try {
      try (RawFrames.Connection consumer = new RawFrames.Connection(server.address())) {
        consumer.write(RawFrames.request(1, 1, newArray(newNil()), List.of()));
        consumer.read();
        // FETCH 2 samples of field f for task t, waiting up to 30 s.
        consumer.write(
            RawFrames.request(
                109,
                2,
                newArray(
                    newArray(
                        newString("FETCH"),
                        newString("p"),
                        newArray(newString("f")),
                        newString("t"),
                        newInteger(2),
                        newArray(newNil(), newNil(), newNil()),
                        newInteger(Duration.ofSeconds(30).toNanos()))),
                List.of()));
        assertThat(fetchWaiting.await(10, TimeUnit.SECONDS)).isTrue();
      } // the consumer dies

      // Its fetch ends as soon as the server sees the connection gone, having consumed nothing.
      Object outcome = abandoned.get(10, TimeUnit.SECONDS);
      assertThat(outcome).isInstanceOf(TqException.class);

      // Data that arrives afterwards stays for the task's next consumer.
      BatchMeta inserted = controller.getMetadata(GetMetadataRequest.insert("p", List.of("f"), 2));
      controller.updateProductionStatus(
          new ProductionUpdate(
              "p",
              inserted.globalIndexes(),
              Map.of("f", FieldSchema.regular(DType.INT64, 4)),
              null));
      BatchMeta next =
          controller.getMetadata(
              GetMetadataRequest.fetch("p", List.of("f"), "t", 2)
                  .withTimeout(Duration.ofSeconds(5)));
      assertThat(next.globalIndexes()).containsExactlyElementsOf(inserted.globalIndexes());
    } finally {
      server.close();
    }
  }
}
