package org.transferqueue.sampler;

import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One sampling call: the samples ready for the task, the requested batch size and the context.
 *
 * <p>The controller fills {@code partitionId} and {@code taskName} from the fetch it is serving,
 * never from client-supplied configuration. {@code ready}, {@code tags} and {@code inserts} are
 * read-only views of controller state, valid only during the call: the controller maintains its
 * ready sets incrementally and does not copy them, so that a fetch costs time proportional to the
 * batch, not to the partition. A sampler that keeps indexes beyond the call copies the ones it
 * keeps.
 *
 * @param ready ready global indexes, ascending when built by the controller; a read-only view
 * @param batchSize the requested batch size (per data-parallel rank for {@link
 *     SeqlenBalancedSampler})
 * @param partitionId the partition being sampled
 * @param taskName the consuming task
 * @param config the client's rank, batch index and options
 * @param tags the partition's per-sample tags, or null when the caller has no partition state
 * @param inserts the insert each sample came from, or null when the caller has no partition state
 */
public record SamplingRequest(
    List<Long> ready,
    int batchSize,
    String partitionId,
    String taskName,
    SamplingConfig config,
    TagLookup tags,
    InsertLookup inserts) {

  /**
   * Wraps {@code ready} read-only without copying; a null config becomes {@link
   * SamplingConfig#NONE}.
   */
  public SamplingRequest {
    ready = Collections.unmodifiableList(Objects.requireNonNull(ready, "ready"));
    Objects.requireNonNull(partitionId, "partitionId");
    Objects.requireNonNull(taskName, "taskName");
    config = config == null ? SamplingConfig.NONE : config;
  }

  /**
   * A request without insert positions (for samplers used outside a controller, and tests).
   *
   * @param ready ready global indexes; a read-only view
   * @param batchSize the requested batch size
   * @param partitionId the partition being sampled
   * @param taskName the consuming task
   * @param config the client's rank, batch index and options
   * @param tags the partition's per-sample tags, or null
   */
  public SamplingRequest(
      List<Long> ready,
      int batchSize,
      String partitionId,
      String taskName,
      SamplingConfig config,
      TagLookup tags) {
    this(ready, batchSize, partitionId, taskName, config, tags, null);
  }

  /**
   * A request without context (empty partition and task names, no rank, no tags).
   *
   * @param ready ready global indexes
   * @param batchSize the requested batch size
   * @return the request
   */
  public static SamplingRequest of(List<Long> ready, int batchSize) {
    return new SamplingRequest(ready, batchSize, "", "", SamplingConfig.NONE, null, null);
  }

  /**
   * The caller's data-parallel rank.
   *
   * @return the rank, or null when not given
   */
  public Integer dpRank() {
    return config.dpRank();
  }

  /**
   * The caller's batch index.
   *
   * @return the batch index, or null when not given
   */
  public Integer batchIndex() {
    return config.batchIndex();
  }
}
