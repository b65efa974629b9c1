package org.transferqueue.client;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.Tensor;

/** Systems, producers and readers shared by the loader and checkpoint tests. */
final class LoaderFixtures {
  private LoaderFixtures() {}

  /** A polling-mode system with 2 units, the given sampler and pre-allocation, leaks throwing. */
  static TransferQueueSystem system(Sampler sampler, int prealloc) {
    return system(sampler, prealloc, b -> {});
  }

  static TransferQueueSystem system(
      Sampler sampler, int prealloc, Consumer<TqConfig.Builder> extra) {
    return TransferQueueSystem.builder()
        .config(config(prealloc, extra))
        .sampler(sampler)
        .leakPolicy(LeakPolicy.THROW)
        .start();
  }

  /** The same system as {@link #system(Sampler, int)}, deployed as {@code deployment}. */
  static TestSystem system(Deployment deployment, Sampler sampler, int prealloc) {
    return system(deployment, sampler, prealloc, b -> {});
  }

  /** The same system as {@link #system(Sampler, int, Consumer)}, deployed as {@code deployment}. */
  static TestSystem system(
      Deployment deployment, Sampler sampler, int prealloc, Consumer<TqConfig.Builder> extra) {
    return deployment.start(config(prealloc, extra), MissingKeyPolicy.FAIL, sampler);
  }

  private static TqConfig config(int prealloc, Consumer<TqConfig.Builder> extra) {
    TqConfig.Builder config =
        TqConfig.builder()
            .controller(c -> c.pollingMode(true).preallocSampleNum(prealloc))
            .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(2)));
    extra.accept(config);
    return config.build();
  }

  /** Puts one sample per id with field {@code field} = [[id]] (int64) and returns its metadata. */
  static BatchMeta putIds(
      MetaClient client, BufferAllocator allocator, String partition, long... ids) {
    return putIds(client, allocator, partition, "meta_idx", ids);
  }

  static BatchMeta putIds(
      MetaClient client, BufferAllocator allocator, String partition, String field, long... ids) {
    try (Batch batch =
        Batch.builder()
            .dense(field, Tensor.ofLongs(allocator, DType.INT64, ids, ids.length, 1))
            .build()) {
      return client.put(batch, partition);
    }
  }

  /** The values of a one-column int64 field, one per row. */
  static List<Long> ids(Batch batch, String field) {
    long[] values = ((DenseColumn) batch.column(field)).tensor().toLongArray();
    List<Long> out = new ArrayList<>(values.length);
    for (long v : values) {
      out.add(v);
    }
    return out;
  }

  /** Counts calls to {@link MetaClient#getMeta} and records their times. */
  static final class CountingClient {
    final List<Long> getMetaNanos = java.util.Collections.synchronizedList(new ArrayList<>());
    final MetaClient client;

    CountingClient(MetaClient delegate) {
      this.client =
          (MetaClient)
              Proxy.newProxyInstance(
                  MetaClient.class.getClassLoader(),
                  new Class<?>[] {MetaClient.class},
                  (proxy, method, args) -> {
                    // The loader fetches with tryGetMeta; a hook may call getMeta.
                    if (method.getName().equals("getMeta")
                        || method.getName().equals("tryGetMeta")) {
                      getMetaNanos.add(System.nanoTime());
                    }
                    try {
                      return method.invoke(delegate, args);
                    } catch (InvocationTargetException e) {
                      throw e.getCause();
                    }
                  });
    }
  }
}
