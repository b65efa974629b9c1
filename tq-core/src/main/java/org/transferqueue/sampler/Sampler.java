package org.transferqueue.sampler;

import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Decides, for one fetch, which ready samples a task receives and which it consumes.
 *
 * <p>Users plug in their own policy by implementing {@link #sample}; the other members have
 * defaults for stateless samplers. Samplers that cache results (to serve one batch to several
 * workers) override {@link #hasCachedResult} and {@link #clearCache}, and make their cache
 * checkpointable through {@link #saveState} and {@link #loadState}.
 *
 * <p>Thread-safety: the controller calls a sampler from one thread at a time; the built-in samplers
 * are nevertheless safe for concurrent use.
 *
 * <pre>{@code
 * final class RandomWithReplacementSampler implements Sampler {
 *   private final Random random = new Random(42);
 *
 *   public SampleResult sample(SamplingRequest request) {
 *     List<Long> ready = request.ready();
 *     if (ready.size() < request.batchSize()) {
 *       return SampleResult.empty();
 *     }
 *     List<Long> picked = new ArrayList<>();
 *     for (int i = 0; i < request.batchSize(); i++) {
 *       picked.add(ready.get(random.nextInt(ready.size())));
 *     }
 *     return new SampleResult(picked, List.of()); // nothing consumed
 *   }
 * }
 * }</pre>
 */
public interface Sampler {

  /**
   * Samples one batch.
   *
   * @param request the ready indexes, batch size and context
   * @return the sampled and consumed indexes; {@link SampleResult#empty()} when the request cannot
   *     be served now
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when the request does not suit the
   *     sampler (for example a batch size that is not a multiple of the group size)
   */
  SampleResult sample(SamplingRequest request);

  /**
   * Whether a result for this caller is cached, so the controller may call {@link #sample} even
   * when fewer than the batch size of samples are ready.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @param config the caller's rank and batch index
   * @return false by default
   */
  default boolean hasCachedResult(String partitionId, String taskName, SamplingConfig config) {
    return false;
  }

  /**
   * Drops every cached result of a partition; the controller calls it when the partition is
   * cleared.
   *
   * @param partitionId the partition
   */
  default void clearCache(String partitionId) {}

  /**
   * The name under which this sampler is configured and its state is checkpointed.
   *
   * @return the simple class name by default
   */
  default String name() {
    return getClass().getSimpleName();
  }

  /**
   * The sampler's checkpointable state.
   *
   * @return the state; no entries by default
   */
  default SamplerState saveState() {
    return new SamplerState(name(), List.of());
  }

  /**
   * Restores state saved by {@link #saveState()}, replacing the current state.
   *
   * @param state the saved state
   * @throws TqException {@link ErrorCode#INVALID_CONFIGURATION} when the state belongs to another
   *     sampler
   */
  default void loadState(SamplerState state) {
    if (!name().equals(state.samplerName())) {
      throw new TqException(
          ErrorCode.INVALID_CONFIGURATION,
          "sampler state of '" + state.samplerName() + "' cannot be loaded into '" + name() + "'");
    }
  }
}
