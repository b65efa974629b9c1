package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.tensor.Batch;

/** Which controller calls a key-value put makes from the client. */
class KvPutRoundTripsTest {

  /** {@code controller} with the name of every call appended to {@code calls}. */
  private static ControllerApi recording(ControllerApi controller, List<String> calls) {
    return (ControllerApi)
        Proxy.newProxyInstance(
            ControllerApi.class.getClassLoader(),
            new Class<?>[] {ControllerApi.class},
            (proxy, method, args) -> {
              calls.add(method.getName());
              try {
                return method.invoke(controller, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  @Test
  void shouldResolveKeysAndCheckTheSchemaInOneCallWhenPuttingRows() {
    List<String> calls = new CopyOnWriteArrayList<>();
    try (TransferQueueSystem system = Systems.start(Systems.sysConfig());
        LocalMetaClient client =
            new LocalMetaClient(
                recording(system.controller(), calls), system.storage(), system.allocator());
        KvApi kv = new KvApi(client, MissingKeyPolicy.FAIL)) {
      KvBatchMeta meta;
      try (Batch rows = Rows.batch("x", Rows.vector(system.allocator(), 1, 2))) {
        meta = kv.batchPut(List.of("a", "b"), "p", rows, null);
      }
      // The production notification goes from storage to the controller, not through the client.
      assertThat(calls).containsExactly("resolveKeysForPut");
      assertThat(meta.keys()).containsExactly("a", "b");
      assertThat(meta.fields()).containsExactly("x");

      calls.clear();
      try (Batch rows = Rows.batch("x", Rows.f32(system.allocator(), new float[] {1f}))) {
        assertThatThrownBy(() -> kv.batchPut(List.of("c"), "p", rows, null))
            .isInstanceOfSatisfying(
                TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
      }
      assertThat(calls).containsExactly("resolveKeysForPut");
      assertThat(kv.list("p").get("p")).containsOnlyKeys("a", "b");

      calls.clear();
      meta = kv.put("a", "p", (Map<String, ?>) null, Map.of("score", 1));
      assertThat(calls).containsExactly("resolveKeys", "setTags");
      assertThat(meta.tags()).containsExactly(Map.of("score", 1L));
      assertThat(meta.fields()).containsExactly("x");
    }
  }
}
