package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.transferqueue.memory.NativeBuffer;

/**
 * A key-to-blob store with Mooncake Store's client API and semantics.
 *
 * <p>Result conventions (Mooncake's): {@code int} results are {@code 0} or a negative {@link
 * StoreStatus#code()}; {@code long} results are a size or count ({@code >= 0}) or a negative code;
 * batch calls return one entry per key in input order, and lists of different lengths give {@code
 * -600} for every entry. A read that succeeds returns the whole object's size, never a partial
 * count. Expected outcomes never throw; a {@code null} argument is a programming error and throws
 * {@link NullPointerException}.
 *
 * <p>A {@link MemorySegment} replaces Mooncake's {@code (pointer, size)} pair. The segments of the
 * zero-copy calls ({@code putFrom}, {@code batchPutFrom}, {@code upsertFrom}, {@code
 * batchUpsertFrom}, {@code getInto}, {@code batchGetInto}) must lie wholly inside a region passed
 * to {@link #registerBuffer}, else the call returns {@code -600} ({@link
 * StoreStatus#INVALID_PARAMS}). The copy-path calls accept any segment, heap or native, and
 * copy-path reads return {@link NativeBuffer}s the caller owns.
 *
 * <p>Visibility: an object becomes readable only when its whole write has completed; until then
 * reads return {@code -703} and {@link #isExist} returns 0. A put on a present key (or one being
 * written) returns {@code -705} and changes nothing. An upsert creates or replaces.
 *
 * <p>Reads ({@code getInto}, {@code get}, {@code isExist}, {@code getSize} and their batch forms)
 * grant a read lease on a positive answer; a leased object is neither evicted nor removed by a
 * non-forced remove. A read that completes after its lease expired returns {@code -707}.
 *
 * <p>Thread-safe. Every call blocks; each has an {@code ...Async} twin that runs the same call on
 * an executor owned by the store and completes with the same value. A call on a store that is not
 * set up, or already closed, returns {@code -600} (its future completes with {@code -600}).
 *
 * <pre>{@code
 * try (ObjectStore store = ...; NativeBuffer src = allocator.allocate(1 << 20)) {
 *   store.setup(StoreConfig.builder().globalSegmentSize(64L << 20).build());
 *   store.registerBuffer(src.segment());                        // once, then reuse
 *   int rc = store.putFrom("p0/f/0", src.segment(), ReplicateConfig.DEFAULT);
 *   long size = store.getInto("p0/f/0", src.segment());        // object size or negative
 *   store.unregisterBuffer(src.segment());
 * }
 * }</pre>
 */
public interface ObjectStore extends AutoCloseable {

  /**
   * Sets the store up: allocates the contributed segment and the local buffer.
   *
   * @param config what to contribute
   * @return 0, or {@code -600} when already set up, closed, or the memory cannot be allocated
   */
  int setup(StoreConfig config);

  /**
   * Closes the store: waits for calls in flight, drops every object this client holds and frees its
   * memory. Idempotent. Buffers returned by copy-path reads must be closed before.
   *
   * @return 0
   */
  int closeStore();

  /** Closes the store, as {@link #closeStore()}. */
  @Override
  default void close() {
    closeStore();
  }

  /**
   * The segment name of this client.
   *
   * @return the configured host name, or the empty string before setup
   */
  String hostname();

  /**
   * Registers a native region as a source or destination of zero-copy calls. Register once and
   * reuse: registering per call costs a registration each time.
   *
   * @param buffer a native segment that stays valid until it is unregistered
   * @return 0, or {@code -600} for a heap or empty segment or one that overlaps another region
   */
  int registerBuffer(MemorySegment buffer);

  /**
   * Unregisters the region that starts at {@code buffer.address()}.
   *
   * @param buffer a segment whose address is the base of a registered region
   * @return 0, or {@code -600} if no region starts there
   */
  int unregisterBuffer(MemorySegment buffer);

  /**
   * Writes a new object from registered memory. A zero-length source returns 0 and creates nothing.
   *
   * @param key a non-empty key
   * @param source registered memory holding the object's bytes
   * @param config replicas and pins
   * @return 0; {@code -705} if the key is present or being written; {@code -600} bad arguments;
   *     {@code -200} no space
   */
  int putFrom(String key, MemorySegment source, ReplicateConfig config);

  /**
   * Writes new objects from registered memory, one result per key. A zero-length source gives
   * {@code -600}; a key repeated in one batch gives {@code -600} for its later occurrences.
   *
   * @param keys the keys
   * @param sources one registered source per key
   * @param config applies to every key
   * @return per-key codes as {@link #putFrom}
   */
  int[] batchPutFrom(List<String> keys, List<MemorySegment> sources, ReplicateConfig config);

