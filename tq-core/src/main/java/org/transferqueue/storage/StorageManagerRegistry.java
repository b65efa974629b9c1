package org.transferqueue.storage;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The storage backends available to a process, by the names of {@code backend.storage_backend}.
 *
 * <pre>{@code
 * StorageManagerRegistry registry =
 *     StorageManagerRegistry.builder()
 *         .register(
 *             StorageManagerRegistry.SIMPLE_STORAGE,
 *             SimpleStorageManager.factory(SimpleStorageSettings.builder().unitCount(4).build()))
 *         .build();
 * StorageManager manager = registry.create("SimpleStorage", context);
 * }</pre>
 *
 * <p>Immutable and thread-safe once built.
 */
public final class StorageManagerRegistry {
  /** The default backend: storage units with a hash router. */
  public static final String SIMPLE_STORAGE = "SimpleStorage";

  /** The Mooncake-model object store behind the key-value storage manager. */
  public static final String MOONCAKE_STORE = "MooncakeStore";

  /** The Yuanrong data system behind the key-value storage manager. */
  public static final String YUANRONG = "Yuanrong";

  /** The Ray object store behind the key-value storage manager. */
  public static final String RAY_STORE = "RayStore";

  private final Map<String, StorageManagerFactory> factories;

  private StorageManagerRegistry(Map<String, StorageManagerFactory> factories) {
    this.factories = Collections.unmodifiableMap(new LinkedHashMap<>(factories));
  }

  /**
   * Starts an empty registry.
   *
   * @return a builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The registered backend names, in registration order.
   *
   * @return the names
   */
  public Set<String> names() {
    return factories.keySet();
  }

  /**
   * Creates a manager of the named backend.
   *
   * @param name a registered backend name, such as {@code SimpleStorage}
   * @param context allocator, notifier and configuration
   * @return a manager the caller owns and must close
   * @throws TqException with {@code INVALID_CONFIGURATION} listing the supported names if {@code
   *     name} is not registered
   */
  public StorageManager create(String name, StorageContext context) {
    StorageManagerFactory factory = factories.get(name);
    if (factory == null) {
      throw new TqException(
          ErrorCode.INVALID_CONFIGURATION,
          "backend.storage_backend='"
              + name
              + "' is not a supported storage manager; supported: "
              + factories.keySet());
    }
    return Objects.requireNonNull(factory.create(context), "factory of " + name + " returned null");
  }

  /** Collects factories; later registrations of a name are rejected. */
  public static final class Builder {
    private final Map<String, StorageManagerFactory> factories = new LinkedHashMap<>();

    private Builder() {}

    /**
     * Registers a backend.
     *
     * @param name the backend name
     * @param factory creates its managers
     * @return this builder
     * @throws TqException with {@code DUPLICATE_KEY} if the name is already registered, {@code
     *     INVALID_ARGUMENT} for a blank name
     */
    public Builder register(String name, StorageManagerFactory factory) {
      Objects.requireNonNull(factory, "factory");
      if (name == null || name.isBlank()) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "storage backend name is blank: '" + name + "'");
      }
      if (factories.putIfAbsent(name, factory) != null) {
        throw new TqException(
            ErrorCode.DUPLICATE_KEY, "storage backend '" + name + "' is already registered");
      }
      return this;
    }

    /**
     * Builds the registry.
     *
     * @return an immutable registry
     */
    public StorageManagerRegistry build() {
      return new StorageManagerRegistry(factories);
    }
  }
}
