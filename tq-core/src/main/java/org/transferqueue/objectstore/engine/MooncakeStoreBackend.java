package org.transferqueue.objectstore.engine;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.objectstore.MooncakeKvClient;
import org.transferqueue.objectstore.ObjectStore;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManagerFactory;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.kv.KvStorageManager;

/**
 * The {@code MooncakeStore} storage backend: a {@link KvStorageManager} over a {@link
 * MooncakeKvClient} over an object store set up from {@code backend.MooncakeStore}, in this process
 * ({@link #factory}, an {@link EmbeddedObjectStore}) or any other ({@link #over}, which the remote
 * store's factory uses too).
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
    return context ->
        over(
            EmbeddedObjectStore.create(context.allocator(), masterConfig),
            config,
            context,
            Optional.empty());
  }

  /**
   * A manager over {@code store}: sets the store up from {@code config}, builds a {@link
   * MooncakeKvClient} that owns the store, and wraps it in a {@link KvStorageManager}. The store is
   * closed if any step fails.
   *
   * @param store a store that is not set up; this method or the returned manager closes it
   * @param config the MooncakeStore settings (hostname, segment and local buffer sizes, batching,
   *     retries)
   * @param context the allocator and the production notifier
   * @param callTimeout the deadline of one put, get or clear of the client, retries included, when
   *     the store runs in other processes (as a call to a storage unit has); empty for a store in
   *     this process
   * @return the manager, which owns the client and the store
   * @throws StorageException {@code STORAGE_ERROR} naming the store's code when its setup fails
   */
  public static KvStorageManager over(
      ObjectStore store,
      MooncakeStoreConfig config,
      StorageContext context,
      Optional<Duration> callTimeout) {
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(context, "context");
    Objects.requireNonNull(callTimeout, "callTimeout");
    MooncakeKvClient client;
    try {
      int rc =
          store.setup(
              StoreConfig.builder()
                  .localHostname(
                      config.localHostname().isEmpty()
                          ? StoreConfig.LOCAL_HOSTNAME_DEFAULT
                          : config.localHostname())
                  .globalSegmentSize(config.globalSegmentSize())
                  .localBufferSize(config.localBufferSize())
                  .build());
      if (rc != 0) {
        throw new StorageException(
            ErrorCode.STORAGE_ERROR, "Mooncake store setup failed with error code: " + rc);
      }
      MooncakeKvClient.Builder builder =
          MooncakeKvClient.builder()
              .store(store)
              .ownsStore(true)
              .allocator(context.allocator())
              .config(config);
      callTimeout.ifPresent(builder::operationTimeout);
      client = builder.build();
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
    return new KvStorageManager(
        StorageManagerRegistry.MOONCAKE_STORE, client, context.notifier(), callTimeout);
  }
}
