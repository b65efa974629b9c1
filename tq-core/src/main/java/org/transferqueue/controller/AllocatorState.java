package org.transferqueue.controller;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The checkpointable state of the global index allocator.
 *
 * @param owners partition id to the indexes it owns (active and pre-allocated), in creation order
 * @param pool released indexes waiting for reuse, in the order they will be handed out
 * @param counter the next never-used index
 * @param generations the generation of every index that has one above 0 (index to generation);
 *     indexes not listed are at generation 0
 */
public record AllocatorState(
    Map<String, IndexSet> owners, List<Long> pool, long counter, Map<Long, Long> generations) {
  /** Validates and copies the arguments. */
  public AllocatorState {
    owners = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(owners)));
    pool = List.copyOf(pool);
    if (counter < 0) {
      throw new IllegalArgumentException("counter=" + counter + " < 0");
    }
    generations = Collections.unmodifiableMap(new LinkedHashMap<>(generations));
    generations.forEach(
        (index, generation) -> {
          if (index < 0 || index >= counter || generation < 0) {
            throw new IllegalArgumentException(
                "generation " + generation + " of index " + index + " (counter=" + counter + ")");
          }
        });
  }
}
