package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.Rows.longRows;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * What the network deployment adds to the integrity promises, over loopback TCP and over shared
 * memory alike: a value no frame can carry is refused at once with the limit it exceeds (never
 * retried as a connection failure), a batch larger than a frame is split, and losing one store node
 * loses only the samples it held.
 */
@ExtendWith(LeakCheckExtension.class)
class LoopbackIntegrityTest {
  private static final long MAX_FRAME_BYTES = 1L << 20;

  private static TqConfig smallFrames(Backend backend) {
    TqConfig base = backend.sysConfig();
    TqConfig.Builder builder = TqConfig.builder();
    builder.backend(b -> b.storageBackend(base.backend().storageBackend()));
    if (base.backend().storageBackend() != org.transferqueue.config.StorageBackend.SIMPLE_STORAGE) {
      builder.backend(
          b -> b.mooncakeStore(m -> m.globalSegmentSize(64L << 20).localBufferSize(1L << 20)));
    }
    return builder.network(n -> n.maxFrameBytes(MAX_FRAME_BYTES)).build();
  }

  /** Each backend over loopback TCP and over shared memory. */
  static Stream<Arguments> remote() {
    return Stream.of(Deployment.LOOPBACK, Deployment.SHM)
        .flatMap(d -> Stream.of(Backend.values()).map(b -> Arguments.of(d, b)));
  }

  @ParameterizedTest
  @MethodSource("remote")
  void shouldRefuseAValueLargerThanAFrameWithFrameTooLongAndKeepServing(
      Deployment deployment, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.start(smallFrames(backend));
        Tensor big = Tensor.zeros(allocator, DType.INT64, 1, (2 * MAX_FRAME_BYTES) / 8);
        Batch data = Batch.builder().dense("x", big).build();
        Tensor small = Tensor.ofLongs(allocator, DType.INT64, new long[] {4, 2}, 1, 2);
        Batch fits = Batch.builder().dense("x", small).build()) {
      assertThatThrownBy(() -> tq.kv().put("big", "p", data, null))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FRAME_TOO_LONG))
          .hasMessageContaining(String.valueOf(MAX_FRAME_BYTES));
      assertThat(tq.kv().list("p").getOrDefault("p", java.util.Map.of())).isEmpty();

      tq.kv().put("small", "p", fits, null);
      try (Batch read = tq.kv().batchGet(List.of("small"), "p", null)) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{4, 2}});
      }
    }
  }

  @ParameterizedTest
  @MethodSource("remote")
  void shouldSplitABatchLargerThanAFrameIntoSeveralRequests(
      Deployment deployment, Backend backend, BufferAllocator allocator) {
    int rows = 8;
    long width = (MAX_FRAME_BYTES / 3) / 8; // each row a third of a frame: 8 rows need 3 frames
    Tensor values = Tensor.zeros(allocator, DType.INT64, rows, width);
    for (int r = 0; r < rows; r++) {
      values.setLong(r * width, r + 1);
    }
    try (TestSystem tq = deployment.start(smallFrames(backend));
        Batch data = Batch.builder().dense("x", values).build()) {
      BatchMeta meta = tq.client().put(data, "p");
      try (Batch read = tq.client().getData(meta)) {
        long[][] got = longRows(read.column("x"));
        for (int r = 0; r < rows; r++) {
          assertThat(got[r][0]).isEqualTo(r + 1);
          assertThat(got[r]).hasSize((int) width);
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = Deployment.class,
      names = {"LOOPBACK", "SHM"})
  void shouldKeepTheSamplesOfTheOtherNodeWholeWhenOneStoreNodeIsLost(
      Deployment deployment, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(Backend.MOONCAKE_STORE);
        Tensor ids = Tensor.ofLongs(allocator, DType.INT64, new long[] {0, 1, 2, 3, 4, 5}, 6, 1);
        Tensor mask = Tensor.ofLongs(allocator, DType.INT64, new long[] {9, 9, 9, 9, 9, 9}, 6, 1);
        Batch data = Batch.builder().dense("ids", ids).dense("mask", mask).build()) {
      BatchMeta meta = tq.client().put(data, "p");
      ((LoopbackSystem) tq).stopStoreNode(1);

      List<Integer> onNodeZero = new ArrayList<>();
      List<Integer> onNodeOne = new ArrayList<>();
      for (int i = 0; i < meta.size(); i++) {
        (meta.globalIndex(i) % LoopbackSystem.STORE_NODES == 0 ? onNodeZero : onNodeOne).add(i);
      }
      assertThat(onNodeZero).isNotEmpty();
      assertThat(onNodeOne).isNotEmpty();
      try (Batch read = tq.client().getData(meta.selectSamples(onNodeZero))) {
        for (int r = 0; r < onNodeZero.size(); r++) {
          long gi = meta.globalIndex(onNodeZero.get(r));
          assertThat(longRows(read.column("ids"))[r])
              .containsExactly(ids.getLong(onNodeZero.get(r)));
          assertThat(longRows(read.column("mask"))[r]).as("sample %d", gi).containsExactly(9);
        }
      }
      assertThatThrownBy(() -> tq.client().getData(meta.selectSamples(onNodeOne)).close())
          .isInstanceOfSatisfying(
              TqException.class,
              e -> assertThat(e.code()).isIn(ErrorCode.CONNECTION_FAILED, ErrorCode.STORAGE_ERROR));
    }
  }
}
