package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import org.transferqueue.memory.NativeBuffer;

/**
 * Skeleton of an {@link ObjectStore}. It holds what every engine shares:
 *
 * <ul>
 *   <li><b>Argument checks.</b> Every key-taking call is a final method here that checks its
 *       arguments once, with Mooncake's rules ({@link ObjectStoreArgs}: empty keys and values,
 *       memory outside registered regions, copy-path values larger than the local buffer and
 *       repeated keys get {@code -600}), and only then calls the engine's {@code ...Validated}
 *       method with the per-key codes so far. A store that is not open ({@link #openConfig} is
 *       null) answers {@code -600} for every key ({@code null} for copy-path reads) without
 *       reaching the engine.
 *   <li><b>Registered memory.</b> {@link #registerBuffer} and {@link #unregisterBuffer} keep the
 *       caller's regions here; an engine's {@link #closeStore} calls {@link #closeRegistrations}.
 *   <li><b>Async twins.</b> Every {@code ...Async} call runs its blocking call on {@link
 *       #asyncExecutor()}. When the executor refuses the task (the store is closed or not set up)
 *       the future completes with {@code -600} ({@code null} for copy-path reads) instead of
 *       failing.
 * </ul>
 *
 * <p>Thread-safe if the subclass is. A store may close between the checks and its engine call; the
 * engine then answers as for a closed store.
 */
public abstract class AbstractObjectStore implements ObjectStore {
  private static final int OK = StoreStatus.OK.code();
  private static final int NOT_READY = StoreStatus.INVALID_PARAMS.code();

  private final RegisteredBufferSet registered = new RegisteredBufferSet();

  /** Creates the skeleton. */
  protected AbstractObjectStore() {}

  /**
   * The executor, owned by the store, that runs the async twins.
   *
   * @return the executor, or null when the store is not set up
   */
  protected abstract Executor asyncExecutor();

  /**
   * The settings the store was set up with, while it is open.
   *
   * @return the settings, or null when the store is not set up or closed
   */
  protected abstract StoreConfig openConfig();

  /** Drops every registered region and refuses later registrations; for {@link #closeStore}. */
  protected final void closeRegistrations() {
    registered.close();
  }

  /**
   * Tells whether {@code segment} lies wholly inside memory the caller registered.
   *
   * @param segment any segment
   * @return true if every byte of it is registered
   */
  protected final boolean isRegistered(MemorySegment segment) {
    return registered.contains(segment);
  }

  /**
   * The one batch write path behind {@link #batchPutFrom}, {@link #batchUpsertFrom}, {@link
   * #putBatch} and {@link #upsertBatch} (and, unless overridden, {@link #writeOneValidated}),
   * called after the arguments were checked.
   *
   * @param keys the keys
   * @param sources one segment per key: registered memory for the {@code ...From} calls, any memory
   *     no larger than the local buffer otherwise
   * @param config the replication settings
   * @param upsert overwrite existing keys (true) or fail them with -705 (false)
   * @param codes one per key: {@code -600} for a key the checks refused, which the engine must
   *     leave alone, 0 for a key to write; the engine may fill it in and return it
   * @return one Mooncake result code per key
   */
  protected abstract int[] writeValidated(
      List<String> keys,
      List<MemorySegment> sources,
      ReplicateConfig config,
      boolean upsert,
      int[] codes);

  /**
   * Writes one key whose arguments were checked ({@link #putFrom}, {@link #upsertFrom}, {@link
   * #put}, {@link #upsert}); by default a batch of one through {@link #writeValidated}.
   *
   * @param key a non-empty key
   * @param source a non-empty segment, allowed for the call
   * @param config the replication settings
   * @param upsert overwrite an existing key (true) or fail with -705 (false)
   * @return the Mooncake result code
   */
  protected int writeOneValidated(
      String key, MemorySegment source, ReplicateConfig config, boolean upsert) {
    return writeValidated(List.of(key), List.of(source), config, upsert, new int[1])[0];
  }

