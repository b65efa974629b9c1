package org.transferqueue.server.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class IterationResultTest {

  @Test
  void shouldDeriveUpstreamGbpsAndDecimalGbPerSecAndRatios() {
    long bytes = 1L << 30; // 1 GiB
    IterationResult r = new IterationResult(1, bytes, 0.5, 0.01, 0.25, 0.02, 4.0);
    assertThat(r.gib()).isEqualTo(1.0);
    assertThat(r.putGbps()).isCloseTo(16.0, within(1e-12));
    assertThat(r.getGbps()).isCloseTo(32.0, within(1e-12));
    assertThat(r.totalGbps()).isCloseTo(16.0 / 0.75, within(1e-12));
    assertThat(r.putGbPerSec()).isCloseTo(bytes / 1e9 / 0.5, within(1e-12));
    assertThat(r.getGbPerSec()).isCloseTo(bytes / 1e9 / 0.25, within(1e-12));
    assertThat(r.totalGbPerSec()).isCloseTo(2 * bytes / 1e9 / 0.75, within(1e-12));
    assertThat(r.putRatio()).isCloseTo(r.putGbPerSec() / 4.0, within(1e-12));
    assertThat(r.totalRatio()).isCloseTo(r.totalGbPerSec() / 4.0, within(1e-12));
  }

  @Test
  void shouldTakeTheMedianRepetitionAsBaseline() {
    Baseline baseline =
        new Baseline(Baseline.MEMORY_COPY, 2_000_000_000L, java.util.List.of(4.0, 1.0, 2.0));
    assertThat(baseline.medianSeconds()).isEqualTo(2.0);
    assertThat(baseline.gbPerSec()).isEqualTo(1.0);
  }
}
