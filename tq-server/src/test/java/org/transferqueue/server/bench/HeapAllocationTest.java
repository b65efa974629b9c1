package org.transferqueue.server.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class HeapAllocationTest {
  private static final long MIB = 1 << 20;
  private static final Baseline BASELINE = new Baseline(Baseline.MEMORY_COPY, MIB, List.of(1e-3));

  @Test
  void shouldDivideEachSideByTheMibMoved() {
    HeapAllocation h =
        new HeapAllocation(1, 256 * MIB, 256 * 100, 256 * 2048, 0, 512, 256 * 1024, 0, 2);

    assertThat(h.clientPutPerMib()).isCloseTo(100, within(1e-9));
    assertThat(h.serverPutPerMib()).isCloseTo(2048, within(1e-9));
    assertThat(h.clientGetPerMib()).isZero();
    assertThat(h.serverGetPerMib()).isCloseTo(2, within(1e-9));
    // The servers' 2048 per MiB put: the controller's 1024 and 512 on each of two storage servers.
    assertThat(h.controllerPutPerMib()).isCloseTo(1024, within(1e-9));
    assertThat(h.storageServerPutPerMib()).isCloseTo(512, within(1e-9));
    assertThat(h.controllerGetPerMib()).isZero();
    assertThat(h.storageServerGetPerMib()).isCloseTo(1, within(1e-9));
  }

  @Test
  void shouldAverageHeapFiguresAfterTheFirstIteration() {
    IterationResult r = new IterationResult(1, MIB, 1, 1, 1, 1, 1);
    CaseResult c =
        new CaseResult(
            BenchBackend.SIMPLE_STORAGE,
            BenchMode.LOOPBACK,
            BASELINE,
            List.of(),
            List.of(r, r, r),
            true,
            List.of(
                new HeapAllocation(1, MIB, 1_000_000, 0, 0, 0, 0, 0, 2),
                new HeapAllocation(2, MIB, 100, 0, 0, 0, 0, 0, 2),
                new HeapAllocation(3, MIB, 300, 0, 0, 0, 0, 0, 2)));

    assertThat(c.heapSteadyMean(HeapAllocation::clientPutPerMib).orElseThrow()).isEqualTo(200);
    assertThat(
            new CaseResult(
                    BenchBackend.SIMPLE_STORAGE,
                    BenchMode.EMBEDDED,
                    BASELINE,
                    List.of(),
                    List.of(r),
                    true,
                    List.of())
                .heapSteadyMean(HeapAllocation::clientPutPerMib))
        .isEmpty();
  }
}
