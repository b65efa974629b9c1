package org.transferqueue.server.bench;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything measured on one data size: the baseline of each mode and one result per backend and
 * mode.
 *
 * @param size the size
 * @param complex whether the complex case was run
 * @param bytes bytes of one put (and of one get)
 * @param baselines the first baseline of each mode that ran, in run order (each case also carries
 *     the one measured right before it, {@link CaseResult#baseline()})
 * @param cases one result per backend and mode, in run order
 */
public record SizeResult(
    BenchSize size,
    boolean complex,
    long bytes,
    Map<BenchMode, Baseline> baselines,
    List<CaseResult> cases) {
  /** Copies the collections, keeping the baselines' order. */
  public SizeResult {
    baselines = Collections.unmodifiableMap(new LinkedHashMap<>(baselines));
    cases = List.copyOf(cases);
  }
}
