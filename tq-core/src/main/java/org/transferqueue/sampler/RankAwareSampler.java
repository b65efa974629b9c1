package org.transferqueue.sampler;

import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Serves identical batches to every worker of one data-parallel group.
 *
 * <p>The first worker to ask for a (partition, task, data-parallel rank, batch index) samples the
 * first {@code batchSize} ready indexes and consumes them; every later worker with the same key
 * gets the cached batch, in any order, so workers may run ahead of their peers (prefetch). Which
 * samples a group receives depends on arrival order, not on rank numbering. With fewer than {@code
 * batchSize} samples ready and no cache entry the result is empty and nothing is cached.
 *
 * <p>The caller must pass {@code dp_rank} (at least 0) and {@code batch_index}; partition and task
 * come from the controller. Cache entries live until the controller clears the partition ({@link
 * #clearCache}). Thread-safe.
 */
public final class RankAwareSampler extends CachingSampler {

  /** Creates a sampler with an empty cache. */
  public RankAwareSampler() {}

  /**
   * {@inheritDoc}
   *
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when {@code dp_rank} or {@code
   *     batch_index} is missing, {@code dp_rank} is negative, or the batch size is negative
   */
  @Override
  public SampleResult sample(SamplingRequest request) {
    Integer dpRank = request.dpRank();
    Integer batchIndex = request.batchIndex();
    if (dpRank == null || batchIndex == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "RankAwareSampler needs dp_rank and batch_index in the sampling config, got dp_rank="
              + dpRank
              + ", batch_index="
              + batchIndex);
    }
    if (dpRank < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "dp_rank must be greater than or equal to 0, got " + dpRank);
    }
    int batchSize = request.batchSize();
    if (batchSize < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "batch size " + batchSize + " must be >= 0");
    }
    SamplerCache.Key key =
        new SamplerCache.Key(request.partitionId(), request.taskName(), dpRank, batchIndex);
    Optional<SampleResult> cached = cache.get(key);
    if (cached.isPresent()) {
      return cached.get();
    }
    if (batchSize == 0 || request.ready().size() < batchSize) {
      return SampleResult.empty();
    }
    SampleResult result = SampleResult.withoutReplacement(request.ready().subList(0, batchSize));
    cache.putIfAbsent(key, result);
    return cache.get(key).orElseThrow();
  }

  /**
   * The cached batch of one key, for inspection.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @param dpRank the data-parallel rank
   * @param batchIndex the batch index
   * @return the cached result, if any
   */
  public Optional<SampleResult> cachedResult(
      String partitionId, String taskName, int dpRank, int batchIndex) {
    return cached(partitionId, taskName, dpRank, batchIndex);
  }

  /**
   * The number of cached batches.
   *
   * @return the cache size
   */
  public int cacheSize() {
    return cache.size();
  }
}
