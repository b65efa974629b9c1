package org.transferqueue.server.bench;

import java.util.List;

/**
 * Everything measured on one data size: its baseline and one result per backend and mode.
 *
 * @param size the size
 * @param complex whether the complex case was run
 * @param bytes bytes of one put (and of one get)
 * @param baseline the memory-copy baseline of the same bytes
 * @param cases one result per backend and mode, in run order
 */
public record SizeResult(
    BenchSize size, boolean complex, long bytes, CopyBaseline baseline, List<CaseResult> cases) {
  /** Copies the list. */
  public SizeResult {
    cases = List.copyOf(cases);
  }
}
