package org.transferqueue.server.stress;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.server.bench.BenchBackend;
import org.transferqueue.testing.Await;

/**
 * Many concurrent clients against a controller and two storage servers of each backend, in this JVM
 * over loopback sockets, every byte over TCP or through shared memory: nothing lost, nothing
 * corrupted, no error, no client memory left.
 */
@ExtendWith(LeakCheckExtension.class)
class StressRunnerTest {

  /** Each backend over loopback TCP ({@code false}) and through shared memory ({@code true}). */
  static Stream<Arguments> transports() {
    return Stream.of(false, true)
        .flatMap(shm -> Stream.of(BenchBackend.values()).map(b -> Arguments.of(b, shm)));
  }

  private static StressResult run(
      BenchBackend backend,
      boolean sharedMemory,
      BufferAllocator allocator,
      int clients,
      Duration duration) {
    StressPlan plan =
        new StressPlan(
            clients,
            8,
            duration,
            4,
            4096,
            Duration.ofSeconds(60),
            true,
            7L,
            EnumSet.allOf(StressFlow.class));
    try (InProcessServers servers = new InProcessServers(backend, allocator, sharedMemory)) {
      long idle = allocator.allocatedBytes();
      StressResult result =
          new StressRunner(plan, System::nanoTime).run(servers.clientConfig(), Map::of);
      // Every partition was cleared and every client closed: the servers hold what they held
      // before the run (their connections close asynchronously), besides the first segment of
      // each shared-memory pool, which stays once created.
      Await.until(
          () -> allocator.allocatedBytes() - servers.sharedMemorySegmentBytes() == idle,
          "server memory back to "
              + idle
              + " bytes and the pools' segments, now "
              + allocator.allocatedBytes()
              + " with "
              + servers.sharedMemorySegmentBytes()
              + " in segments");
      return result;
    }
  }

  private static void assertClean(StressResult result, int clients) {
    assertThat(result.problems()).as("problems").isEmpty();
    assertThat(result.errors()).as("errors by code").isEmpty();
    assertThat(result.lost()).as("lost").isZero();
    assertThat(result.corrupted()).as("corrupted").isZero();
    assertThat(result.leakedBytes()).as("leaked client bytes").isZero();
    assertThat(result.clean()).isTrue();
    // Every client finished at least one iteration on each of its three partitions.
    assertThat(result.iterations()).isGreaterThanOrEqualTo(3L * clients);
    assertThat(result.rowsVerified()).isEqualTo(result.rowsWritten()).isPositive();
    Map<StressOp, StressResult.OpFigures> ops = result.operations();
    long puts = ops.get(StressOp.PUT).count();
    long kvPuts = ops.get(StressOp.KV_PUT).count();
    assertThat(puts + kvPuts).isEqualTo(result.iterations());
    assertThat(kvPuts).isGreaterThanOrEqualTo(clients);
    for (StressOp op : List.of(StressOp.FETCH, StressOp.GET, StressOp.CLEAR)) {
      assertThat(ops.get(op).count()).as(op.label()).isEqualTo(puts);
    }
    for (StressOp op : List.of(StressOp.KV_GET, StressOp.KV_CLEAR)) {
      assertThat(ops.get(op).count()).as(op.label()).isEqualTo(kvPuts);
    }
    assertThat(ops.get(StressOp.GET).bytes()).isEqualTo(ops.get(StressOp.PUT).bytes());
    assertThat(ops.get(StressOp.KV_GET).bytes()).isEqualTo(ops.get(StressOp.KV_PUT).bytes());
    assertThat(ops.get(StressOp.GET).p99Nanos())
        .isGreaterThanOrEqualTo(ops.get(StressOp.GET).p50Nanos())
        .isPositive();
    assertThat(result.peakRssBytes()).containsKey("client");
  }

  @ParameterizedTest(name = "{0}, shared memory {1}")
  @MethodSource("transports")
  @Timeout(60)
  void shouldLoseAndCorruptNothingWhen64ClientsShareTheServers(
      BenchBackend backend, boolean sharedMemory, BufferAllocator allocator) {
    StressResult result = run(backend, sharedMemory, allocator, 64, Duration.ofSeconds(3));

    assertClean(result, 64);
    assertThat(result.backend()).isEqualTo(backend.configName());
  }

  @ParameterizedTest
  @EnumSource(BenchBackend.class)
  @Timeout(60)
  void shouldReportTypedErrorsAndEndOnTimeWhenAStorageServerIsDown(
      BenchBackend backend, BufferAllocator allocator) throws Exception {
    StressPlan plan =
        new StressPlan(
            8,
            2,
            Duration.ofSeconds(1),
            4,
            1024,
            Duration.ofSeconds(5),
            true,
            3L,
            EnumSet.allOf(StressFlow.class));
    StressResult result;
    try (InProcessServers servers = new InProcessServers(backend, allocator)) {
      servers.stopStorageServer(1);
      result = new StressRunner(plan, System::nanoTime).run(servers.clientConfig(), Map::of);
    }

    assertThat(result.clean()).isFalse();
    // Typed errors only: every count is under a product error code, with the client named.
    assertThat(result.errors()).isNotEmpty();
    assertThat(result.errors().keySet())
        .allSatisfy(code -> assertThat(ErrorCode.valueOf(code)).isNotNull());
    assertThat(result.problems()).isNotEmpty().allMatch(p -> p.matches("[A-Z_]+: client \\d+: .+"));
    assertThat(result.corrupted()).isZero();
    assertThat(result.leakedBytes()).isZero();
  }

  @Tag("slow")
  @ParameterizedTest(name = "{0}, shared memory {1}")
  @MethodSource("transports")
  @Timeout(300)
  void shouldLoseAndCorruptNothingWhen1024ClientsShareTheServers(
      BenchBackend backend, boolean sharedMemory, BufferAllocator allocator) {
    StressResult result = run(backend, sharedMemory, allocator, 1024, Duration.ofSeconds(20));

    assertClean(result, 1024);
  }
}
