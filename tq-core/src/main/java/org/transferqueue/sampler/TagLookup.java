package org.transferqueue.sampler;

import java.util.Map;

/**
 * Read-only access to the tags (custom metadata) of the samples of the partition being sampled.
 *
 * <p>The controller passes an implementation backed by its own state; it is valid only for the
 * duration of one {@link Sampler#sample} call and must not be retained.
 */
@FunctionalInterface
public interface TagLookup {
  /**
   * The tags of one sample.
   *
   * @param globalIndex a global index of the partition
   * @return the sample's tags, empty when it has none; never null
   */
  Map<String, Object> tags(long globalIndex);
}