  /**
   * {@link #batchGetInto} after the checks.
   *
   * @param keys the keys
   * @param destinations one registered segment per key
   * @param results one per key: {@code -600} for a refused key, which the engine must leave alone,
   *     0 for a key to read; the engine may fill it in and return it
   * @return per key the bytes read or a negative code
   */
  protected abstract long[] batchGetIntoValidated(
      List<String> keys, List<MemorySegment> destinations, long[] results);

  /**
   * {@link #getBatch} after the checks.
   *
   * @param keys the keys
   * @param codes one per key: {@code -600} for a refused key (its buffer is null), 0 otherwise
   * @return one buffer per key, null where the read failed
   */
  protected abstract List<NativeBuffer> getBatchValidated(List<String> keys, long[] codes);

  /**
   * {@link #batchIsExist} after the checks.
   *
   * @param keys the keys
   * @param codes one per key: {@code -600} for a refused key, which the engine must answer with
   *     {@code -600}, 0 otherwise
   * @return per key 1 (present), 0 (absent) or a negative code
   */
  protected abstract int[] batchIsExistValidated(List<String> keys, int[] codes);

  /**
   * {@link #getSize} after the checks.
   *
   * @param key a non-empty key
   * @return the size, or a negative code
   */
  protected abstract long getSizeValidated(String key);

  /**
   * {@link #batchRemove} after the checks.
   *
   * @param keys the keys
   * @param force remove even with a lease or pin
   * @param codes one per key: {@code -600} for a refused key, which the engine must leave alone, 0
   *     otherwise; the engine may fill it in and return it
   * @return one Mooncake result code per key
   */
  protected abstract int[] batchRemoveValidated(List<String> keys, boolean force, int[] codes);

  // ---------------------------------------------------------------- registration

  @Override
  public final int registerBuffer(MemorySegment buffer) {
    Objects.requireNonNull(buffer, "buffer");
    return openConfig() == null ? NOT_READY : registered.register(buffer);
  }

  @Override
  public final int unregisterBuffer(MemorySegment buffer) {
    Objects.requireNonNull(buffer, "buffer");
    return openConfig() == null ? NOT_READY : registered.unregister(buffer);
  }

  // ---------------------------------------------------------------- writes

  @Override
  public final int putFrom(String key, MemorySegment source, ReplicateConfig config) {
    return writeOne(key, source, config, false, true);
  }

  @Override
  public final int upsertFrom(String key, MemorySegment source, ReplicateConfig config) {
    return writeOne(key, source, config, true, true);
  }

  @Override
  public final int put(String key, MemorySegment value, ReplicateConfig config) {
    return writeOne(key, value, config, false, false);
  }

  @Override
  public final int upsert(String key, MemorySegment value, ReplicateConfig config) {
    return writeOne(key, value, config, true, false);
  }

  @Override
  public final int[] batchPutFrom(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    return writeBatch(keys, sources, config, false, true);
  }

  @Override
  public final int[] batchUpsertFrom(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    return writeBatch(keys, sources, config, true, true);
  }

  @Override
  public final int putBatch(List<String> keys, List<MemorySegment> values, ReplicateConfig config) {
    return firstFailure(writeBatch(keys, values, config, false, false));
  }

  @Override
  public final int upsertBatch(
      List<String> keys, List<MemorySegment> values, ReplicateConfig config) {
    return firstFailure(writeBatch(keys, values, config, true, false));
  }

