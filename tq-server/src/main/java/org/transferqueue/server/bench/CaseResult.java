package org.transferqueue.server.bench;

import java.util.List;
import java.util.OptionalDouble;
import java.util.function.ToDoubleFunction;

/**
 * The iterations of one backend in one mode on one size. Summary figures are means over the
 * iterations, as upstream's chart averages its CSV rows.
 *
 * @param backend the backend
 * @param mode the mode
 * @param iterations the iterations, in order
 * @param verified whether the data read in the first iteration was compared with what was put
 *     (always true when a run completes: a mismatch fails the run)
 */
public record CaseResult(
    BenchBackend backend, BenchMode mode, List<IterationResult> iterations, boolean verified) {

  /**
   * Copies the list.
   *
   * @throws IllegalArgumentException when there is no iteration
   */
  public CaseResult {
    iterations = List.copyOf(iterations);
    if (iterations.isEmpty()) {
      throw new IllegalArgumentException("a case needs at least one iteration");
    }
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
   * The mean of a figure over the iterations after the first. The first iteration of a case also
   * pays for the system's first touch of its memory and for compiling the code paths; the later
   * ones show the steady state.
   *
   * @param figure the figure
   * @return the mean, or empty for a case of one iteration
   */
  public OptionalDouble steadyMean(ToDoubleFunction<IterationResult> figure) {
    return iterations.stream().skip(1).mapToDouble(figure).average();
  }
}
