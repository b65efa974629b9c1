package org.transferqueue.sampler;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Fills a batch up to a token budget, the sampler of a token-budget fetch ({@code
 * GetMetadataRequest.fetchTokens}, upstream's {@code get_meta(..., token_budget=N)} of its PR
 * #123): the controller serves every fetch that carries a token budget with it, whatever sampler is
 * configured for fetches by count.
 *
 * <p>Each sample's length is the integer of its {@value #LENGTH_TAG} tag (upstream's custom
 * metadata key), set by the producer, e.g. {@code client.setTags(meta.withTagsMerged(lengths))}
 * with one {@code Map.of("total_lengths", n)} per sample. Ready samples are taken in the order
 * given (ascending global index) while their lengths add up to at most the budget; the batch ends
 * before the first sample that would exceed it or once the budget is reached. So:
 *
 * <ul>
 *   <li>a sample longer than the budget by itself is returned alone (never skipped, so that the
 *       stream does not stall on it), as upstream;
 *   <li>a sample without the tag counts as the whole budget (a conservative guess, as upstream: it
 *       comes alone or ends a batch), while a tag that is not a non-negative integer is {@code
 *       INVALID_ARGUMENT} naming the sample;
 *   <li>the request's batch size, when given, caps the number of samples;
 *   <li>when the ready samples hold fewer tokens than the budget, they are returned all ({@value
 *       #ALLOW_UNDERFILL_OPTION} {@code true}, the default, as upstream), or none, so that a
 *       polling fetch is empty and a blocking one waits for more ({@value #ALLOW_UNDERFILL_OPTION}
 *       {@code false} in the sampling options).
 * </ul>
 *
 * <p>The budget reaches the sampler as the {@value #TOKEN_BUDGET_OPTION} sampling option. Samples
 * returned are consumed. Not implemented from upstream's {@code StreamingTokenBudgetSampler}: the
 * token balancing of one batch index across data-parallel ranks ({@code dp_size}) and GRPO group
 * completeness; every caller of a token-budget fetch draws from the same ready samples. Stateless
 * and thread-safe.
 */
public final class TokenBudgetSampler implements Sampler {
  /** The tag whose integer value is a sample's length in tokens. */
  public static final String LENGTH_TAG = "total_lengths";

  /** The sampling option that carries the budget; the controller sets it from the request. */
  public static final String TOKEN_BUDGET_OPTION = "token_budget";

  /** The sampling option that allows a batch under the budget (default true). */
  public static final String ALLOW_UNDERFILL_OPTION = "allow_underfill";

  /** Creates the sampler. */
  public TokenBudgetSampler() {}

  /**
   * {@inheritDoc}
   *
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} without a positive integer {@value
   *     #TOKEN_BUDGET_OPTION}, for a {@value #ALLOW_UNDERFILL_OPTION} that is not a boolean, or for
   *     a sample whose {@value #LENGTH_TAG} is not a non-negative integer
   */
  @Override
  public SampleResult sample(SamplingRequest request) {
    Map<String, Object> options = request.config().options();
    long budget = budget(options.get(TOKEN_BUDGET_OPTION));
    boolean allowUnderfill = allowUnderfill(options.get(ALLOW_UNDERFILL_OPTION));
    List<Long> ready = request.ready();
    int limit = Math.min(request.batchSize(), ready.size());
    List<Long> taken = new ArrayList<>();
    long tokens = 0;
    for (int i = 0; i < limit && tokens < budget; i++) {
      long index = ready.get(i);
      long length = length(request, index, budget);
      if (!taken.isEmpty() && tokens + length > budget) {
        tokens = budget; // the next sample does not fit: the batch is full
        break;
      }
      taken.add(index);
      tokens += length;
    }
    boolean full = tokens >= budget || taken.size() == request.batchSize();
    if (taken.isEmpty() || (!full && !allowUnderfill)) {
      return SampleResult.empty();
    }
    return SampleResult.withoutReplacement(taken);
  }

  private static long budget(Object value) {
    if (value instanceof Number n && isIntegral(n) && n.longValue() >= 1) {
      return n.longValue();
    }
    throw new TqException(
        ErrorCode.INVALID_ARGUMENT,
        "TokenBudgetSampler needs a positive integer "
            + TOKEN_BUDGET_OPTION
            + " in the sampling options, got "
            + value);
  }

  private static boolean allowUnderfill(Object value) {
    return switch (value) {
      case null -> true;
      case Boolean b -> b;
      default ->
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              ALLOW_UNDERFILL_OPTION + " must be a boolean, got " + value);
    };
  }

  /** The length of a sample: its tag, or the whole budget when it has none. */
  private static long length(SamplingRequest request, long index, long budget) {
    Object value = request.tags() == null ? null : request.tags().tags(index).get(LENGTH_TAG);
    if (value == null) {
      return budget;
    }
    if (value instanceof Number n && isIntegral(n) && n.longValue() >= 0) {
      return n.longValue();
    }
    throw new TqException(
        ErrorCode.INVALID_ARGUMENT,
        "sample "
            + index
            + " of partition '"
            + request.partitionId()
            + "': tag "
            + LENGTH_TAG
            + " must be a non-negative integer (its length in tokens), got "
            + value);
  }

  private static boolean isIntegral(Number n) {
    return n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte;
  }
}
