package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;
import static org.transferqueue.client.Rows.longRows;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.ConfigException;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.GrpoGroupNSampler;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.simple.SimpleStorageManager;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;

/**
 * Client-api §4 A1, A2, A4, A5, A8 and A9: starting, configuring and closing a system. The
 * scenarios a deployment can change (samplers, closing, other clients) run embedded and over
 * loopback; A1 inspects the embedded storage manager and A2, A5 and the unknown-sampler case only
 * build configurations or an embedded registry, so they run embedded. A3, A6, A7, A10 and A11
 * concern processes attaching over the network and metrics endpoints (TqClientTest and the server
 * tests).
 */
@ExtendWith(LeakCheckExtension.class)
class LifecycleScenariosTest {

  @Test
  void A1_defaults() {
    try (TransferQueueSystem tq = Systems.start(TqConfig.defaults())) {
      TqConfig config = tq.config();
      assertThat(config.metrics().enabled()).isFalse();
      assertThat(config.metrics().port()).isZero();
      assertThat(config.controller().sampler()).isEqualTo("SequentialSampler");
      assertThat(config.controller().pollingMode()).isFalse();
      assertThat(config.backend().storageBackend()).isEqualTo(StorageBackend.SIMPLE_STORAGE);
      assertThat(config.backend().simpleStorage().numDataStorageUnits()).isEqualTo(2);
      assertThat(config.backend().simpleStorage().totalStorageSize())
          .isEqualTo(OptionalLong.empty());
      // Embedded: no controller address; the storage units are the two in-process ones.
      assertThat(tq.storage().backendName()).isEqualTo("SimpleStorage");
      assertThat(((SimpleStorageManager) tq.storage()).units()).hasSize(2);
      assertThat(tq.controller().snapshotState().samplerType())
          .isEqualTo(SequentialSampler.class.getSimpleName());
    }
  }

  @Test
  void A2_overridesMergeOverDefaults() {
    TqConfig config =
        TqConfig.builder()
            .set("controller.polling_mode", true)
            .set("backend.SimpleStorage.total_storage_size", 200L)
            .set("backend.SimpleStorage.num_data_storage_units", 2)
            .build();
    try (TransferQueueSystem tq = Systems.start(config)) {
      assertThat(tq.config().controller().pollingMode()).isTrue();
      assertThat(tq.config().backend().simpleStorage().totalStorageSize())
          .isEqualTo(OptionalLong.of(200));
      assertThat(tq.config().backend().simpleStorage().numDataStorageUnits()).isEqualTo(2);
      assertThat(tq.config().metrics().enabled()).isFalse();
      assertThat(tq.config().controller().sampler()).isEqualTo("SequentialSampler");
      assertThat(tq.config().controller().preallocSampleNum()).isEqualTo(1);
    }
  }

  @ParameterizedTest
  @EnumSource(Deployment.class)
  void A4_samplerByName(Deployment deployment, BufferAllocator allocator) {
    try (TestSystem tq =
        deployment.start(
            Systems.sysConfig(b -> b.controller(c -> c.sampler("GRPOGroupNSampler"))))) {
      assertThat(tq.controller().snapshotState().samplerType())
          .isEqualTo(GrpoGroupNSampler.class.getSimpleName());
    }
    assertThat(TransferQueueSystem.samplerNamed("GRPOGroupNSampler"))
        .isInstanceOf(GrpoGroupNSampler.class);
  }

  @ParameterizedTest
  @EnumSource(Deployment.class)
  void A4_samplerInstanceSamplesGroups(Deployment deployment, BufferAllocator allocator) {
    try (TestSystem tq =
            deployment.start(Systems.sysConfig(), MissingKeyPolicy.FAIL, new GrpoGroupNSampler(2));
        Batch data = batch("x", i64(allocator, new long[] {0}, new long[] {1}, new long[] {2}))) {
      tq.client().put(data, "groups");
      assertThatThrownBy(
              () -> tq.client().getMeta(GetMetadataRequest.fetch("groups", List.of("x"), "t", 3)))
          .isInstanceOf(TqException.class)
          .satisfies(
              e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
      BatchMeta pair =
          tq.client().getMeta(GetMetadataRequest.fetch("groups", List.of("x"), "t", 2));
      assertThat(pair.globalIndexes()).containsExactly(0L, 1L);
      assertThat(
              tq.client().getMeta(GetMetadataRequest.fetch("groups", List.of("x"), "t", 2)).size())
          .as("only one sample of the next group exists")
          .isZero();
    }
  }

  @Test
  void A4_unknownSamplerFailsBeforeAnythingStarts() {
    assertThatThrownBy(() -> Systems.sysConfig(b -> b.controller(c -> c.sampler("NoSuchSampler"))))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("NoSuchSampler");
    TqConfig qualified =
        Systems.sysConfig(b -> b.controller(c -> c.sampler("com.example.NoSuchSampler")));
    AtomicInteger storageStarts = new AtomicInteger();
    StorageManagerRegistry counting =
        StorageManagerRegistry.builder()
            .register(
                StorageManagerRegistry.SIMPLE_STORAGE,
                context -> {
                  storageStarts.incrementAndGet();
                  return SimpleStorageManager.create(
                      context, ConfigMapper.simpleStorage(qualified));
                })
            .build();
    assertThatThrownBy(() -> Systems.builder(qualified).storageBackends(counting).start())
        .isInstanceOf(TqException.class)
        .satisfies(
            e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
        .hasMessageContaining("com.example.NoSuchSampler");
    assertThat(storageStarts).hasValue(0);
  }

  @Test
  void A5_unknownConfigurationKeyIsRejected() {
    assertThatThrownBy(() -> TqConfig.builder().set("controller.poling_mode", true))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("controller.poling_mode");
    assertThatThrownBy(
            () -> TqConfig.builder().set("backend.SimpleStorage.num_data_storage_units", 0).build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("backend.SimpleStorage.num_data_storage_units");
  }

  @ParameterizedTest
  @EnumSource(Deployment.class)
  void A8_closeIsIdempotentAndRestartIsFresh(Deployment deployment, BufferAllocator allocator) {
    try (Batch three = batch("x", i64(allocator, new long[] {1}, new long[] {2}, new long[] {3}));
        Batch two = batch("x", i64(allocator, new long[] {4}, new long[] {5}))) {
      TestSystem first = deployment.fresh();
      first.client().put(three, "p");
      first.kv().put("k", "kv", (Batch) null, Map.of("tag", 1L));
      first.close();
      assertThatCode(first::close).doesNotThrowAnyException();
      assertThatThrownBy(() -> first.client().getPartitionList())
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.CLOSED));
      try (TestSystem second = deployment.fresh()) {
        assertThat(second.client().getPartitionList()).isEmpty();
        assertThat(second.kv().list(null)).isEmpty();
        assertThat(second.client().put(two, "p").globalIndexes()).containsExactly(0L, 1L);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Deployment.class)
  void A9_closingAClientLeavesTheSystemRunning(Deployment deployment, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh();
        Batch data = batch("x", i64(allocator, new long[] {1}, new long[] {2}))) {
      MetaClient other = tq.newClient();
      BatchMeta written = other.put(data, "shared");
      other.close();
      assertThatCode(other::close).doesNotThrowAnyException();
      assertThatThrownBy(() -> other.getPartitionList())
          .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.CLOSED));
      BatchMeta more = tq.client().put(data, "shared");
      try (Batch read = tq.client().getData(written);
          Batch again = tq.client().getData(more)) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{1}, {2}});
        assertThat(longRows(again.column("x"))).isDeepEqualTo(new long[][] {{1}, {2}});
      }
    }
  }
}
