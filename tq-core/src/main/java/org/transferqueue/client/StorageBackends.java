package org.transferqueue.client;

import org.transferqueue.config.TqConfig;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.system.ConfigMapper;

/** The storage backends this library ships, by their upstream configuration names. */
public final class StorageBackends {
  private StorageBackends() {}

  /**
   * A registry of the built-in backends with the default settings.
   *
   * @return a registry with {@code SimpleStorage} and {@code MooncakeStore}
   */
  public static StorageManagerRegistry builtIn() {
    return builtIn(TqConfig.defaults());
  }

  /**
   * A registry of the built-in backends, each set up from its section of {@code config} ({@link
   * ConfigMapper#embeddedBackends}).
   *
   * @param config the configuration whose {@code backend} and {@code memory} sections the backends
   *     use
   * @return a registry with {@code SimpleStorage} and {@code MooncakeStore}
   */
  public static StorageManagerRegistry builtIn(TqConfig config) {
    return ConfigMapper.embeddedBackends(config);
  }
}
