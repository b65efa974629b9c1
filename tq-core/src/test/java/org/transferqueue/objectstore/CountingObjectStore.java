package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.transferqueue.memory.NativeBuffer;

/**
 * An {@link ObjectStore} for tests: delegates to a real store, records the shape of every batch
 * call, and answers scripted codes for chosen keys before delegating. The async twins go to the
 * delegate's unchanged.
 */
class CountingObjectStore implements ObjectStore {
  /** One recorded batch call. */
  record Call(String operation, List<String> keys, List<Long> sizes, List<Long> addresses) {}

  private final ObjectStore delegate;
  private final List<Call> calls = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, Deque<Long>> scripted = new HashMap<>();
  private final Map<String, Long> always = new HashMap<>();
  private volatile int truncateResults = -1;
  final AtomicInteger registers = new AtomicInteger();
  final AtomicInteger unregisters = new AtomicInteger();
  volatile ReplicateConfig lastConfig;

  CountingObjectStore(ObjectStore delegate) {
    this.delegate = delegate;
  }

  /** The next calls touching {@code key} (any operation) answer these codes, then delegate. */
  synchronized void script(String key, long... codes) {
    Deque<Long> queue = scripted.computeIfAbsent(key, k -> new ArrayDeque<>());
    for (long code : codes) {
      queue.add(code);
    }
  }

  /** Every call touching {@code key} answers {@code code}. */
  synchronized void always(String key, long code) {
    always.put(key, code);
  }

  /** The next batch call returns only {@code n} results. */
  void truncateNextResult(int n) {
    truncateResults = n;
  }

  List<Call> calls(String operation) {
    synchronized (calls) {
      return calls.stream().filter(c -> c.operation.equals(operation)).toList();
    }
  }

  private synchronized Long override(String key) {
    if (always.containsKey(key)) {
      return always.get(key);
    }
    Deque<Long> queue = scripted.get(key);
    return queue == null ? null : queue.pollFirst();
  }

  private void record(String op, List<String> keys, List<MemorySegment> segments) {
    List<Long> sizes = new ArrayList<>();
    List<Long> addresses = new ArrayList<>();
    if (segments != null) {
      for (MemorySegment s : segments) {
        sizes.add(s.byteSize());
        addresses.add(s.address());
      }
    }
    calls.add(new Call(op, List.copyOf(keys), sizes, addresses));
  }

