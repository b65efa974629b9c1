package org.transferqueue.controller;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The keys of one or all partitions with their tags.
 *
 * @param partitions partition id to (key to tags, in key registration order)
 * @param message {@code "success"}, or why the listing is empty
 */
public record KvListing(Map<String, Map<String, Map<String, Object>>> partitions, String message) {
  /** Copies the map, keeping orders. */
  public KvListing {
    LinkedHashMap<String, Map<String, Map<String, Object>>> copy = new LinkedHashMap<>();
    partitions.forEach(
        (id, keys) -> copy.put(id, Collections.unmodifiableMap(new LinkedHashMap<>(keys))));
    partitions = Collections.unmodifiableMap(copy);
  }
}
