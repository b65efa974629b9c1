package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import org.transferqueue.memory.NativeBuffer;

/**
 * Skeleton of an {@link ObjectStore}: every {@code ...Async} twin runs its blocking call on {@link
 * #asyncExecutor()}. When the executor refuses the task (the store is closed or not set up) the
 * future completes with {@code -600} ({@code null} for copy-path reads) instead of failing.
 *
 * <p>Thread-safe if the subclass is.
 */
public abstract class AbstractObjectStore implements ObjectStore {
  private static final int NOT_READY = StoreStatus.INVALID_PARAMS.code();

  /** Creates the skeleton. */
  protected AbstractObjectStore() {}

  /**
   * The executor, owned by the store, that runs the async twins.
   *
   * @return the executor, or null when the store is not set up
   */
  protected abstract Executor asyncExecutor();

  /**
   * The one batch write path behind {@link #batchPutFrom}, {@link #batchUpsertFrom}, {@link
   * #putBatch} and {@link #upsertBatch}.
   *
   * @param keys the keys
   * @param sources one segment per key
   * @param config the replication settings
   * @param upsert overwrite existing keys (true) or fail them with -705 (false)
   * @param zeroCopy sources must lie in registered memory (the {@code ...From} calls)
   * @return one Mooncake result code per key
   */
  protected abstract int[] writeBatch(
      List<String> keys,
      List<MemorySegment> sources,
      ReplicateConfig config,
      boolean upsert,
      boolean zeroCopy);

  @Override
  public int[] batchPutFrom(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    return writeBatch(keys, sources, config, false, true);
  }

  @Override
  public int[] batchUpsertFrom(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    return writeBatch(keys, sources, config, true, true);
  }

  @Override
  public int putBatch(List<String> keys, List<MemorySegment> values, ReplicateConfig config) {
    return firstFailure(writeBatch(keys, values, config, false, false));
  }

  @Override
  public int upsertBatch(List<String> keys, List<MemorySegment> values, ReplicateConfig config) {
    return firstFailure(writeBatch(keys, values, config, true, false));
  }

  /** One key through {@link #batchGetInto}, the single read path. */
  @Override
  public long getInto(String key, MemorySegment destination) {
    return batchGetInto(List.of(key), List.of(destination))[0];
  }

  /** One key through {@link #getBatch}. */
  @Override
  public NativeBuffer get(String key) {
    return getBatch(List.of(key)).get(0);
  }

  /** One key through {@link #batchIsExist}. */
  @Override
  public int isExist(String key) {
    return batchIsExist(List.of(key))[0];
  }

  /** One key through {@link #batchRemove}. */
  @Override
  public int remove(String key, boolean force) {
    return batchRemove(List.of(key), force)[0];
  }

  private static int firstFailure(int[] codes) {
    for (int code : codes) {
      if (code != StoreStatus.OK.code()) {
        return code;
      }
    }
    return StoreStatus.OK.code();
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
    java.util.Arrays.fill(result, NOT_READY);
    return result;
  }

  private static long[] allNotReadyLong(List<?> keys) {
    long[] result = new long[keys.size()];
    java.util.Arrays.fill(result, NOT_READY);
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
    return submit(() -> getBatch(keys), java.util.Collections.nCopies(keys.size(), null));
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
