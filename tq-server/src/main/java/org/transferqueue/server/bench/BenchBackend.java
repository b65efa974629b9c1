package org.transferqueue.server.bench;

import java.util.Arrays;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.storage.StorageManagerRegistry;

/** The storage backends the harness can measure, by their upstream configuration names. */
public enum BenchBackend {
  /** Storage units of off-heap cells ({@code backend.storage_backend: SimpleStorage}). */
  SIMPLE_STORAGE(StorageManagerRegistry.SIMPLE_STORAGE),
  /** The Mooncake-model object store ({@code backend.storage_backend: MooncakeStore}). */
  MOONCAKE_STORE(StorageManagerRegistry.MOONCAKE_STORE);

  private final String configName;

  BenchBackend(String configName) {
    this.configName = configName;
  }

  /**
   * The value of {@code backend.storage_backend} that selects this backend.
   *
   * @return the configuration name
   */
  public String configName() {
    return configName;
  }

  /**
   * The backends named by a command-line value.
   *
   * @param value a configuration name in any case, or {@code all}
   * @return the backends, in declaration order for {@code all}
   * @throws TqException {@code INVALID_ARGUMENT} naming the value and the choices
   */
  public static List<BenchBackend> parse(String value) {
    if (value.equalsIgnoreCase("all")) {
      return List.of(values());
    }
    for (BenchBackend backend : values()) {
      if (backend.configName.equalsIgnoreCase(value)) {
        return List.of(backend);
      }
    }
    throw new TqException(
        ErrorCode.INVALID_ARGUMENT,
        "unknown backend '"
            + value
            + "' (choose one of "
            + Arrays.stream(values()).map(BenchBackend::configName).toList()
            + " or all)");
  }
}