  /**
   * Creates or replaces an object from registered memory. A zero-length source returns 0 and
   * changes nothing.
   *
   * @param key a non-empty key
   * @param source registered memory holding the object's bytes
   * @param config replicas and pins; a hard pin is never cleared by an upsert
   * @return 0; {@code -600} bad arguments; {@code -200} no space; {@code -601} when a later upsert
   *     of the same key preempted this one (the later value wins)
   */
  int upsertFrom(String key, MemorySegment source, ReplicateConfig config);

  /**
   * Creates or replaces objects from registered memory, one result per key.
   *
   * @param keys the keys
   * @param sources one registered source per key
   * @param config applies to every key
   * @return per-key codes as {@link #upsertFrom}; zero-length sources and repeated keys give {@code
   *     -600}
   */
  int[] batchUpsertFrom(List<String> keys, List<MemorySegment> sources, ReplicateConfig config);

  /**
   * Writes a new object from any memory (copy path).
   *
   * @param key a non-empty key
   * @param value the bytes, heap or native; not longer than the local buffer
   * @param config replicas and pins
   * @return as {@link #putFrom}, but an empty or too long value gives {@code -600}
   */
  int put(String key, MemorySegment value, ReplicateConfig config);

  /**
   * Creates or replaces an object from any memory (copy path).
   *
   * @param key a non-empty key
   * @param value the bytes, heap or native; not longer than the local buffer
   * @param config replicas and pins
   * @return as {@link #upsertFrom}, but an empty or too long value gives {@code -600}
   */
  int upsert(String key, MemorySegment value, ReplicateConfig config);

  /**
   * Writes new objects from any memory (copy path). Keys succeed or fail independently.
   *
   * @param keys the keys
   * @param values one value per key
   * @param config applies to every key
   * @return 0 if every key succeeded, else the first failing key's code (Mooncake's single result)
   */
  int putBatch(List<String> keys, List<MemorySegment> values, ReplicateConfig config);

  /**
   * Creates or replaces objects from any memory (copy path). Keys succeed or fail independently.
   *
   * @param keys the keys
   * @param values one value per key
   * @param config applies to every key
   * @return 0 if every key succeeded, else the first failing key's code
   */
  int upsertBatch(List<String> keys, List<MemorySegment> values, ReplicateConfig config);

  /**
   * Reads an object into registered memory. Bytes of {@code destination} past the object's size are
   * untouched; on failure its content is unspecified.
   *
   * @param key the key
   * @param destination registered memory at least as long as the object
   * @return the object's size; {@code -704} absent; {@code -703} being written; {@code -600} bad
   *     arguments or a destination that is too small; {@code -707} lease expired during the read
   */
  long getInto(String key, MemorySegment destination);

  /**
   * Reads objects into registered memory, one result per key; a failing key does not affect the
   * others.
   *
   * @param keys the keys
   * @param destinations one registered destination per key
   * @return per-key results as {@link #getInto}
   */
  long[] batchGetInto(List<String> keys, List<MemorySegment> destinations);

  /**
   * Reads an object into a new buffer (copy path).
   *
   * @param key the key
   * @return a buffer of exactly the object's size that the caller owns and must close, or {@code
   *     null} on any failure (absent, not ready, local buffer exhausted, closed)
   */
  NativeBuffer get(String key);

  /**
   * Reads objects into new buffers (copy path).
   *
   * @param keys the keys
   * @return one entry per key: a buffer the caller owns and must close, or {@code null} on failure
   */
  List<NativeBuffer> getBatch(List<String> keys);

  /**
   * Tells whether a key is readable. A positive answer grants a read lease.
   *
   * @param key the key
   * @return 1 readable; 0 absent or still being written; negative on error
   */
  int isExist(String key);

  /**
   * Tells, per key, whether it is readable.
   *
   * @param keys the keys
   * @return per-key results as {@link #isExist}
   */
  int[] batchIsExist(List<String> keys);

  /**
   * The size of an object. Grants a read lease.
   *
   * @param key the key
   * @return the size; {@code -704} absent; {@code -703} being written
   */
  long getSize(String key);

  /**
   * Removes an object. Checks in order: absent {@code -704}; leased and not forced {@code -706};
   * being written {@code -703} (even when forced). A removed object's memory is reused only after
   * reads in flight have finished.
   *
   * @param key the key
   * @param force ignore read leases
   * @return 0 or a negative code
   */
  int remove(String key, boolean force);

  /**
   * Removes objects, one result per key, as {@link #remove}.
   *
   * @param keys the keys
   * @param force ignore read leases
   * @return per-key codes
   */
  int[] batchRemove(List<String> keys, boolean force);

