package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.transferqueue.Distinct;

/**
 * Mooncake's per-key argument checks, written once for every engine: each check marks the keys it
 * refuses with {@code -600} ({@link StoreStatus#INVALID_PARAMS}) in a result array and leaves the
 * others as they are. {@link AbstractObjectStore} runs them before every call reaches an engine;
 * engine entry points outside the {@link ObjectStore} interface (a store node's direct writes and
 * reads) run the same ones.
 *
 * <p>The rules: a key must not be empty; a value must not be empty; a zero-copy source or
 * destination must lie wholly inside registered memory; a copy-path value must fit the local
 * buffer; a key may appear once per write batch (its first occurrence is written, every repeat is
 * refused). A null key or segment is a programming error and throws {@link NullPointerException}.
 *
 * <p>Stateless and thread-safe.
 */
public final class ObjectStoreArgs {
  private static final int INVALID = StoreStatus.INVALID_PARAMS.code();

  private ObjectStoreArgs() {}

  /** Marks refused writes: empty key or value, source not allowed, repeated key. */
  static void checkWrites(
      List<String> keys,
      List<MemorySegment> sources,
      boolean zeroCopy,
      RegisteredBufferSet registered,
      long localBufferSize,
      int[] codes) {
    for (int i = 0; i < codes.length; i++) {
      String key = Objects.requireNonNull(keys.get(i), "keys[i]");
      MemorySegment source = Objects.requireNonNull(sources.get(i), "sources[i]");
      if (!validSource(key, source, zeroCopy, registered, localBufferSize)) {
        codes[i] = INVALID;
      }
    }
    refuseRepeated(keys, codes);
  }

  /**
   * Whether one write may go ahead: a non-empty key and value, a zero-copy source inside registered
   * memory, a copy-path value no larger than the local buffer.
   */
  static boolean validSource(
      String key,
      MemorySegment source,
      boolean zeroCopy,
      RegisteredBufferSet registered,
      long localBufferSize) {
    if (key.isEmpty() || source.byteSize() == 0) {
      return false;
    }
    return zeroCopy ? registered.contains(source) : source.byteSize() <= localBufferSize;
  }

  /** Marks refused zero-copy reads: empty key, destination outside registered memory. */
  static void checkReads(
      List<String> keys,
      List<MemorySegment> destinations,
      RegisteredBufferSet registered,
      long[] results) {
    for (int i = 0; i < results.length; i++) {
      String key = Objects.requireNonNull(keys.get(i), "keys[i]");
      MemorySegment destination = Objects.requireNonNull(destinations.get(i), "destinations[i]");
      if (key.isEmpty() || !registered.contains(destination)) {
        results[i] = INVALID;
      }
    }
  }

  /**
   * Marks the writes of a batch whose bytes the engine receives itself (a store node's request
   * bodies): an empty key, a size below 1, a repeated key.
   *
   * @param keys the keys
   * @param sizes each key's value size in bytes
   * @param codes one per key; refused keys get {@code -600}
   */
  public static void checkSizes(List<String> keys, long[] sizes, int[] codes) {
    for (int i = 0; i < codes.length; i++) {
      if (Objects.requireNonNull(keys.get(i), "keys[i]").isEmpty() || sizes[i] <= 0) {
        codes[i] = INVALID;
      }
    }
    refuseRepeated(keys, codes);
  }

  /**
   * Marks empty keys.
   *
   * @param keys the keys
   * @param codes one per key; empty keys get {@code -600}
   */
  public static void checkKeys(List<String> keys, long[] codes) {
    for (int i = 0; i < codes.length; i++) {
      if (Objects.requireNonNull(keys.get(i), "keys[i]").isEmpty()) {
        codes[i] = INVALID;
      }
    }
  }

  /** Marks empty keys, for calls with {@code int} results. */
  static void checkKeys(List<String> keys, int[] codes) {
    for (int i = 0; i < codes.length; i++) {
      if (Objects.requireNonNull(keys.get(i), "keys[i]").isEmpty()) {
        codes[i] = INVALID;
      }
    }
  }

  /**
   * Marks every repeat of a key after its first occurrence. The common case, no repeat, is checked
   * on one sorted copy (no hash entry per key).
   */
  private static void refuseRepeated(List<String> keys, int[] codes) {
    if (Distinct.firstRepeated(keys.toArray()) == null) {
      return;
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < codes.length; i++) {
      if (!seen.add(keys.get(i))) {
        codes[i] = INVALID;
      }
    }
  }
}
