package org.transferqueue.controller;

import java.util.List;
import java.util.Objects;
import org.transferqueue.meta.BatchMeta;

/**
 * The answer to {@link ControllerApi#resolveKeysForPut}: the samples of the keys and which of them
 * the call created. A key-value put that fails in storage removes exactly the created samples, so
 * that keys which existed before keep their data.
 *
 * @param meta the metadata of the keys, in request order, as {@link ControllerApi#resolveKeys} with
 *     {@code create} returns it
 * @param createdIndexes the global indexes of the samples the call created, in request order
 */
public record KeyResolution(BatchMeta meta, List<Long> createdIndexes) {
  /** Copies the index list. */
  public KeyResolution {
    Objects.requireNonNull(meta, "meta");
    createdIndexes = List.copyOf(createdIndexes);
  }
}
