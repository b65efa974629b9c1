package org.transferqueue.sampler;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The cache mechanism shared by the built-in caching samplers: a {@link SamplerCache} keyed by
 * (partition, task, data-parallel rank, batch index), its lookup for {@link #hasCachedResult}, its
 * clearing per partition and its checkpoint through {@link #saveState} and {@link #loadState}.
 *
 * <p>Subclasses that keep more state override {@link #clearCache}, {@link #saveEntries} and {@link
 * #loadEntries}, calling the versions here for the shared cache. Thread-safe as far as the cache
 * goes; subclasses guard their own state.
 */
abstract sealed class CachingSampler implements Sampler
    permits GrpoGroupNSampler, RankAwareSampler, SeqlenBalancedSampler {
  /** The cached results; thread-safe on its own. */
  final SamplerCache cache = new SamplerCache();

  @Override
  public boolean hasCachedResult(String partitionId, String taskName, SamplingConfig config) {
    return config != null
        && config.dpRank() != null
        && cache.contains(
            new SamplerCache.Key(partitionId, taskName, config.dpRank(), config.batchIndex()));
  }

  @Override
  public void clearCache(String partitionId) {
    cache.clearPartition(partitionId);
  }

  @Override
  public SamplerState saveState() {
    return new SamplerState(name(), saveEntries());
  }

  @Override
  public void loadState(SamplerState state) {
    Sampler.super.loadState(state);
    loadEntries(state.entries());
  }

  /**
   * The checkpoint entries of this sampler, after its name was checked.
   *
   * @return the JSON-compatible entries of the shared cache
   */
  List<Map<String, Object>> saveEntries() {
    return cache.save();
  }

  /**
   * Replaces this sampler's state with saved entries; called after the name was checked.
   *
   * @param entries the saved entries
   */
  void loadEntries(List<Map<String, Object>> entries) {
    cache.load(entries);
  }

  /**
   * The cached result of one key, for the public inspection methods of the subclasses.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @param dpRank the data-parallel rank
   * @param batchIndex the batch index, or null
   * @return the cached result, if any
   */
  final Optional<SampleResult> cached(
      String partitionId, String taskName, int dpRank, Integer batchIndex) {
    return cache.get(new SamplerCache.Key(partitionId, taskName, dpRank, batchIndex));
  }
}