  /** Delegates the keys without an override; merges the answers. */
  private long[] batch(
      String op,
      List<String> keys,
      List<MemorySegment> segments,
      java.util.function.BiFunction<List<String>, List<MemorySegment>, long[]> call) {
    record(op, keys, segments);
    long[] out = new long[keys.size()];
    List<Integer> passed = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      Long code = override(keys.get(i));
      if (code == null) {
        passed.add(i);
      } else {
        out[i] = code;
      }
    }
    if (!passed.isEmpty()) {
      List<String> subKeys = passed.stream().map(keys::get).toList();
      List<MemorySegment> subSegments =
          segments == null ? null : passed.stream().map(segments::get).toList();
      long[] answered = call.apply(subKeys, subSegments);
      for (int j = 0; j < passed.size(); j++) {
        out[passed.get(j)] = answered[j];
      }
    }
    int truncate = truncateResults;
    if (truncate >= 0) {
      truncateResults = -1;
      return java.util.Arrays.copyOf(out, truncate);
    }
    return out;
  }

  private static long[] widen(int[] codes) {
    long[] out = new long[codes.length];
    for (int i = 0; i < codes.length; i++) {
      out[i] = codes[i];
    }
    return out;
  }

  private static int[] narrow(long[] codes) {
    int[] out = new int[codes.length];
    for (int i = 0; i < codes.length; i++) {
      out[i] = (int) codes[i];
    }
    return out;
  }

  @Override
  public int setup(StoreConfig config) {
    return delegate.setup(config);
  }

  @Override
  public int closeStore() {
    return delegate.closeStore();
  }

  @Override
  public String hostname() {
    return delegate.hostname();
  }

  @Override
  public int registerBuffer(MemorySegment buffer) {
    registers.incrementAndGet();
    return delegate.registerBuffer(buffer);
  }

  @Override
  public int unregisterBuffer(MemorySegment buffer) {
    unregisters.incrementAndGet();
    return delegate.unregisterBuffer(buffer);
  }

  @Override
  public int putFrom(String key, MemorySegment source, ReplicateConfig config) {
    return delegate.putFrom(key, source, config);
  }

  @Override
  public int upsertFrom(String key, MemorySegment source, ReplicateConfig config) {
    return delegate.upsertFrom(key, source, config);
  }

  @Override
  public int[] batchPutFrom(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    return delegate.batchPutFrom(keys, sources, config);
  }

  @Override
  public int[] batchUpsertFrom(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    return countedUpsertFrom(keys, sources, config);
  }

  @Override
  public int putBatch(List<String> keys, List<MemorySegment> values, ReplicateConfig config) {
    return delegate.putBatch(keys, values, config);
  }

  @Override
  public int upsertBatch(List<String> keys, List<MemorySegment> values, ReplicateConfig config) {
    return delegate.upsertBatch(keys, values, config);
  }

  private int[] countedUpsertFrom(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    lastConfig = config;
    return narrow(
        batch(
            "batchUpsertFrom",
            keys,
            sources,
            (k, s) -> widen(delegate.batchUpsertFrom(k, s, config))));
  }

  @Override
  public int put(String key, MemorySegment value, ReplicateConfig config) {
    return delegate.put(key, value, config);
  }

  @Override
  public int upsert(String key, MemorySegment value, ReplicateConfig config) {
    return delegate.upsert(key, value, config);
  }

  @Override
  public long getInto(String key, MemorySegment destination) {
    return delegate.getInto(key, destination);
  }

  @Override
  public long[] batchGetInto(List<String> keys, List<MemorySegment> destinations) {
    return batch("batchGetInto", keys, destinations, delegate::batchGetInto);
  }

  @Override
  public NativeBuffer get(String key) {
    return delegate.get(key);
  }

  @Override
  public List<NativeBuffer> getBatch(List<String> keys) {
    return delegate.getBatch(keys);
  }

  @Override
  public int isExist(String key) {
    return delegate.isExist(key);
  }

  @Override
  public int[] batchIsExist(List<String> keys) {
    return delegate.batchIsExist(keys);
  }

  @Override
  public long getSize(String key) {
    return delegate.getSize(key);
  }

  @Override
  public int remove(String key, boolean force) {
    return delegate.remove(key, force);
  }

  @Override
  public int[] batchRemove(List<String> keys, boolean force) {
    return narrow(
        batch("batchRemove", keys, null, (k, s) -> widen(delegate.batchRemove(k, force))));
  }

  @Override
  public long removeByRegex(String regex, boolean force) {
    return delegate.removeByRegex(regex, force);
  }

  @Override
  public long removeAll(boolean force) {
    return delegate.removeAll(force);
  }

  @Override
  public CompletableFuture<Integer> registerBufferAsync(MemorySegment buffer) {
    return delegate.registerBufferAsync(buffer);
  }

  @Override
  public CompletableFuture<Integer> unregisterBufferAsync(MemorySegment buffer) {
    return delegate.unregisterBufferAsync(buffer);
  }

  @Override
  public CompletableFuture<Integer> putFromAsync(
      String key, MemorySegment source, ReplicateConfig config) {
    return delegate.putFromAsync(key, source, config);
  }

  @Override
  public CompletableFuture<int[]> batchPutFromAsync(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    return delegate.batchPutFromAsync(keys, sources, config);
  }

  @Override
  public CompletableFuture<Integer> upsertFromAsync(
      String key, MemorySegment source, ReplicateConfig config) {
    return delegate.upsertFromAsync(key, source, config);
  }

  @Override
  public CompletableFuture<int[]> batchUpsertFromAsync(
      List<String> keys, List<MemorySegment> sources, ReplicateConfig config) {
    return delegate.batchUpsertFromAsync(keys, sources, config);
  }

  @Override
  public CompletableFuture<Integer> putAsync(
      String key, MemorySegment value, ReplicateConfig config) {
    return delegate.putAsync(key, value, config);
  }

  @Override
  public CompletableFuture<Integer> upsertAsync(
      String key, MemorySegment value, ReplicateConfig config) {
    return delegate.upsertAsync(key, value, config);
  }

  @Override
  public CompletableFuture<Integer> putBatchAsync(
      List<String> keys, List<MemorySegment> values, ReplicateConfig config) {
    return delegate.putBatchAsync(keys, values, config);
  }

  @Override
  public CompletableFuture<Integer> upsertBatchAsync(
      List<String> keys, List<MemorySegment> values, ReplicateConfig config) {
    return delegate.upsertBatchAsync(keys, values, config);
  }

  @Override
  public CompletableFuture<Long> getIntoAsync(String key, MemorySegment destination) {
    return delegate.getIntoAsync(key, destination);
  }

  @Override
  public CompletableFuture<long[]> batchGetIntoAsync(
      List<String> keys, List<MemorySegment> destinations) {
    return delegate.batchGetIntoAsync(keys, destinations);
  }

  @Override
  public CompletableFuture<NativeBuffer> getAsync(String key) {
    return delegate.getAsync(key);
  }

  @Override
  public CompletableFuture<List<NativeBuffer>> getBatchAsync(List<String> keys) {
    return delegate.getBatchAsync(keys);
  }

  @Override
  public CompletableFuture<Integer> isExistAsync(String key) {
    return delegate.isExistAsync(key);
  }

  @Override
  public CompletableFuture<int[]> batchIsExistAsync(List<String> keys) {
    return delegate.batchIsExistAsync(keys);
  }

  @Override
  public CompletableFuture<Long> getSizeAsync(String key) {
    return delegate.getSizeAsync(key);
  }

  @Override
  public CompletableFuture<Integer> removeAsync(String key, boolean force) {
    return delegate.removeAsync(key, force);
  }

  @Override
  public CompletableFuture<int[]> batchRemoveAsync(List<String> keys, boolean force) {
    return delegate.batchRemoveAsync(keys, force);
  }

  @Override
  public CompletableFuture<Long> removeByRegexAsync(String regex, boolean force) {
    return delegate.removeByRegexAsync(regex, force);
  }

  @Override
  public CompletableFuture<Long> removeAllAsync(boolean force) {
    return delegate.removeAllAsync(force);
  }
}
