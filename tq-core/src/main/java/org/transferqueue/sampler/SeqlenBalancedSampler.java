package org.transferqueue.sampler;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Token-balanced sharding of whole prompt groups across data-parallel ranks.
 *
 * <p>The first call for a (partition, task, batch index) selects one global batch of {@code
 * batchSize × dpSize} samples in complete groups of {@code n} (as {@link GrpoGroupNSampler} does)
 * and splits the groups across the {@code dpSize} ranks with {@link KarmarkarKarp} in equal-size
 * mode, so that every rank gets the same number of groups and about the same number of tokens. A
 * sample's weight is its {@value #LENGTH_TAG} tag (1 when absent); a group's weight is the sum of
 * its samples'. Without a tag lookup the selection is split into contiguous equal shares.
 *
 * <p>The first call consumes the whole global batch, so no rank can select samples reserved for
 * another rank; every rank's share is cached (also per rank, so {@link #hasCachedResult} lets the
 * controller serve later ranks even when nothing is ready any more). Later calls with the same key
 * return {@code shares[dp_rank]}. {@code batchSize} is per rank.
 *
 * <p>Requirements checked up front: {@code batch_index} whenever {@code dpSize > 1} (without it
 * every call would reuse batch 0), {@code dp_rank} in {@code [0, dpSize)} whenever {@code dpSize >
 * 1}, {@code batchSize × dpSize} a multiple of {@code n}, and the number of groups a multiple of
 * {@code dpSize}. With {@code dpSize = 1} and no batch index nothing is cached. Thread-safe.
 */
public final class SeqlenBalancedSampler extends CachingSampler {
  /** The tag that holds a sample's token count. */
  public static final String LENGTH_TAG = "total_lengths";

  /** Shares of one global batch, keyed without rank. */
  private record ShareKey(String partitionId, String taskName, int batchIndex) {}

  private final int samplesPerPrompt;
  private final int dpSize;
  private final Map<ShareKey, List<List<Long>>> shares = new HashMap<>();

