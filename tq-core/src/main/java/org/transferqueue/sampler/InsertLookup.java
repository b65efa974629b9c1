package org.transferqueue.sampler;

/**
 * Read-only access to the {@link InsertPosition} of the samples of the partition being sampled.
 *
 * <p>The controller passes an implementation backed by its own state; it is valid only for the
 * duration of one {@link Sampler#sample} call and must not be retained.
 */
@FunctionalInterface
public interface InsertLookup {
  /**
   * The insert a sample came from.
   *
   * @param globalIndex a global index of the partition
   * @return the sample's position, or null for a sample no insert created (one a production
   *     notification activated from the partition's pre-allocated indexes, or one restored from a
   *     checkpoint that predates insert positions)
   */
  InsertPosition position(long globalIndex);
}
