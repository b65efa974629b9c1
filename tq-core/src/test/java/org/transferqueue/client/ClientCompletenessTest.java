package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.LoaderFixtures.putIds;

import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * The low-level client is complete: an asynchronous twin for every call, a reset that says whether
 * it reset anything, checkpoints with the caller's metadata; embedded and over the wire.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientCompletenessTest {
  @Parameter Deployment deployment;

  @TempDir Path tmp;

  @Test
  void shouldOfferAnAsyncTwinForEveryMetaClientCall() {
    Set<String> missing = new TreeSet<>();
    for (Method m : MetaClient.class.getMethods()) {
      if (m.getName().endsWith("Async") || m.getName().equals("close") || m.isDefault()) {
        continue;
      }
      boolean twin =
          Arrays.stream(MetaClient.class.getMethods())
              .anyMatch(
                  a ->
                      a.getName().equals(m.getName() + "Async")
                          && Arrays.equals(a.getParameterTypes(), m.getParameterTypes())
                          && a.getReturnType() == CompletableFuture.class);
      if (!twin) {
        missing.add(
            m.getName()
                + Arrays.stream(m.getParameterTypes())
                    .map(Class::getSimpleName)
                    .collect(Collectors.joining(", ", "(", ")")));
      }
    }
    assertThat(missing).as("MetaClient methods without an ...Async twin").isEmpty();
  }

  @Test
  void shouldAnswerEveryAsyncTwinAsItsBlockingCall(BufferAllocator allocator) throws Exception {
    try (TestSystem tq = deployment.fresh()) {
      MetaClient client = tq.client();
      putIds(client, allocator, "p", 1, 2);
      List<String> fields = List.of("meta_idx");
      assertThat(client.getPartitionListAsync().get()).isEqualTo(client.getPartitionList());
      assertThat(client.getProductionStatusAsync("p", fields).get())
          .isEqualTo(client.getProductionStatus("p", fields));
      assertThat(client.checkProductionStatusAsync("p", fields).get()).isTrue();
      client.getMeta(GetMetadataRequest.fetch("p", fields, "actor", 2));
      assertThat(client.getConsumptionStatusAsync("p", "actor").get())
          .isEqualTo(client.getConsumptionStatus("p", "actor"));
      assertThat(client.checkConsumptionStatusAsync("p", "actor").get()).isTrue();
      assertThat(client.resetConsumptionAsync("p", "actor").get()).isTrue();
      assertThat(client.checkConsumptionStatus("p", "actor")).isFalse();

      try (Batch rows =
          Batch.builder()
              .dense("x", Tensor.ofLongs(allocator, DType.INT64, new long[] {7, 8}, 2, 1))
              .build()) {
        BatchMeta put = client.putKeysAsync("kv", List.of("a", "b"), rows, null).get();
        assertThat(put.size()).isEqualTo(2);
      }
      BatchMeta keys = client.resolveKeysAsync("kv", List.of("b", "a"), false).get();
      assertThat(client.resolveIndexesAsync("kv", keys.globalIndexes()).get())
          .containsExactly("b", "a");
      assertThat(client.listKeysAsync("kv").get()).isEqualTo(client.listKeys("kv"));
      assertThatThrownBy(() -> client.resolveIndexesAsync("nope", List.of(0L)).join())
          .hasCauseInstanceOf(TqException.class);
    }
  }

  @Test
  void shouldReportWhetherAResetResetAnything(BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh()) {
      MetaClient client = tq.client();
      putIds(client, allocator, "p", 1, 2);
      assertThat(client.resetConsumption("missing", "actor")).as("unknown partition").isFalse();
      assertThat(client.resetConsumption("p", "actor")).as("unknown task").isFalse();
      assertThat(client.resetConsumption("p", null)).as("no task at all").isFalse();
      client.getMeta(GetMetadataRequest.fetch("p", List.of("meta_idx"), "actor", 1));
      client.getMeta(GetMetadataRequest.fetch("p", List.of("meta_idx"), "critic", 1));
      assertThat(client.resetConsumption("p", "actor")).as("one consumed sample").isTrue();
      assertThat(client.resetConsumption("p", "actor")).as("nothing left to reset").isFalse();
      assertThat(client.resetConsumption("p", null)).as("the critic's sample").isTrue();
      assertThat(client.resetConsumption("p", null)).isFalse();
    }
  }

  @Test
  void shouldReturnTheMetadataSavedWithACheckpoint(BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh()) {
      putIds(tq.client(), allocator, "p", 1, 2);
      Map<String, Object> metadata = new LinkedHashMap<>();
      metadata.put("iteration", 42);
      metadata.put("loss", 0.5);
      metadata.put("run", "exp-7");
      metadata.put("stages", List.of("rollout", Map.of("name", "train", "done", true)));
      metadata.put("note", null);
      Path dir = tmp.resolve("ckpt");
      CheckpointResult saved = tq.saveCheckpoint(dir, true, metadata);
      assertThat(saved.metadata()).containsEntry("iteration", 42L).containsEntry("loss", 0.5);

      tq.client().clearPartition("p");
      Map<String, Object> loaded = tq.loadCheckpoint(dir);
      assertThat(loaded)
          .containsExactly(
              Map.entry("iteration", 42L),
              Map.entry("loss", 0.5),
              Map.entry("run", "exp-7"),
              Map.entry("stages", List.of("rollout", Map.of("name", "train", "done", true))),
              new java.util.AbstractMap.SimpleEntry<>("note", null));
      assertThat(tq.client().getPartitionList()).contains("p");

      Path plain = tmp.resolve("plain");
      tq.saveCheckpoint(plain, true);
      assertThat(tq.loadCheckpoint(plain)).isEmpty();
    }
  }

  @Test
  void shouldRefuseMetadataThatIsNotPlainBeforeWritingAnything(BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh();
        Tensor tensor = Tensor.ofLongs(allocator, DType.INT64, new long[] {1}, 1)) {
      Path dir = tmp.resolve("refused");
      assertThatThrownBy(() -> tq.saveCheckpoint(dir, true, Map.of("weights", tensor)))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("metadata");
      assertThat(dir).doesNotExist();
      assertThat(tmp.toFile().list()).isEmpty();
    }
  }
}
