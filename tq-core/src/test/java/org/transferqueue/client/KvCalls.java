package org.transferqueue.client;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.tensor.Batch;

/**
 * The key-value calls of the BOTH fixture: one scenario runs once through the blocking methods of
 * {@link KvApi} and once through their asynchronous twins, joined here. An asynchronous failure is
 * rethrown as the exception the future completed with, so both forms are asserted alike.
 */
interface KvCalls {
  KvBatchMeta put(String key, String partitionId, Map<String, ?> fields, Map<String, ?> tag);

  KvBatchMeta put(String key, String partitionId, Batch row, Map<String, ?> tag);

  KvBatchMeta batchPut(
      List<String> keys, String partitionId, Batch fields, List<? extends Map<String, ?>> tags);

  KvBatchMeta batchPut(
      List<String> keys,
      String partitionId,
      Batch fields,
      List<? extends Map<String, ?>> tags,
      DataParserReference parser);

  Batch batchGet(List<String> keys, String partitionId, List<String> selectFields);

  Batch get(KvBatchMeta meta, List<String> selectFields);

  Map<String, Map<String, Map<String, Object>>> list(String partitionId);

  void clear(List<String> keys, String partitionId);

  /** Reads every field produced for all of {@code keys}. */
  default Batch batchGet(List<String> keys, String partitionId) {
    return batchGet(keys, partitionId, null);
  }

  /** The two forms of the BOTH fixture. */
  enum Form {
    BLOCKING,
    ASYNC;

    /** The calls of this form over {@code kv}. */
    KvCalls over(KvApi kv) {
      return this == BLOCKING ? new Blocking(kv) : new Async(kv);
    }
  }

  /** Waits for a future and rethrows the exception it completed with, unwrapped. */
  static <T> T join(CompletableFuture<T> future) {
    try {
      return future.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw e;
    }
  }

  /** The blocking methods. */
  record Blocking(KvApi kv) implements KvCalls {
    @Override
    public KvBatchMeta put(
        String key, String partitionId, Map<String, ?> fields, Map<String, ?> tag) {
      return kv.put(key, partitionId, fields, tag);
    }

    @Override
    public KvBatchMeta put(String key, String partitionId, Batch row, Map<String, ?> tag) {
      return kv.put(key, partitionId, row, tag);
    }

    @Override
    public KvBatchMeta batchPut(
        List<String> keys, String partitionId, Batch fields, List<? extends Map<String, ?>> tags) {
      return kv.batchPut(keys, partitionId, fields, tags);
    }

    @Override
    public KvBatchMeta batchPut(
        List<String> keys,
        String partitionId,
        Batch fields,
        List<? extends Map<String, ?>> tags,
        DataParserReference parser) {
      return kv.batchPut(keys, partitionId, fields, tags, parser);
    }

    @Override
    public Batch batchGet(List<String> keys, String partitionId, List<String> selectFields) {
      return kv.batchGet(keys, partitionId, selectFields);
    }

    @Override
    public Batch get(KvBatchMeta meta, List<String> selectFields) {
      return kv.get(meta, selectFields);
    }

    @Override
    public Map<String, Map<String, Map<String, Object>>> list(String partitionId) {
      return kv.list(partitionId);
    }

    @Override
    public void clear(List<String> keys, String partitionId) {
      kv.clear(keys, partitionId);
    }
  }

  /** The asynchronous twins, joined. */
  record Async(KvApi kv) implements KvCalls {
    @Override
    public KvBatchMeta put(
        String key, String partitionId, Map<String, ?> fields, Map<String, ?> tag) {
      return join(kv.putAsync(key, partitionId, fields, tag));
    }

    @Override
    public KvBatchMeta put(String key, String partitionId, Batch row, Map<String, ?> tag) {
      return join(kv.putAsync(key, partitionId, row, tag));
    }

    @Override
    public KvBatchMeta batchPut(
        List<String> keys, String partitionId, Batch fields, List<? extends Map<String, ?>> tags) {
      return join(kv.batchPutAsync(keys, partitionId, fields, tags));
    }

    @Override
    public KvBatchMeta batchPut(
        List<String> keys,
        String partitionId,
        Batch fields,
        List<? extends Map<String, ?>> tags,
        DataParserReference parser) {
      return join(kv.batchPutAsync(keys, partitionId, fields, tags, parser));
    }

    @Override
    public Batch batchGet(List<String> keys, String partitionId, List<String> selectFields) {
      return join(kv.batchGetAsync(keys, partitionId, selectFields));
    }

    @Override
    public Batch get(KvBatchMeta meta, List<String> selectFields) {
      return join(kv.getAsync(meta, selectFields));
    }

    @Override
    public Map<String, Map<String, Map<String, Object>>> list(String partitionId) {
      return join(kv.listAsync(partitionId));
    }

    @Override
    public void clear(List<String> keys, String partitionId) {
      join(kv.clearAsync(keys, partitionId));
    }
  }
}
