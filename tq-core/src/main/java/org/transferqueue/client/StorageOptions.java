package org.transferqueue.client;

import java.util.LinkedHashMap;
import java.util.Map;
import org.transferqueue.config.SimpleStorageConfig;
import org.transferqueue.config.TqConfig;

/** The backend options handed to a storage manager factory, taken from the configuration. */
final class StorageOptions {
  private StorageOptions() {}

  static Map<String, Object> from(TqConfig config) {
    Map<String, Object> options = new LinkedHashMap<>();
    switch (config.backend().storageBackend()) {
      case SIMPLE_STORAGE -> {
        SimpleStorageConfig simple = config.backend().simpleStorage();
        options.put("num_data_storage_units", (long) simple.numDataStorageUnits());
        if (simple.totalStorageSize().isPresent()) {
          options.put("total_storage_size", simple.totalStorageSize().getAsLong());
        }
        config
            .memory()
            .storageUnitLimitBytes()
            .ifPresent(limit -> options.put("unit_limit_bytes", limit));
      }
      case MOONCAKE_STORE -> options.put("config", config.backend().mooncakeStore());
    }
    return options;
  }
}
