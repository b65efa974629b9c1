package org.transferqueue.server.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

class MemoryCheckTest {
  private static final long GIB = 1L << 30;

  @Test
  void shouldRefuseMediumWhenPhysicalMemoryIsShort() {
    long bytes = Workload.expectedBytes(BenchSize.MEDIUM, false);
    assertThatThrownBy(
            () ->
                MemoryCheck.check(
                    BenchSize.MEDIUM,
                    bytes,
                    List.of(BenchBackend.SIMPLE_STORAGE),
                    MemoryProbe.fixed(16 * GIB, 24 * GIB),
                    OptionalLong.empty()))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("medium")
        .hasMessageContaining("16.00 GiB of physical memory is available")
        .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.OUT_OF_MEMORY));
  }

  @Test
  void shouldAcceptSmallWhenMemoryIsPlenty() {
    long bytes = Workload.expectedBytes(BenchSize.SMALL, false);
    assertThatNoException()
        .isThrownBy(
            () ->
                MemoryCheck.check(
                    BenchSize.SMALL,
                    bytes,
                    List.of(BenchBackend.values()),
                    MemoryProbe.fixed(8 * GIB, 16 * GIB),
                    OptionalLong.of(4 * GIB)));
  }

  @Test
  void shouldRefuseWhenTheAllocatorLimitIsBelowTheSystemsShare() {
    long bytes = Workload.expectedBytes(BenchSize.SMALL, false);
    assertThatThrownBy(
            () ->
                MemoryCheck.check(
                    BenchSize.SMALL,
                    bytes,
                    List.of(BenchBackend.MOONCAKE_STORE),
                    MemoryProbe.fixed(64 * GIB, 64 * GIB),
                    OptionalLong.of(512L << 20)))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("memory.limit_bytes=536870912")
        .hasMessageContaining("MooncakeStore");
  }

  @Test
  void shouldCountDataStoredCopyAndReadCopy() {
    long bytes = 100L << 20;
    assertThat(MemoryCheck.requiredBytes(bytes, List.of(BenchBackend.SIMPLE_STORAGE)))
        .isGreaterThanOrEqualTo(3 * bytes);
    assertThat(MemoryCheck.requiredBytes(bytes, List.of(BenchBackend.values())))
        .isGreaterThanOrEqualTo(bytes + MemoryCheck.mooncakeSegmentBytes(bytes) + bytes);
  }
}
