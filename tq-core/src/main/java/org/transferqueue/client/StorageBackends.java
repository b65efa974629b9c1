package org.transferqueue.client;

import org.transferqueue.config.TqConfig;
import org.transferqueue.objectstore.engine.MooncakeStoreBackend;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.simple.SimpleStorageManager;

/** The storage backends this library ships, by their upstream configuration names. */
public final class StorageBackends {
  private StorageBackends() {}

  /**
   * A registry of the built-in backends with the default MooncakeStore settings.
   *
   * @return a registry with {@code SimpleStorage} and {@code MooncakeStore}
   */
  public static StorageManagerRegistry builtIn() {
    return builtIn(TqConfig.defaults());
  }

  /**
   * A registry of the built-in backends, each set up from its section of {@code config}.
   *
   * @param config the configuration whose {@code backend.MooncakeStore} section the MooncakeStore
   *     backend uses
   * @return a registry with {@code SimpleStorage} and {@code MooncakeStore}
   */
  public static StorageManagerRegistry builtIn(TqConfig config) {
    StorageManagerRegistry.Builder registry =
        StorageManagerRegistry.builder()
            .register(StorageManagerRegistry.SIMPLE_STORAGE, SimpleStorageManager::create);
    return MooncakeStoreBackend.register(registry, config.backend().mooncakeStore()).build();
  }
}