  private int writeOne(
      String key, MemorySegment source, ReplicateConfig config, boolean upsert, boolean zeroCopy) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(config, "config");
    StoreConfig open = openConfig();
    if (open == null) {
      return NOT_READY;
    }
    if (zeroCopy && source.byteSize() == 0) {
      return OK; // Mooncake's client short-cut: nothing is created
    }
    if (!ObjectStoreArgs.validSource(key, source, zeroCopy, registered, open.localBufferSize())) {
      return NOT_READY;
    }
    return writeOneValidated(key, source, config, upsert);
  }

  private int[] writeBatch(
      List<String> keys,
      List<MemorySegment> sources,
      ReplicateConfig config,
      boolean upsert,
      boolean zeroCopy) {
    Objects.requireNonNull(keys, "keys");
    Objects.requireNonNull(sources, "sources");
    Objects.requireNonNull(config, "config");
    int[] codes = new int[keys.size()];
    StoreConfig open = openConfig();
    if (sources.size() != codes.length || open == null) {
      Arrays.fill(codes, NOT_READY);
      return codes;
    }
    ObjectStoreArgs.checkWrites(keys, sources, zeroCopy, registered, open.localBufferSize(), codes);
    return writeValidated(keys, sources, config, upsert, codes);
  }

  // ---------------------------------------------------------------- reads and queries

  @Override
  public final long[] batchGetInto(List<String> keys, List<MemorySegment> destinations) {
    Objects.requireNonNull(keys, "keys");
    Objects.requireNonNull(destinations, "destinations");
    long[] results = new long[keys.size()];
    if (destinations.size() != results.length || openConfig() == null) {
      Arrays.fill(results, NOT_READY);
      return results;
    }
    ObjectStoreArgs.checkReads(keys, destinations, registered, results);
    return batchGetIntoValidated(keys, destinations, results);
  }

  @Override
  public final List<NativeBuffer> getBatch(List<String> keys) {
    Objects.requireNonNull(keys, "keys");
    if (openConfig() == null) {
      return Collections.nCopies(keys.size(), null);
    }
    long[] codes = new long[keys.size()];
    ObjectStoreArgs.checkKeys(keys, codes);
    return getBatchValidated(keys, codes);
  }

  @Override
  public final int[] batchIsExist(List<String> keys) {
    Objects.requireNonNull(keys, "keys");
    int[] codes = new int[keys.size()];
    if (openConfig() == null) {
      Arrays.fill(codes, NOT_READY);
      return codes;
    }
    ObjectStoreArgs.checkKeys(keys, codes);
    return batchIsExistValidated(keys, codes);
  }

  @Override
  public final long getSize(String key) {
    Objects.requireNonNull(key, "key");
    if (openConfig() == null || key.isEmpty()) {
      return NOT_READY;
    }
    return getSizeValidated(key);
  }

  @Override
  public final int[] batchRemove(List<String> keys, boolean force) {
    Objects.requireNonNull(keys, "keys");
    int[] codes = new int[keys.size()];
    if (openConfig() == null) {
      Arrays.fill(codes, NOT_READY);
      return codes;
    }
    ObjectStoreArgs.checkKeys(keys, codes);
    return batchRemoveValidated(keys, force, codes);
  }

  /** One key through {@link #batchGetInto}, the single read path. */
  @Override
  public final long getInto(String key, MemorySegment destination) {
    return batchGetInto(List.of(key), List.of(destination))[0];
  }

  /** One key through {@link #getBatch}. */
  @Override
  public final NativeBuffer get(String key) {
    return getBatch(List.of(key)).get(0);
  }

  /** One key through {@link #batchIsExist}. */
  @Override
  public final int isExist(String key) {
    return batchIsExist(List.of(key))[0];
  }

  /** One key through {@link #batchRemove}. */
  @Override
  public final int remove(String key, boolean force) {
    return batchRemove(List.of(key), force)[0];
  }

  private static int firstFailure(int[] codes) {
    for (int code : codes) {
      if (code != OK) {
        return code;
      }
    }
    return OK;
  }

  private <T> CompletableFuture<T> submit(Supplier<T> call, T whenRejected) {
    Executor executor = asyncExecutor();
    if (executor == null) {
      return CompletableFuture.completedFuture(whenRejected);
    }
    try {
      return CompletableFuture.supplyAsync(call, executor);
    } catch (RejectedExecutionException e) {
      // The store closed between the null check and the submission: same answer as a closed store.
      return CompletableFuture.completedFuture(whenRejected);
    }
  }

  private static int[] allNotReady(List<?> keys) {
    int[] result = new int[keys.size()];
    Arrays.fill(result, NOT_READY);
    return result;
  }

  private static long[] allNotReadyLong(List<?> keys) {
    long[] result = new long[keys.size()];
    Arrays.fill(result, NOT_READY);
    return result;
  }

  @Override
  public CompletableFuture<Integer> registerBufferAsync(MemorySegment buffer) {
    return submit(() -> registerBuffer(buffer), NOT_READY);
  }

  @Override
  public CompletableFuture<Integer> unregisterBufferAsync(MemorySegment buffer) {
    return submit(() -> unregisterBuffer(buffer), NOT_READY);
  }

  @Override
  public CompletableFuture<Integer> putFromAsync(
      String key, MemorySegment source, ReplicateConfig config) {
    return submit(() -> putFrom(key, source, config), NOT_READY);
  }

  @Override
  public CompletableFuture<int[]> batchPutFromAsync(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    return submit(() -> batchPutFrom(keys, sources, config), allNotReady(keys));
  }

  @Override
  public CompletableFuture<Integer> upsertFromAsync(
      String key, MemorySegment source, ReplicateConfig config) {
    return submit(() -> upsertFrom(key, source, config), NOT_READY);
  }

  @Override
  public CompletableFuture<int[]> batchUpsertFromAsync(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    return submit(() -> batchUpsertFrom(keys, sources, config), allNotReady(keys));
  }

  @Override
  public CompletableFuture<Integer> putAsync(
      String key, MemorySegment value, ReplicateConfig config) {
    return submit(() -> put(key, value, config), NOT_READY);
  }

  @Override
  public CompletableFuture<Integer> upsertAsync(
      String key, MemorySegment value, ReplicateConfig config) {
    return submit(() -> upsert(key, value, config), NOT_READY);
  }

  @Override
  public CompletableFuture<Integer> putBatchAsync(
      List<String> keys, List<MemorySegment> values, ReplicateConfig config) {
    return submit(() -> putBatch(keys, values, config), NOT_READY);
  }

  @Override
  public CompletableFuture<Integer> upsertBatchAsync(
      List<String> keys, List<MemorySegment> values, ReplicateConfig config) {
    return submit(() -> upsertBatch(keys, values, config), NOT_READY);
  }

  @Override
  public CompletableFuture<Long> getIntoAsync(String key, MemorySegment destination) {
    return submit(() -> getInto(key, destination), (long) NOT_READY);
  }

  @Override
  public CompletableFuture<long[]> batchGetIntoAsync(
      List<String> keys, List<MemorySegment> destinations) {
    return submit(() -> batchGetInto(keys, destinations), allNotReadyLong(keys));
  }

  @Override
  public CompletableFuture<NativeBuffer> getAsync(String key) {
    return submit(() -> get(key), null);
  }

  @Override
  public CompletableFuture<List<NativeBuffer>> getBatchAsync(List<String> keys) {
    return submit(() -> getBatch(keys), Collections.nCopies(keys.size(), null));
  }

  @Override
  public CompletableFuture<Integer> isExistAsync(String key) {
    return submit(() -> isExist(key), NOT_READY);
  }

  @Override
  public CompletableFuture<int[]> batchIsExistAsync(List<String> keys) {
    return submit(() -> batchIsExist(keys), allNotReady(keys));
  }

  @Override
  public CompletableFuture<Long> getSizeAsync(String key) {
    return submit(() -> getSize(key), (long) NOT_READY);
  }

  @Override
  public CompletableFuture<Integer> removeAsync(String key, boolean force) {
    return submit(() -> remove(key, force), NOT_READY);
  }

  @Override
  public CompletableFuture<int[]> batchRemoveAsync(List<String> keys, boolean force) {
    return submit(() -> batchRemove(keys, force), allNotReady(keys));
  }

  @Override
  public CompletableFuture<Long> removeByRegexAsync(String regex, boolean force) {
    return submit(() -> removeByRegex(regex, force), (long) NOT_READY);
  }

  @Override
  public CompletableFuture<Long> removeAllAsync(boolean force) {
    return submit(() -> removeAll(force), (long) NOT_READY);
  }
}
