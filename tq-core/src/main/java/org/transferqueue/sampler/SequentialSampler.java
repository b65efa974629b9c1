package org.transferqueue.sampler;

import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The default sampler: the first {@code batchSize} ready indexes, in the order given, consumed as
 * returned.
 *
 * <p>Fewer ready indexes than requested returns all of them. Stateless and thread-safe. Because
 * global indexes are recycled, the lowest index is not necessarily the oldest sample.
 */
public final class SequentialSampler implements Sampler {

  /** Creates the sampler. */
  public SequentialSampler() {}

  /**
   * {@inheritDoc}
   *
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a negative batch size
   */
  @Override
  public SampleResult sample(SamplingRequest request) {
    int batchSize = request.batchSize();
    if (batchSize < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "batch size " + batchSize + " must be >= 0");
    }
    int n = Math.min(batchSize, request.ready().size());
    return n == 0
        ? SampleResult.empty()
        : SampleResult.withoutReplacement(request.ready().subList(0, n));
  }
}