  /**
   * Removes every object whose key contains a match of {@code regex} ({@link
   * java.util.regex.Matcher#find()} semantics; anchor with {@code ^...$}). Leased (unless forced)
   * and incomplete objects are skipped silently.
   *
   * @param regex a {@link java.util.regex.Pattern}
   * @param force ignore read leases
   * @return the number removed, or {@code -600} for an invalid regex
   */
  long removeByRegex(String regex, boolean force);

  /**
   * Removes every object, skipping leased (unless forced) and incomplete ones.
   *
   * @param force ignore read leases
   * @return the number removed
   */
  long removeAll(boolean force);

  /**
   * Async twin of {@link #registerBuffer}.
   *
   * @param buffer as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Integer> registerBufferAsync(MemorySegment buffer);

  /**
   * Async twin of {@link #unregisterBuffer}.
   *
   * @param buffer as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Integer> unregisterBufferAsync(MemorySegment buffer);

  /**
   * Async twin of {@link #putFrom}.
   *
   * @param key as for the blocking call
   * @param source as for the blocking call
   * @param config as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Integer> putFromAsync(String key, MemorySegment source, ReplicateConfig config);

  /**
   * Async twin of {@link #batchPutFrom}.
   *
   * @param keys as for the blocking call
   * @param sources as for the blocking call
   * @param config as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<int[]> batchPutFromAsync(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config);

  /**
   * Async twin of {@link #upsertFrom}.
   *
   * @param key as for the blocking call
   * @param source as for the blocking call
   * @param config as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Integer> upsertFromAsync(
      String key, MemorySegment source, ReplicateConfig config);

  /**
   * Async twin of {@link #batchUpsertFrom}.
   *
   * @param keys as for the blocking call
   * @param sources as for the blocking call
   * @param config as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<int[]> batchUpsertFromAsync(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config);

  /**
   * Async twin of {@link #put}.
   *
   * @param key as for the blocking call
   * @param value as for the blocking call
   * @param config as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Integer> putAsync(String key, MemorySegment value, ReplicateConfig config);

  /**
   * Async twin of {@link #upsert}.
   *
   * @param key as for the blocking call
   * @param value as for the blocking call
   * @param config as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Integer> upsertAsync(String key, MemorySegment value, ReplicateConfig config);

  /**
   * Async twin of {@link #putBatch}.
   *
   * @param keys as for the blocking call
   * @param values as for the blocking call
   * @param config as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Integer> putBatchAsync(
      List<String> keys, List<MemorySegment> values, ReplicateConfig config);

  /**
   * Async twin of {@link #upsertBatch}.
   *
   * @param keys as for the blocking call
   * @param values as for the blocking call
   * @param config as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Integer> upsertBatchAsync(
      List<String> keys, List<MemorySegment> values, ReplicateConfig config);

  /**
   * Async twin of {@link #getInto}.
   *
   * @param key as for the blocking call
   * @param destination as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Long> getIntoAsync(String key, MemorySegment destination);

  /**
   * Async twin of {@link #batchGetInto}.
   *
   * @param keys as for the blocking call
   * @param destinations as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<long[]> batchGetIntoAsync(List<String> keys, List<MemorySegment> destinations);

  /**
   * Async twin of {@link #get}.
   *
   * @param key as for the blocking call
   * @return a future of the blocking call's result (the caller owns a non-null buffer)
   */
  CompletableFuture<NativeBuffer> getAsync(String key);

  /**
   * Async twin of {@link #getBatch}.
   *
   * @param keys as for the blocking call
   * @return a future of the blocking call's result (the caller owns the non-null buffers)
   */
  CompletableFuture<List<NativeBuffer>> getBatchAsync(List<String> keys);

  /**
   * Async twin of {@link #isExist}.
   *
   * @param key as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Integer> isExistAsync(String key);

  /**
   * Async twin of {@link #batchIsExist}.
   *
   * @param keys as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<int[]> batchIsExistAsync(List<String> keys);

  /**
   * Async twin of {@link #getSize}.
   *
   * @param key as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Long> getSizeAsync(String key);

  /**
   * Async twin of {@link #remove}.
   *
   * @param key as for the blocking call
   * @param force as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Integer> removeAsync(String key, boolean force);

  /**
   * Async twin of {@link #batchRemove}.
   *
   * @param keys as for the blocking call
   * @param force as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<int[]> batchRemoveAsync(List<String> keys, boolean force);

  /**
   * Async twin of {@link #removeByRegex}.
   *
   * @param regex as for the blocking call
   * @param force as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Long> removeByRegexAsync(String regex, boolean force);

  /**
   * Async twin of {@link #removeAll}.
   *
   * @param force as for the blocking call
   * @return a future of the blocking call's result
   */
  CompletableFuture<Long> removeAllAsync(boolean force);
}
