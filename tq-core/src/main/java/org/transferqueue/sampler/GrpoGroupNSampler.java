package org.transferqueue.sampler;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Returns only complete prompt groups: the {@code n} responses of one prompt always travel
 * together, as GRPO-style training needs.
 *
 * <p>A group is {@code n} consecutive global indexes (a producer inserts each prompt's responses in
 * one insert, which receives contiguous indexes from a fresh range). Group alignment is checked
 * against the {@value #GROUP_TAG} tag when producers record it: a run of {@code n} consecutive
 * indexes whose group ids differ (or that are tagged only in part) is not a group, so a window
 * never mixes the last responses of one prompt with the first of the next. Without that tag any run
 * of {@code n} consecutive indexes counts, and groups rely on the contiguity of inserts.
 *
 * <p>The batch size must be a multiple of {@code n}; with fewer complete groups ready than needed
 * the result is empty. When the caller passes a data-parallel rank the result is cached per
 * (partition, task, rank, batch index) and served again to the same key. Thread-safe.
 */
public final class GrpoGroupNSampler extends CachingSampler {
  /** The tag that holds a sample's prompt-group id. */
  public static final String GROUP_TAG = "group_id";

  private final int samplesPerPrompt;
  private final String groupTag;

  /**
   * Creates a sampler with one sample per prompt (it then behaves like a sorted sequential one).
   */
  public GrpoGroupNSampler() {
    this(1);
  }

  /**
   * Creates a sampler.
   *
   * @param samplesPerPrompt the group size {@code n}, at least 1
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when {@code samplesPerPrompt < 1}
   */
  public GrpoGroupNSampler(int samplesPerPrompt) {
    this(samplesPerPrompt, GROUP_TAG);
  }

  /**
   * Creates a sampler that reads group ids from another tag.
   *
   * @param samplesPerPrompt the group size {@code n}, at least 1
   * @param groupTag the tag that holds the group id
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when {@code samplesPerPrompt < 1}
   */
  public GrpoGroupNSampler(int samplesPerPrompt, String groupTag) {
    this.samplesPerPrompt = checkSamplesPerPrompt(samplesPerPrompt);
    this.groupTag = Objects.requireNonNull(groupTag, "groupTag");
  }

  static int checkSamplesPerPrompt(int n) {
    if (n < 1) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "n_samples_per_prompt must be positive, got " + n);
    }
    return n;
  }

  /**
   * The group size.
   *
   * @return {@code n}
   */
  public int samplesPerPrompt() {
    return samplesPerPrompt;
  }

  /**
   * {@inheritDoc}
   *
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when the batch size is negative or not a
   *     multiple of {@code n}
   */
  @Override
  public SampleResult sample(SamplingRequest request) {
    SamplerCache.Key key = key(request);
    if (key != null) {
      Optional<SampleResult> cached = cache.get(key);
      if (cached.isPresent()) {
        return cached.get();
      }
    }
    List<List<Long>> groups =
        selectGroups(request, request.batchSize(), samplesPerPrompt, groupTag);
    if (groups == null || groups.isEmpty()) {
      return SampleResult.empty();
    }
    SampleResult result = SampleResult.withoutReplacement(flatten(groups));
    if (key != null) {
      cache.putIfAbsent(key, result);
    }
    return result;
  }

  /**
   * Validates the batch size and selects its groups from the request's ready list.
   *
   * @return the groups in ascending order, or null when there are too few
   */
  static List<List<Long>> selectGroups(
      SamplingRequest request, int batchSize, int n, String groupTag) {
    if (batchSize < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "batch size " + batchSize + " must be >= 0");
    }
    if (batchSize % n != 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "batch size " + batchSize + " must be a multiple of n_samples_per_prompt=" + n);
    }
    List<Long> sorted = new ArrayList<>(request.ready());
    sorted.sort(null);
    return GroupSelection.select(sorted, n, batchSize / n, request.tags(), groupTag);
  }

  static List<Long> flatten(List<List<Long>> groups) {
    List<Long> out = new ArrayList<>();
    groups.forEach(out::addAll);
    return out;
  }

  private static SamplerCache.Key key(SamplingRequest request) {
    Integer dpRank = request.dpRank();
    return dpRank == null
        ? null
        : new SamplerCache.Key(
            request.partitionId(), request.taskName(), dpRank, request.batchIndex());
  }

  /**
   * The cached result of one key, for inspection.
   *
   * @param partitionId the partition
   * @param taskName the task
   * @param dpRank the data-parallel rank
   * @param batchIndex the batch index, or null
   * @return the cached result, if any
   */
  public Optional<SampleResult> cachedResult(
      String partitionId, String taskName, int dpRank, Integer batchIndex) {
    return cached(partitionId, taskName, dpRank, batchIndex);
  }

  /**
   * The number of cached results.
   *
   * @return the cache size
   */
  public int cacheSize() {
    return cache.size();
  }
}
