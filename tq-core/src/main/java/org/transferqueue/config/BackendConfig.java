package org.transferqueue.config;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * Storage backend selection and the settings of each backend (YAML section {@code backend}). Only
 * the selected backend's settings are used; the others are still validated, so a typo never waits
 * until someone switches backends.
 *
 * @param storageBackend the selected backend ({@code backend.storage_backend})
 * @param simpleStorage the SimpleStorage settings
 * @param mooncakeStore the object-store client settings
 * @param yuanrong upstream's Yuanrong settings, validated but unused: this build does not provide
 *     that backend
 */
public record BackendConfig(
    StorageBackend storageBackend,
    SimpleStorageConfig simpleStorage,
    MooncakeStoreConfig mooncakeStore,
    YuanrongConfig yuanrong) {

  /** Key of {@link #storageBackend()}. */
  public static final String STORAGE_BACKEND_PROP_NAME = "backend.storage_backend";

  /** Default of {@link #storageBackend()}. */
  public static final StorageBackend STORAGE_BACKEND_DEFAULT = StorageBackend.SIMPLE_STORAGE;

  /**
   * Checks that every component is present (each validated itself when it was built).
   *
   * @throws NullPointerException if a component is null
   */
  public BackendConfig {
    Objects.requireNonNull(storageBackend, "storageBackend");
    Objects.requireNonNull(simpleStorage, "simpleStorage");
    Objects.requireNonNull(mooncakeStore, "mooncakeStore");
    Objects.requireNonNull(yuanrong, "yuanrong");
  }

  /**
   * A builder holding the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Mutable builder of {@link BackendConfig}; not thread-safe. */
  public static final class Builder {
    private StorageBackend storageBackend = STORAGE_BACKEND_DEFAULT;
    private final SimpleStorageConfig.Builder simpleStorage = SimpleStorageConfig.builder();
    private final MooncakeStoreConfig.Builder mooncakeStore = MooncakeStoreConfig.builder();
    private final YuanrongConfig.Builder yuanrong = YuanrongConfig.builder();

    Builder() {}

    /**
     * Sets {@value #STORAGE_BACKEND_PROP_NAME}.
     *
     * @param storageBackend the backend to use
     * @return this builder
     */
    public Builder storageBackend(StorageBackend storageBackend) {
      this.storageBackend = Objects.requireNonNull(storageBackend, "storageBackend");
      return this;
    }

    /**
     * Changes the SimpleStorage settings.
     *
     * @param change applied to the builder, which starts with the defaults
     * @return this builder
     */
    public Builder simpleStorage(Consumer<SimpleStorageConfig.Builder> change) {
      change.accept(simpleStorage);
      return this;
    }

    /**
     * Changes the object-store client settings.
     *
     * @param change applied to the builder, which starts with the defaults
     * @return this builder
     */
    public Builder mooncakeStore(Consumer<MooncakeStoreConfig.Builder> change) {
      change.accept(mooncakeStore);
      return this;
    }

    SimpleStorageConfig.Builder simpleStorageBuilder() {
      return simpleStorage;
    }

    MooncakeStoreConfig.Builder mooncakeStoreBuilder() {
      return mooncakeStore;
    }

    YuanrongConfig.Builder yuanrongBuilder() {
      return yuanrong;
    }

    /**
     * Validates and builds, reporting the problems of both backends together.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public BackendConfig build() {
      Problems p = new Problems();
      SimpleStorageConfig simple = p.collect(simpleStorage::build);
      MooncakeStoreConfig mooncake = p.collect(mooncakeStore::build);
      YuanrongConfig yr = p.collect(yuanrong::build);
      p.throwIfAny();
      return new BackendConfig(storageBackend, simple, mooncake, yr);
    }
  }
}
