package org.transferqueue.sampler;

import java.util.List;

/**
 * What a sampler decided for one fetch.
 *
 * <p>{@code sampled} goes back to the caller in this order; an empty list means "cannot serve now".
 * {@code consumed} is marked consumed for the task: equal to {@code sampled} when sampling without
 * replacement, empty when sampling with replacement, or different (for example a whole global batch
 * reserved while only one share is returned). Immutable.
 *
 * @param sampled global indexes returned to the caller
 * @param consumed global indexes to mark consumed for the task
 */
public record SampleResult(List<Long> sampled, List<Long> consumed) {
  private static final SampleResult EMPTY = new SampleResult(List.of(), List.of());

  /** Copies both lists; null elements are rejected. */
  public SampleResult {
    sampled = List.copyOf(sampled);
    consumed = List.copyOf(consumed);
  }

  /**
   * The result that serves nothing and consumes nothing.
   *
   * @return the empty result
   */
  public static SampleResult empty() {
    return EMPTY;
  }

  /**
   * A result that consumes exactly what it returns (sampling without replacement).
   *
   * @param sampled the indexes to return and consume
   * @return the result
   */
  public static SampleResult withoutReplacement(List<Long> sampled) {
    List<Long> copy = List.copyOf(sampled);
    return new SampleResult(copy, copy);
  }

  /**
   * Whether nothing is returned.
   *
   * @return true when {@code sampled} is empty
   */
  public boolean isEmpty() {
    return sampled.isEmpty();
  }
}
