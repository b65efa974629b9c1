package org.transferqueue.controller;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.SampleResult;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.sampler.SamplingRequest;
import org.transferqueue.sampler.TokenBudgetSampler;

/**
 * One attempt to serve a fetch: builds the {@link SamplingRequest} over the ready set of (task,
 * fields), calls the sampler, checks that every sampled and consumed index is an active sample,
 * drops samples whose clear began, marks the consumed ones consumed and assembles the {@link
 * BatchMeta}. An attempt that cannot be served changes nothing; {@link Controller} decides whether
 * to answer empty, wait or fail.
 *
 * <p>Not thread-safe: owned by {@link Controller}, which calls it only under its lock; the sampler
 * therefore runs inside the controller's critical section.
 */
final class SamplingStep {
  /** Serves every fetch that carries a token budget. */
  private static final Sampler TOKEN_BUDGET_SAMPLER = new TokenBudgetSampler();

  private final ControllerTables tables;

  SamplingStep(ControllerTables tables) {
    this.tables = tables;
  }

  /**
   * The result of one attempt: a batch, or none and the number of ready samples.
   *
   * @param meta the batch, or null when the fetch cannot be served now
   * @param available the number of ready samples
   * @param declined whether enough samples were ready but the sampler returned nothing
   * @param consumed the samples the batch marked consumed (empty without a batch)
   */
  record Outcome(BatchMeta meta, int available, boolean declined, List<Long> consumed) {
    static Outcome none(int available, boolean declined) {
      return new Outcome(null, available, declined, List.of());
    }
  }

  /**
   * What the sampler chose for a fetch, before anything is marked consumed.
   *
   * @param partition the partition, or null when it does not exist
   * @param sampled the samples to return (without those whose clear began), or null when the fetch
   *     cannot be served now
   * @param consumed the samples to mark consumed, or null with {@code sampled}
   * @param available the number of ready samples
   * @param declined whether enough samples were ready but the sampler returned nothing
   */
  record Choice(
      Partition partition,
      List<Long> sampled,
      List<Long> consumed,
      int available,
      boolean declined) {
    boolean served() {
      return sampled != null;
    }
  }

  /** The sampler of a fetch: the configured one, or the token-budget sampler for a budget. */
  static Sampler samplerFor(GetMetadataRequest request, Sampler configured) {
    return request.tokenBudget() == null ? configured : TOKEN_BUDGET_SAMPLER;
  }

  /**
   * Tries to serve a fetch now.
   *
   * @param request a fetch request
   * @param sortedFields its fields, sorted (the ready set's key)
   * @param configured the controller's sampler
   * @return the batch, or why there is none
   * @throws TqException {@code ILLEGAL_STATE} when the sampler names an index that is not an active
   *     sample of the partition; nothing is consumed then
   */
  Outcome attempt(GetMetadataRequest request, List<String> sortedFields, Sampler configured) {
    Choice choice = choose(request, sortedFields, configured);
    if (!choice.served()) {
      return Outcome.none(choice.available(), choice.declined());
    }
    Partition partition = choice.partition();
    partition.markConsumed(request.taskName(), choice.consumed());
    long[] indexes = choice.sampled().stream().mapToLong(Long::longValue).toArray();
    BatchMeta.Builder builder = tables.rows(partition, indexes, request.fields()).allProduced();
    ControllerTables.addSchemas(builder, partition, request.fields(), indexes);
    return new Outcome(builder.build(), choice.available(), false, choice.consumed());
  }

