package org.transferqueue.server.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A {@link BenchMode#SHM} case next to the {@link BenchMode#LOOPBACK} (TCP) case of the same
 * backend and size in the same run, both against the memory copy of the same bytes measured right
 * before the shm case (its {@link CaseResult#baseline()}). Throughput figures are means over the
 * measured iterations, CPU figures the mean CPU seconds of one put or get summed over the case's
 * processes (client and servers).
 *
 * @param shm the shared-memory case
 * @param tcp the TCP case of the same backend
 */
public record TransportComparison(CaseResult shm, CaseResult tcp) {
  /**
   * Checks the modes and the backend.
   *
   * @throws IllegalArgumentException when the cases are not shm and loopback of one backend
   */
  public TransportComparison {
    Objects.requireNonNull(shm, "shm");
    Objects.requireNonNull(tcp, "tcp");
    if (shm.mode() != BenchMode.SHM
        || tcp.mode() != BenchMode.LOOPBACK
        || shm.backend() != tcp.backend()) {
      throw new IllegalArgumentException(
          "compare an shm case with the loopback case of its backend: "
              + shm.label()
              + ", "
              + tcp.label());
    }
  }

  /**
   * The comparisons a size allows: one per backend that ran in both modes, in run order.
   *
   * @param size the size's results
   * @return the comparisons, empty when the run lacks either mode
   */
  public static List<TransportComparison> of(SizeResult size) {
    List<TransportComparison> out = new ArrayList<>();
    for (CaseResult shm : size.cases()) {
      if (shm.mode() != BenchMode.SHM) {
        continue;
      }
      for (CaseResult tcp : size.cases()) {
        if (tcp.mode() == BenchMode.LOOPBACK && tcp.backend() == shm.backend()) {
          out.add(new TransportComparison(shm, tcp));
          break;
        }
      }
    }
    return List.copyOf(out);
  }

  /**
   * The backend both cases ran.
   *
   * @return the backend
   */
  public BenchBackend backend() {
    return shm.backend();
  }

  /**
   * The memory copy of the same bytes, measured right before the shm case.
   *
   * @return 10^9 bytes per second
   */
  public double memoryCopyGbPerSec() {
    return shm.baseline().gbPerSec();
  }

  /**
   * Put throughput over shared memory divided by the memory copy's.
   *
   * @return the ratio
   */
  public double shmPutToMemoryCopy() {
    return shm.mean(IterationResult::putGbPerSec) / memoryCopyGbPerSec();
  }

  /**
   * Get throughput over shared memory divided by the memory copy's.
   *
   * @return the ratio
   */
  public double shmGetToMemoryCopy() {
    return shm.mean(IterationResult::getGbPerSec) / memoryCopyGbPerSec();
  }

  /**
   * Put throughput over TCP divided by the same memory copy's.
   *
   * @return the ratio
   */
  public double tcpPutToMemoryCopy() {
    return tcp.mean(IterationResult::putGbPerSec) / memoryCopyGbPerSec();
  }

  /**
   * Get throughput over TCP divided by the same memory copy's.
   *
   * @return the ratio
   */
  public double tcpGetToMemoryCopy() {
    return tcp.mean(IterationResult::getGbPerSec) / memoryCopyGbPerSec();
  }

  /**
   * Put throughput over shared memory divided by that over TCP.
   *
   * @return the ratio
   */
  public double putShmToTcp() {
    return shm.mean(IterationResult::putGbPerSec) / tcp.mean(IterationResult::putGbPerSec);
  }

  /**
   * Get throughput over shared memory divided by that over TCP.
   *
   * @return the ratio
   */
  public double getShmToTcp() {
    return shm.mean(IterationResult::getGbPerSec) / tcp.mean(IterationResult::getGbPerSec);
  }

  /**
   * CPU seconds of a put over shared memory divided by those over TCP.
   *
   * @return the ratio, NaN when CPU was not measured
   */
  public double putCpuShmToTcp() {
    return shm.mean(IterationResult::putCpuSeconds) / tcp.mean(IterationResult::putCpuSeconds);
  }

  /**
   * CPU seconds of a get over shared memory divided by those over TCP.
   *
   * @return the ratio, NaN when CPU was not measured
   */
  public double getCpuShmToTcp() {
    return shm.mean(IterationResult::getCpuSeconds) / tcp.mean(IterationResult::getCpuSeconds);
  }
}
