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
 * <p>A producer inserts each prompt's {@code n} responses together: one insert of {@code n} rows,
 * or one insert of several prompts' responses, prompt after prompt ({@code k·n} rows). Through the
 * controller a group is therefore <em>{@code n} rows of one insert</em>: the insert's rows cut into
 * chunks of {@code n} from its first row ({@link InsertPosition}). Global indexes play no part: an
 * insert into a partition with freed indexes receives recycled ones, which need not be adjacent
 * (for example {@code [9, 11, 14, 15]}), and those still form the group, while the indexes of two
 * inserts are never mixed, whichever of their samples are ready. Keeping an insert's indexes
 * adjacent would not be enough: two inserts may receive adjacent ranges, and while the first is
 * only partly ready a run of {@code n} adjacent indexes spans both prompts. Grouping by insert also
 * keeps the allocation of indexes (pre-allocated, then freed ones first, then a fresh range) the
 * same for every sampler. Complete groups are served oldest insert first; the last rows of an
 * insert whose size is not a multiple of {@code n} form no group and are never served.
 *
 * <p>Samples no insert created (pre-allocated indexes that a production notification activated,
 * samples restored from a checkpoint that predates insert positions) and requests without insert
 * positions (a sampler called outside a controller) fall back to the upstream rule: a group is a
 * run of {@code n} consecutive global indexes, scanned from the lowest. In both cases, group
 * alignment is also checked against the {@value #GROUP_TAG} tag when producers record it: a group
 * whose group ids differ (or that is tagged only in part) is not a group.
 *
 * <p>The batch size must be a multiple of {@code n}; with fewer complete groups ready than needed
 * the result is empty, and a blocking fetch waits until enough groups are complete. When the caller
 * passes a data-parallel rank the result is cached per (partition, task, rank, batch index) and
 * served again to the same key. Thread-safe.
 */
public final class GrpoGroupNSampler extends CachingSampler {
  /** The tag that holds a sample's prompt-group id. */
  public static final String GROUP_TAG = "group_id";

  private final int samplesPerPrompt;
  private final String groupTag;

  /**
   * Creates a sampler with one sample per prompt: every sample is a group of its own, taken oldest
   * insert first.
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
   * @return the groups in the order of {@link GroupSelection}, or null when there are too few
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
    return GroupSelection.select(
        request.ready(), n, batchSize / n, request.tags(), groupTag, request.inserts());
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
