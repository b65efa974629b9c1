package org.transferqueue.objectstore;

import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.storage.StorageManagerFactory;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.kv.KvStorageManager;

/**
 * The {@code MooncakeStore} storage backend: a {@link KvStorageManager} over a {@link
 * MooncakeKvClient} over an embedded object store set up from {@code backend.MooncakeStore}.
 *
 * <pre>{@code
 * StorageManagerRegistry registry =
 *     MooncakeStoreBackend.register(StorageManagerRegistry.builder(), tqConfig.mooncakeStore())
 *         .build();
 * StorageManager manager = registry.create("MooncakeStore", context);
 * }</pre>
 *
 * <p>The settings are the typed {@link MooncakeStoreConfig}; the untyped {@code options} of the
 * {@link org.transferqueue.storage.StorageContext} are not read. Stateless and thread-safe.
 */
public final class MooncakeStoreBackend {
  private MooncakeStoreBackend() {}

  /**
   * Registers the backend under {@link StorageManagerRegistry#MOONCAKE_STORE}.
   *
   * @param registry the registry being built
   * @param config the MooncakeStore settings
   * @return {@code registry}
   */
  public static StorageManagerRegistry.Builder register(
      StorageManagerRegistry.Builder registry, MooncakeStoreConfig config) {
    return registry.register(
        StorageManagerRegistry.MOONCAKE_STORE, factory(config, masterConfig(config)));
  }

  /**
   * The engine settings of {@code backend.MooncakeStore}: Mooncake's defaults, with eviction at
   * {@code offload.eviction_high_watermark_ratio} down by {@code offload.eviction_ratio} of the
   * capacity (eviction only ever takes objects that are not hard-pinned). Upstream passes the two
   * ratios to its master only when offload is enabled; this build has no SSD tier and applies them
   * to every embedded store and store node.
   *
   * @param config the MooncakeStore settings
   * @return the engine settings
   */
  public static MasterConfig masterConfig(MooncakeStoreConfig config) {
    Objects.requireNonNull(config, "config");
    return MasterConfig.builder()
        .evictionHighWatermark(config.offload().evictionHighWatermarkRatio())
        .evictionRatio(config.offload().evictionRatio())
        .build();
  }

  /**
   * A factory of managers, each with its own embedded store, client and workers.
   *
   * @param config the MooncakeStore settings (segment sizes, hard pin, batching, retries)
   * @param masterConfig the embedded engine's leases, eviction and clock
   * @return the factory
   */
  public static StorageManagerFactory factory(
      MooncakeStoreConfig config, MasterConfig masterConfig) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(masterConfig, "masterConfig");
    return context -> {
      EmbeddedObjectStore store = EmbeddedObjectStore.create(context.allocator(), masterConfig);
      String hostname =
          config.localHostname().isEmpty()
              ? StoreConfig.LOCAL_HOSTNAME_DEFAULT
              : config.localHostname();
      int rc =
          store.setup(
              StoreConfig.builder()
                  .localHostname(hostname)
                  .globalSegmentSize(config.globalSegmentSize())
                  .localBufferSize(config.localBufferSize())
                  .build());
      if (rc != 0) {
        store.close();
        throw new StorageException(
            ErrorCode.STORAGE_ERROR, "Mooncake store setup failed with error code: " + rc);
      }
      MooncakeKvClient client;
      try {
        client =
            MooncakeKvClient.builder()
                .store(store)
                .ownsStore(true)
                .allocator(context.allocator())
                .config(config)
                .build();
      } catch (RuntimeException e) {
        store.close();
        throw e;
      }
      return new KvStorageManager(
          StorageManagerRegistry.MOONCAKE_STORE, client, context.notifier());
    };
  }
}
