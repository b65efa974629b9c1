package org.transferqueue.storage;

import java.util.ArrayList;
import java.util.List;

/**
 * The outcome of a clear: which samples' cells could not be removed, and why.
 *
 * <p>A clear does not throw for a backend failure, so that the cells of other units or keys are
 * still removed; the caller must not release the controller's metadata of the samples listed in
 * {@link #failures()}, or their indexes would be reused while data is still stored. Immutable.
 *
 * @param clearedSamples how many samples held cells and had them removed
 * @param failures the parts of the request that failed; empty when all succeeded
 */
public record ClearResult(long clearedSamples, List<Failure> failures) {

  /** Copies the failure list. */
  public ClearResult {
    failures = List.copyOf(failures);
  }

  /**
   * A clear that removed {@code clearedSamples} samples without failure.
   *
   * @param clearedSamples the number of samples removed
   * @return the result
   */
  public static ClearResult complete(long clearedSamples) {
    return new ClearResult(clearedSamples, List.of());
  }

  /**
   * Whether every part of the clear succeeded.
   *
   * @return true if there are no failures
   */
  public boolean isComplete() {
    return failures.isEmpty();
  }

  /**
   * The samples whose cells may still be stored.
   *
   * @return the global indexes of all failures, in failure order
   */
  public List<Long> failedGlobalIndexes() {
    List<Long> out = new ArrayList<>();
    failures.forEach(f -> out.addAll(f.globalIndexes()));
    return out;
  }

  /**
   * One failed part of a clear.
   *
   * @param target what failed: a storage unit id or a backend name
   * @param globalIndexes the samples sent to that target
   * @param message why it failed
   */
  public record Failure(String target, List<Long> globalIndexes, String message) {
    /** Copies the index list. */
    public Failure {
      globalIndexes = List.copyOf(globalIndexes);
    }
  }
}
