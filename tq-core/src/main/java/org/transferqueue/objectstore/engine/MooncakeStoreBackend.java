package org.transferqueue.objectstore.engine;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.objectstore.KvClientConfig;
import org.transferqueue.objectstore.MooncakeKvClient;
import org.transferqueue.objectstore.ObjectStore;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManagerFactory;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.kv.KvStorageManager;

/**
 * The {@code MooncakeStore} storage backend: a {@link KvStorageManager} over a {@link
 * MooncakeKvClient} over an object store, in this process ({@link #factory}, an {@link
 * EmbeddedObjectStore}) or any other ({@link #over}, which the remote store's factory uses too).
 *
 * <pre>{@code
 * StorageManagerRegistry registry =
 *     StorageManagerRegistry.builder()
 *         .register(
 *             StorageManagerRegistry.MOONCAKE_STORE,
 *             MooncakeStoreBackend.factory(
 *                 StoreConfig.builder().globalSegmentSize(64L << 20).build(),
 *                 MasterConfig.DEFAULT,
 *                 KvClientConfig.defaults()))
 *         .build();
 * StorageManager manager = registry.create("MooncakeStore", context);
 * }</pre>
 *
 * <p>The settings are typed component records; the system layer maps {@code backend.MooncakeStore}
 * onto them ({@code org.transferqueue.system.ConfigMapper}). Stateless and thread-safe.
 */
public final class MooncakeStoreBackend {
  private MooncakeStoreBackend() {}

  /**
   * A factory of managers, each with its own embedded store, client and workers.
   *
   * @param storeConfig the embedded store's segment name, segment and local buffer sizes
   * @param masterConfig the embedded engine's leases, eviction and clock
   * @param clientConfig batching, retries and hard pin of the key-value client
   * @return the factory
   */
  public static StorageManagerFactory factory(
      StoreConfig storeConfig, MasterConfig masterConfig, KvClientConfig clientConfig) {
    Objects.requireNonNull(storeConfig, "storeConfig");
    Objects.requireNonNull(masterConfig, "masterConfig");
    Objects.requireNonNull(clientConfig, "clientConfig");
    return context ->
        over(
            EmbeddedObjectStore.create(context.allocator(), masterConfig),
            storeConfig,
            clientConfig,
            context,
            Optional.empty());
  }

  /**
   * A manager over {@code store}: sets the store up with {@code storeConfig}, builds a {@link
   * MooncakeKvClient} that owns the store, and wraps it in a {@link KvStorageManager}. The store is
   * closed if any step fails.
   *
   * @param store a store that is not set up; this method or the returned manager closes it
   * @param storeConfig this client's segment name, contributed segment and local buffer
   * @param clientConfig batching, retries and hard pin of the key-value client
   * @param context the allocator and the production notifier
   * @param callTimeout the deadline of one put, get or clear of the client, retries included, when
   *     the store runs in other processes (as a call to a storage unit has); empty for a store in
   *     this process
   * @return the manager, which owns the client and the store
   * @throws StorageException {@code STORAGE_ERROR} naming the store's code when its setup fails
   */
  public static KvStorageManager over(
      ObjectStore store,
      StoreConfig storeConfig,
      KvClientConfig clientConfig,
      StorageContext context,
      Optional<Duration> callTimeout) {
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(storeConfig, "storeConfig");
    Objects.requireNonNull(clientConfig, "clientConfig");
    Objects.requireNonNull(context, "context");
    Objects.requireNonNull(callTimeout, "callTimeout");
    MooncakeKvClient client;
    try {
      int rc = store.setup(storeConfig);
      if (rc != 0) {
        throw new StorageException(
            ErrorCode.STORAGE_ERROR, "Mooncake store setup failed with error code: " + rc);
      }
      MooncakeKvClient.Builder builder =
          MooncakeKvClient.builder()
              .store(store)
              .ownsStore(true)
              .allocator(context.allocator())
              .config(clientConfig);
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