  /**
   * Creates a sampler.
   *
   * @param samplesPerPrompt the group size {@code n}, at least 1
   * @param dpSize the number of data-parallel ranks, at least 1
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when either is below 1
   */
  public SeqlenBalancedSampler(int samplesPerPrompt, int dpSize) {
    this.samplesPerPrompt = GrpoGroupNSampler.checkSamplesPerPrompt(samplesPerPrompt);
    if (dpSize < 1) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "dp_size must be positive, got " + dpSize);
    }
    this.dpSize = dpSize;
  }

  /**
   * {@inheritDoc}
   *
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when a requirement of the class comment
   *     is not met
   */
  @Override
  public synchronized SampleResult sample(SamplingRequest request) {
    Integer batchIndex = request.batchIndex();
    int dpRank = checkContext(request.dpRank(), batchIndex);
    ShareKey key =
        batchIndex == null
            ? null
            : new ShareKey(request.partitionId(), request.taskName(), batchIndex);
    List<List<Long>> cached = key == null ? null : shares.get(key);
    if (cached != null) {
      return dpRank < cached.size()
          ? SampleResult.withoutReplacement(cached.get(dpRank))
          : SampleResult.empty();
    }
    if (dpRank >= dpSize) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "dp_rank " + dpRank + " must be < dp_size " + dpSize);
    }
    int batchSize = request.batchSize();
    if (batchSize == 0) {
      return SampleResult.empty();
    }
    checkGroupCount(batchSize);
    List<List<Long>> groups =
        GrpoGroupNSampler.selectGroups(
            request, batchSize * dpSize, samplesPerPrompt, GrpoGroupNSampler.GROUP_TAG);
    if (groups == null) {
      return SampleResult.empty();
    }
    List<List<Long>> split = split(groups, request.tags());
    if (key != null) {
      shares.put(key, split);
      for (int r = 0; r < dpSize; r++) {
        cache.putIfAbsent(
            new SamplerCache.Key(request.partitionId(), request.taskName(), r, batchIndex),
            SampleResult.withoutReplacement(split.get(r)));
      }
    }
    return new SampleResult(split.get(dpRank), GrpoGroupNSampler.flatten(groups));
  }

  private int checkContext(Integer dpRank, Integer batchIndex) {
    if (dpSize > 1 && (dpRank == null || batchIndex == null)) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "SeqlenBalancedSampler with dp_size "
              + dpSize
              + " needs dp_rank and batch_index in the sampling config, got dp_rank="
              + dpRank
              + ", batch_index="
              + batchIndex);
    }
    int rank = dpRank == null ? 0 : dpRank;
    if (rank < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "dp_rank must be greater than or equal to 0, got " + rank);
    }
    return rank;
  }

  private void checkGroupCount(int batchSize) {
    if (batchSize < 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "batch size " + batchSize + " must be >= 0");
    }
    long global = (long) batchSize * dpSize;
    if (global > Integer.MAX_VALUE) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "global batch " + batchSize + " x dp_size " + dpSize + " is too large");
    }
    if (global % samplesPerPrompt != 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "global batch size "
              + global
              + " (batch size "
              + batchSize
              + " x dp_size "
              + dpSize
              + ") must be a multiple of n_samples_per_prompt="
              + samplesPerPrompt);
    }
    long groups = global / samplesPerPrompt;
    if (groups % dpSize != 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "the global batch holds "
              + groups
              + " prompt groups of "
              + samplesPerPrompt
              + ", which cannot be split evenly over dp_size "
              + dpSize
              + " ranks; the per-rank batch size "
              + batchSize
              + " must be a multiple of n_samples_per_prompt");
    }
  }

  /** Splits whole groups over the ranks: balanced with tags, contiguous without. */
  private List<List<Long>> split(List<List<Long>> groups, TagLookup tags) {
    int perRank = groups.size() / dpSize;
    List<List<Integer>> parts;
    if (tags == null) {
      parts = new ArrayList<>(dpSize);
      for (int r = 0; r < dpSize; r++) {
        List<Integer> part = new ArrayList<>(perRank);
        for (int g = r * perRank; g < (r + 1) * perRank; g++) {
          part.add(g);
        }
        parts.add(part);
      }
    } else {
      long[] weights = new long[groups.size()];
      for (int g = 0; g < groups.size(); g++) {
        for (long index : groups.get(g)) {
          weights[g] += length(index, tags.tags(index).get(LENGTH_TAG));
        }
      }
      parts = KarmarkarKarp.partition(weights, dpSize, true);
    }
    List<List<Long>> result = new ArrayList<>(dpSize);
    for (List<Integer> part : parts) {
      List<Long> share = new ArrayList<>();
      for (int g : part) {
        share.addAll(groups.get(g));
      }
      result.add(List.copyOf(share));
    }
    return List.copyOf(result);
  }

  private static long length(long index, Object tag) {
    return switch (tag) {
      case null -> 1;
      case Number n when n.longValue() >= 0 && n.doubleValue() == n.longValue() -> n.longValue();
      default ->
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "tag '"
                  + LENGTH_TAG
                  + "' of sample "
                  + index
                  + " must be a non-negative integer, got "
                  + tag);
    };
  }

  /**
   * The cached result of one rank, for inspection.
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
   * The number of cached global batches.
   *
   * @return the number of (partition, task, batch index) entries
   */
  public synchronized int sharedBatchCount() {
    return shares.size();
  }

  @Override
  public synchronized void clearCache(String partitionId) {
    super.clearCache(partitionId);
    shares.keySet().removeIf(k -> k.partitionId().equals(partitionId));
  }

  @Override
  synchronized List<Map<String, Object>> saveEntries() {
    List<Map<String, Object>> entries = new ArrayList<>(super.saveEntries());
    shares.forEach(
        (k, v) -> {
          Map<String, Object> e = new LinkedHashMap<>();
          e.put("kind", "shares");
          e.put("partition_id", k.partitionId());
          e.put("task_name", k.taskName());
          e.put("batch_index", k.batchIndex());
          e.put("shares", v);
          entries.add(e);
        });
    return entries;
  }

  @Override
  synchronized void loadEntries(List<Map<String, Object>> entries) {
    Map<ShareKey, List<List<Long>>> loaded = new HashMap<>();
    for (Map<String, Object> e : entries) {
      if ("shares".equals(e.get("kind"))) {
        if (!(e.get("shares") instanceof List<?> list)) {
          throw SamplerCache.corrupt("shares", e);
        }
        List<List<Long>> perRank = new ArrayList<>();
        for (Object share : list) {
          perRank.add(SamplerCache.longs(share, "shares", e));
        }
        ShareKey key =
            new ShareKey(
                SamplerCache.string(e, "partition_id"),
                SamplerCache.string(e, "task_name"),
                SamplerCache.integer(e, "batch_index"));
        loaded.put(key, List.copyOf(perRank));
      }
    }
    super.loadEntries(entries);
    shares.clear();
    shares.putAll(loaded);
  }
}
