package org.transferqueue.server.bench;

import java.util.List;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.function.ToDoubleFunction;

/**
 * The iterations of one backend in one mode on one size. Summary figures are means over the
 * iterations, as upstream's chart averages its CSV rows.
 *
 * @param backend the backend
 * @param mode the mode
 * @param baseline the mode's baseline measured right before this case; every ratio of the case is
 *     to it, so that a change of the machine's load between cases does not skew the ratios
 * @param warmup the warm-up iterations run before the measured ones, in order; kept out of every
 *     mean (the first one pays for the first touch of the system's memory and for compiling its
 *     code paths)
 * @param iterations the measured iterations, in order
 * @param verified whether the data read in the first iteration was compared with what was put
 *     (always true when a run completes: a mismatch fails the run)
 * @param heap the heap allocation of each iteration's put and get on client and servers, in
 *     iteration order; empty when not measured (embedded mode)
 */
public record CaseResult(
    BenchBackend backend,
    BenchMode mode,
    Baseline baseline,
    List<IterationResult> warmup,
    List<IterationResult> iterations,
    boolean verified,
    List<HeapAllocation> heap) {

  /**
   * Copies the lists.
   *
   * @throws IllegalArgumentException when there is no iteration
   */
  public CaseResult {
    Objects.requireNonNull(baseline, "baseline");
    warmup = List.copyOf(warmup);
    iterations = List.copyOf(iterations);
    heap = List.copyOf(heap);
    if (iterations.isEmpty()) {
      throw new IllegalArgumentException("a case needs at least one iteration");
    }
  }

  /**
   * The mean of a heap figure over the iterations after the first (the first also loads and
   * compiles the code paths), or over the only one.
   *
   * @param figure the figure, e.g. {@link HeapAllocation#clientPutPerMib()}
   * @return the mean, or empty when the heap was not measured
   */
  public OptionalDouble heapSteadyMean(ToDoubleFunction<HeapAllocation> figure) {
    return heap.stream().skip(heap.size() > 1 ? 1 : 0).mapToDouble(figure).average();
  }

  /**
   * A label such as {@code SimpleStorage/embedded}.
   *
   * @return the label
   */
  public String label() {
    return backend.configName() + "/" + mode.optionName();
  }

  /**
   * The mean of a figure over the iterations.
   *
   * @param figure the figure, e.g. {@code IterationResult::totalGbPerSec}
   * @return the mean
   */
  public double mean(ToDoubleFunction<IterationResult> figure) {
    return iterations.stream().mapToDouble(figure).average().orElseThrow();
  }

  /**
   * The mean of a figure over the measured iterations after the first.
   *
   * @param figure the figure
   * @return the mean, or empty for a case of one iteration
   */
  public OptionalDouble steadyMean(ToDoubleFunction<IterationResult> figure) {
    return iterations.stream().skip(1).mapToDouble(figure).average();
  }
}
