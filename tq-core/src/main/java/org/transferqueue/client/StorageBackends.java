package org.transferqueue.client;

import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.simple.SimpleStorageManager;

/** The storage backends this library ships, by their upstream configuration names. */
public final class StorageBackends {
  private StorageBackends() {}

  /**
   * A registry of the built-in backends.
   *
   * @return a registry with {@code SimpleStorage}
   */
  public static StorageManagerRegistry builtIn() {
    return StorageManagerRegistry.builder()
        .register(StorageManagerRegistry.SIMPLE_STORAGE, SimpleStorageManager::create)
        .build();
  }
}
