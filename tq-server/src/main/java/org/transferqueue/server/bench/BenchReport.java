package org.transferqueue.server.bench;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The outcome of a run: the plan, the machine, and one result per size.
 *
 * @param plan what was run
 * @param environment the JVM and machine
 * @param startedAt when the run started
 * @param sizes the results, in run order
 * @param unavailableModes modes asked for (through {@code all}) that this build cannot run, each
 *     with what is missing
 */
public record BenchReport(
    BenchPlan plan,
    BenchEnvironment environment,
    Instant startedAt,
    List<SizeResult> sizes,
    Map<String, String> unavailableModes) {
  /** Copies the collections. */
  public BenchReport {
    sizes = List.copyOf(sizes);
    unavailableModes = Map.copyOf(unavailableModes);
  }
}
