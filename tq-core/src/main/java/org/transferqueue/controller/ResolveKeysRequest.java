package org.transferqueue.controller;

import java.util.List;

/**
 * The arguments every key operation shares, validated when the record is made, before the
 * controller's lock is taken: a partition id that follows {@link Names} and at least one distinct,
 * non-empty, well-formed key.
 *
 * @param partitionId the partition
 * @param keys the keys, in request order
 */
record ResolveKeysRequest(String partitionId, List<String> keys) {
  /**
   * Validates the arguments.
   *
   * @throws org.transferqueue.TqException {@code INVALID_ARGUMENT} for a bad partition id, an empty
   *     list or a null, empty or not well-formed key; {@code DUPLICATE_KEY} when a key repeats
   */
  ResolveKeysRequest {
    Names.checkPartitionId(partitionId);
    Names.checkKeys(keys);
  }
}
