package org.transferqueue.server.stress;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Counting by error code and keeping a few problem messages of each kind. */
class StressStatsTest {

  @Test
  void shouldCountEveryErrorButKeepOnlyTheFirstMessagesOfEachKind() {
    StressStats stats = new StressStats();
    for (int i = 0; i < 100; i++) {
      stats.error("CONNECTION_FAILED", "client " + i);
    }
    stats.error("DEADLINE_EXCEEDED", "slow");
    stats.lost(4, "own partition");
    stats.corrupted("bad checksum");

    assertThat(stats.errors())
        .isEqualTo(Map.of("CONNECTION_FAILED", 100L, "DEADLINE_EXCEEDED", 1L));
    assertThat(stats.lost()).isEqualTo(4);
    assertThat(stats.corrupted()).isEqualTo(1);
    assertThat(stats.problems())
        .containsExactly(
            "CONNECTION_FAILED: client 0",
            "CONNECTION_FAILED: client 1",
            "CONNECTION_FAILED: client 2",
            "DEADLINE_EXCEEDED: slow",
            "lost 4: own partition",
            "corrupted: bad checksum");
  }

  @Test
  void shouldReportFiguresPerOperation() {
    StressStats stats = new StressStats();
    stats.operation(StressOp.PUT, 1_000_000, 4096);
    stats.operation(StressOp.PUT, 3_000_000, 4096);

    StressResult.OpFigures put = stats.figures().get(StressOp.PUT);
    assertThat(put.count()).isEqualTo(2);
    assertThat(put.bytes()).isEqualTo(8192);
    assertThat(put.maxNanos()).isEqualTo(3_000_000);
    assertThat(put.p99Nanos()).isEqualTo(3_000_000);
    assertThat(put.p50Nanos()).isBetween(1_000_000L, 1_000_000L + 1_000_000L / 16);
    assertThat(stats.figures().get(StressOp.KV_GET).count()).isZero();
  }
}
