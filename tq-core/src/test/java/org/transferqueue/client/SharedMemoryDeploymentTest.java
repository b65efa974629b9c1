package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.transferqueue.client.Rows.longRows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.SharedMemoryStats;

/**
 * The scenario suites' two remote deployments really differ: under {@link Deployment#SHM} the
 * client attaches to every server and maps the segments its replies come from (so the shm runs of
 * the suites exercise the shared path even for their small tensors), and no lease or grant is left
 * once a result is closed; under {@link Deployment#LOOPBACK} no server offers shared memory at all.
 */
@ExtendWith(LeakCheckExtension.class)
class SharedMemoryDeploymentTest {

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldAttachAndMapTheServersSegmentsAndLeaveNoLeaseWhenShm(
      Backend backend, BufferAllocator allocator) {
    try (LoopbackSystem tq = (LoopbackSystem) Deployment.SHM.fresh(backend);
        Tensor x = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4}, 2, 2);
        Batch data = Batch.builder().dense("x", x).build()) {
      tq.kv().batchPut(List.of("a", "b"), "p", data, null);
      SharedMemoryStats before = tq.sharedMemory();
      assertThat(before.enabled()).isTrue();
      assertThat(before.attachedConnections()).as("attached client connections").isPositive();
      try (Batch read = tq.kv().batchGet(List.of("a", "b"), "p", List.of("x"))) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{1, 2}, {3, 4}});
      }
      // Servers and client share this process: every segment is mapped once by its server, and
      // again by each client connection that reads through it.
      assertThat(memfdMappings())
          .as("mappings of the servers' segments in this process")
          .isGreaterThan(tq.sharedMemory().segments());
      // The client sends its releases without waiting for a reply.
      org.transferqueue.testing.Await.until(
          () -> tq.sharedMemory().leases() == 0, "the leases released: " + tq.sharedMemory());
      SharedMemoryStats after = tq.sharedMemory();
      assertThat(after.grants())
          .as("unused grants, at most one spare per attached connection: " + after)
          .isLessThanOrEqualTo(after.attachedConnections());
      if (backend == Backend.SIMPLE_STORAGE) {
        // A unit keeps the rows a same-host client wrote into shared memory as its cells.
        assertThat(after.usedBytes() - after.grantBytes())
            .as("cells kept in the pool: " + after)
            .isGreaterThanOrEqualTo(x.nbytes());
      }
      // Once the samples are cleared, what stays is at most the spare grant a Java client keeps
      // per connection for its next request, and nothing else of the pool is in use.
      tq.kv().clear(List.of("a", "b"), "p");
      org.transferqueue.testing.Await.until(
          () -> tq.sharedMemory().idle(), "only spare grants hold pool memory");
    }
  }

  /**
   * Store nodes keep their objects in shared memory: a put from a same-host client is written
   * straight into the engine (placed grants, one copy) and a get is lent in place (the node copies
   * nothing into reply regions).
   */
  @Test
  void shouldPlaceStoreNodePutsAndLendStoreNodeReadsInPlace(BufferAllocator allocator) {
    try (LoopbackSystem tq = (LoopbackSystem) Deployment.SHM.fresh(Backend.MOONCAKE_STORE);
        Tensor x = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4}, 2, 2);
        Batch data = Batch.builder().dense("x", x).build()) {
      assertThat(tq.storeNodeSharedMemory().storageBytes())
          .as("the engines' slabs lie in the nodes' pools")
          .isGreaterThanOrEqualTo(tq.config().backend().mooncakeStore().globalSegmentSize() - 64);
      tq.kv().batchPut(List.of("a", "b"), "p", data, null);
      SharedMemoryStats before = tq.storeNodeSharedMemory();
      assertThat(before.requestBytesPlaced())
          .as("cell bytes placed: " + before)
          .isEqualTo(x.nbytes());
      assertThat(before.requestBytesGranted()).as("bytes through granted regions").isZero();
      try (Batch read = tq.kv().batchGet(List.of("a", "b"), "p", List.of("x"))) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{1, 2}, {3, 4}});
      }
      SharedMemoryStats after = tq.storeNodeSharedMemory();
      assertThat(after.replyBytesLent() - before.replyBytesLent())
          .as("cell bytes lent in place: " + after)
          .isEqualTo(x.nbytes());
      assertThat(after.replyBytesCopied()).as("bytes copied into reply regions").isZero();
      org.transferqueue.testing.Await.until(
          () -> tq.storeNodeSharedMemory().leases() == 0, "the leases released");
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldOfferNoSharedMemoryWhenLoopback(Backend backend, BufferAllocator allocator) {
    try (LoopbackSystem tq = (LoopbackSystem) Deployment.LOOPBACK.fresh(backend);
        Tensor x = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2}, 1, 2);
        Batch data = Batch.builder().dense("x", x).build()) {
      tq.kv().batchPut(List.of("a"), "p", data, null);
      try (Batch read = tq.kv().batchGet(List.of("a"), "p", List.of("x"))) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{1, 2}});
        assertThat(tq.sharedMemory().enabled()).isFalse();
        assertThat(tq.sharedMemory().segments()).isZero();
      }
    }
  }

  /** The shared-memory segment mappings of this process ({@code /proc/self/maps}). */
  private static long memfdMappings() {
    try (var lines = java.nio.file.Files.lines(java.nio.file.Path.of("/proc/self/maps"))) {
      return lines.filter(line -> line.contains("/memfd:tq-shm")).count();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
