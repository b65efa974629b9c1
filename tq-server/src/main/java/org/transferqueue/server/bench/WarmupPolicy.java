package org.transferqueue.server.bench;

import java.util.List;
import java.util.Locale;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * How many warm-up iterations a case runs before its measured ones ({@code tq bench --warmup}).
 *
 * <p>A fixed policy ({@code --warmup N}) runs exactly {@code N}. The adaptive one ({@code --warmup
 * auto}, the default, {@link #AUTO}) runs at least {@link #min()} and goes on until, over the last
 * {@link #window()} iterations, the JIT compiler threads of all the case's processes used at most
 * {@link #settledShare()} of those iterations' CPU time, or until {@link #maxIterations()} or
 * {@link #maxSeconds()} is reached: from then on the case runs the compiled code a long-running job
 * runs, which is what the figures are meant to describe. On a machine with few cores the compilers
 * of a case's JVMs otherwise take a large part of the cores for the first tens of seconds
 * (docs/PERFORMANCE.md shows the decay, iteration by iteration).
 *
 * @param min iterations always run, at least 0
 * @param maxIterations iterations at most, at least {@code min}
 * @param maxSeconds warm-up time (wall) after which no further iteration starts once {@code min}
 *     ran, positive; infinite for a fixed policy
 * @param window how many of the last iterations the compiler share is taken over, at least 1
 * @param settledShare the compiler share of the window's CPU at or under which the processes count
 *     as warmed up, in [0, 1]
 */
public record WarmupPolicy(
    int min, int maxIterations, double maxSeconds, int window, double settledShare) {

  /**
   * At least 3 iterations, then until compilation took at most 5 % of the CPU of the last 10, for
   * at most 1000 iterations or 60 seconds.
   */
  public static final WarmupPolicy AUTO = new WarmupPolicy(3, 1000, 60, 10, 0.05);

  /**
   * Validates the components.
   *
   * @throws TqException {@code INVALID_ARGUMENT} for a negative minimum, a maximum under it, a time
   *     limit that is not positive, an empty window, or a share outside [0, 1]
   */
  public WarmupPolicy {
    if (min < 0 || maxIterations < min) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "warm-up iterations min="
              + min
              + ", maxIterations="
              + maxIterations
              + " need 0 <= min <= maxIterations");
    }
    if (!(maxSeconds > 0) || window < 1 || !(settledShare >= 0 && settledShare <= 1)) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "warm-up maxSeconds="
              + maxSeconds
              + ", window="
              + window
              + ", settledShare="
              + settledShare
              + " need maxSeconds > 0, window >= 1 and settledShare in [0, 1]");
    }
  }

  /**
   * Exactly {@code iterations} warm-up iterations.
   *
   * @param iterations at least 0
   * @return the policy
   * @throws TqException {@code INVALID_ARGUMENT} when negative
   */
  public static WarmupPolicy fixed(int iterations) {
    if (iterations < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "warmup=" + iterations + " must be at least 0");
    }
    return new WarmupPolicy(iterations, iterations, Double.POSITIVE_INFINITY, 1, 0);
  }

  /**
   * Parses the option's text: {@code auto} or a number of iterations.
   *
   * @param text the text
   * @return the policy
   * @throws TqException {@code INVALID_ARGUMENT} naming the text when it is neither
   */
  public static WarmupPolicy parse(String text) {
    String trimmed = text.strip();
    if (trimmed.equalsIgnoreCase("auto")) {
      return AUTO;
    }
    try {
      return fixed(Integer.parseInt(trimmed));
    } catch (NumberFormatException e) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "warmup='" + text + "' must be 'auto' or a number of iterations");
    }
  }

  /**
   * Whether the number of iterations depends on what the compilers do.
   *
   * @return {@code maxIterations > min}
   */
  public boolean adaptive() {
    return maxIterations > min;
  }

  /**
   * Whether warming up is over.
   *
   * @param ran the warm-up iterations run so far, in order
   * @param elapsedSeconds wall time since the first of them started
   * @return true when no more warm-up iteration should run
   */
  public boolean done(List<IterationResult> ran, double elapsedSeconds) {
    int n = ran.size();
    if (n >= maxIterations) {
      return true;
    }
    if (n < min) {
      return false;
    }
    return elapsedSeconds >= maxSeconds || settled(ran);
  }

  /**
   * Whether the compilers used at most {@link #settledShare()} of the CPU of the last {@link
   * #window()} iterations; true when the platform does not show them (then the minimum is run).
   *
   * @param ran the iterations run so far, in order
   * @return whether they count as warmed up
   */
  public boolean settled(List<IterationResult> ran) {
    if (ran.size() < window) {
      return false;
    }
    double compiler = 0;
    double cpu = 0;
    for (IterationResult r : ran.subList(ran.size() - window, ran.size())) {
      compiler += r.compilerCpuSeconds();
      cpu += r.cpuSeconds();
    }
    if (Double.isNaN(compiler) || Double.isNaN(cpu)) {
      return true;
    }
    return compiler <= settledShare * cpu;
  }

  /**
   * How the table and the JSON describe the policy.
   *
   * @return for example {@code "3 warm-up"}, or for {@link #AUTO} {@code "3-1000 warm-up (until
   *     compilation <= 5% of the CPU of the last 10, at most 60 s)"}
   */
  public String describe() {
    if (!adaptive()) {
      return min + " warm-up";
    }
    return String.format(
        Locale.ROOT,
        "%d-%d warm-up (until compilation <= %.0f%% of the CPU of the last %d, at most %.0f s)",
        min,
        maxIterations,
        settledShare * 100,
        window,
        maxSeconds);
  }
}
