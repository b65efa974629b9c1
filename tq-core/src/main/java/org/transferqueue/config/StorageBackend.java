package org.transferqueue.config;

import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The storage backends this implementation provides, by their upstream configuration names ({@code
 * backend.storage_backend}).
 */
public enum StorageBackend {
  /** In-memory storage units with a modulo router; the default. */
  SIMPLE_STORAGE("SimpleStorage"),
  /** The key-value object store with Mooncake Store's semantics. */
  MOONCAKE_STORE("MooncakeStore");

  /** Upstream backends that exist there but not here; named in the error for a clearer message. */
  static final Set<String> UPSTREAM_ONLY = Set.of("Yuanrong", "RayStore");

  private final String configName;

  StorageBackend(String configName) {
    this.configName = configName;
  }

  /**
   * The name used in configuration files, for example {@code SimpleStorage}.
   *
   * @return the upstream name
   */
  public String configName() {
    return configName;
  }

  /**
   * Looks a backend up by its configuration name (exact, case-sensitive, as upstream).
   *
   * @param name the configured name
   * @return the backend
   * @throws IllegalArgumentException with a reason phrased to follow the value when the name is not
   *     a backend of this implementation
   */
  public static StorageBackend fromConfigName(String name) {
    for (StorageBackend b : values()) {
      if (b.configName.equals(name)) {
        return b;
      }
    }
    String supported =
        Arrays.stream(values()).map(StorageBackend::configName).collect(Collectors.joining(", "));
    if (UPSTREAM_ONLY.contains(name)) {
      throw new IllegalArgumentException(
          "is an upstream backend that is not available in this build (available: "
              + supported
              + ")");
    }
    throw new IllegalArgumentException("is not a storage backend (one of " + supported + ")");
  }
}