  /**
   * Asks the sampler which samples a fetch gets and consumes, changing nothing but the task's
   * registration, the ready set's cache and the sampler's own state; {@link #attempt} then marks
   * them consumed, and journal replay compares them with what the journal recorded.
   *
   * @param request a fetch request
   * @param sortedFields its fields, sorted (the ready set's key)
   * @param configured the controller's sampler
   * @return the choice; not served when the fetch cannot be served now
   * @throws TqException {@code ILLEGAL_STATE} when the sampler names an index that is not an active
   *     sample of the partition
   */
  Choice choose(GetMetadataRequest request, List<String> sortedFields, Sampler configured) {
    Partition partition = tables.partition(request.partitionId());
    if (partition == null) {
      return new Choice(null, null, null, 0, false);
    }
    ReadySet ready = partition.readySet(request.taskName(), sortedFields);
    Sampler sampler = samplerFor(request, configured);
    SamplingConfig samplingConfig = samplingConfig(request);
    boolean cached =
        sampler.hasCachedResult(request.partitionId(), request.taskName(), samplingConfig);
    if (!cached && ready.size() < minimumReady(request)) {
      return new Choice(partition, null, null, ready.size(), false);
    }
    SampleResult result =
        sampler.sample(samplingRequest(request, partition, ready, samplingConfig));
    if (result.isEmpty()) {
      // "Cannot serve now", as when too few samples are ready: polling answers an empty batch, a
      // blocking fetch waits for a change that may let the sampler serve (a group completing).
      return new Choice(partition, null, null, ready.size(), true);
    }
    checkMembers(partition, sampler, result.sampled(), "sampled");
    checkMembers(partition, sampler, result.consumed(), "consumed");
    List<Long> sampled = result.sampled();
    List<Long> consumed = result.consumed();
    if (partition.hasClearing()) {
      // A sampler's cached answer may name samples whose clear began since: never hand them out.
      sampled = withoutClearing(partition, sampled);
      consumed = withoutClearing(partition, consumed);
      if (sampled.isEmpty()) {
        return new Choice(partition, null, null, ready.size(), true);
      }
    }
    return new Choice(partition, List.copyOf(sampled), List.copyOf(consumed), ready.size(), false);
  }

  /** The request's sampling configuration, with its token budget as a sampler option. */
  private static SamplingConfig samplingConfig(GetMetadataRequest request) {
    SamplingConfig samplingConfig = request.samplingConfig();
    if (request.tokenBudget() == null) {
      return samplingConfig;
    }
    Map<String, Object> options = new LinkedHashMap<>(samplingConfig.options());
    options.put(TokenBudgetSampler.TOKEN_BUDGET_OPTION, request.tokenBudget());
    return new SamplingConfig(samplingConfig.dpRank(), samplingConfig.batchIndex(), options);
  }

  private static SamplingRequest samplingRequest(
      GetMetadataRequest request,
      Partition partition,
      ReadySet ready,
      SamplingConfig samplingConfig) {
    return new SamplingRequest(
        ready.view(),
        request.batchSize() == null ? GetMetadataRequest.MAX_BATCH_SIZE : request.batchSize(),
        request.partitionId(),
        request.taskName(),
        samplingConfig,
        index -> {
          Map<String, Object> tags = partition.tags(IndexAllocator.checkIndex(index));
          return tags == null ? Map.of() : tags;
        },
        index -> partition.insertPosition(IndexAllocator.checkIndex(index)));
  }

  /**
   * The ready samples a fetch needs before its sampler is asked: its batch size, or one for a
   * token-budget fetch (whose sampler decides how many make a batch).
   */
  private static int minimumReady(GetMetadataRequest request) {
    return request.tokenBudget() != null ? 1 : request.batchSize();
  }

  private static List<Long> withoutClearing(Partition partition, List<Long> indexes) {
    List<Long> kept = new ArrayList<>(indexes.size());
    for (Long index : indexes) {
      if (!partition.isClearing((int) (long) index)) {
        kept.add(index);
      }
    }
    return kept;
  }

  private static void checkMembers(
      Partition partition, Sampler sampler, List<Long> indexes, String what) {
    for (long index : indexes) {
      if (index < 0 || index > IndexAllocator.MAX_INDEX || !partition.isActive((int) index)) {
        throw new TqException(
            ErrorCode.ILLEGAL_STATE,
            "sampler "
                + sampler.name()
                + " "
                + what
                + " index="
                + index
                + " which is not an active sample of partition="
                + partition.id);
      }
    }
  }
}
