package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.transferqueue.TqException;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;

/** How many controller calls {@link LocalMetaClient#clearSamples} makes, by backend. */
class ClearSamplesRoundTripsTest {

  /** {@code controller} with every call counted by method name into {@code statistics}. */
  private static ControllerApi counting(ControllerApi controller, AtomicInteger statistics) {
    return (ControllerApi)
        Proxy.newProxyInstance(
            ControllerApi.class.getClassLoader(),
            new Class<?>[] {ControllerApi.class},
            (proxy, method, args) -> {
              if (method.getName().equals("partitionStatistics")) {
                statistics.incrementAndGet();
              }
              try {
                return method.invoke(controller, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  @Test
  void shouldClearWholeSamplesWithoutAskingForStatisticsWhenTheBackendClearsWholeSamples() {
    TqConfig config = Systems.sysConfig();
    AtomicInteger statistics = new AtomicInteger();
    try (TransferQueueSystem system = Systems.start(config);
        LocalMetaClient client =
            new LocalMetaClient(
                counting(system.controller(), statistics), system.storage(), system.allocator())) {
      BatchMeta written;
      try (Batch batch =
          Rows.batch(
              "a",
              Rows.vector(system.allocator(), 1, 2, 3),
              "b",
              Rows.vector(system.allocator(), 4, 5, 6))) {
        written = client.put(batch, "p");
      }
      // Clear with metadata that lists only field a: field b's cells go too.
      client.clearSamples(written.selectFields(List.of("a")));

      assertThat(statistics.get()).as("partitionStatistics calls").isZero();
      assertThat(system.controller().getPartitionMeta("p").map(BatchMeta::size).orElse(0)).isZero();
      assertThatThrownBy(() -> client.getData(written).close()).isInstanceOf(TqException.class);
      assertThat(system.storage().clearsByField()).isFalse();
    }
  }
}
