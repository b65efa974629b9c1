package org.transferqueue.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The whole configuration of a TransferQueue system: one immutable, validated value that the
 * embedded system, the server roles and the command line start from.
 *
 * <p>Sections mirror the YAML file ({@code config/tq.yaml} in the repository): {@code metrics},
 * {@code logging}, {@code controller}, {@code backend} (with {@code SimpleStorage} and {@code
 * MooncakeStore}), {@code storage}, {@code client}, {@code memory} and {@code network}. Build one
 * with {@link #builder()}; its {@link Builder#build()} validates every value once and throws a
 * {@link ConfigException} that lists every problem with its key and value.
 *
 * <pre>{@code
 * TqConfig config =
 *     TqConfig.builder()
 *         .controller(c -> c.pollingMode(true))
 *         .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(4)))
 *         .applyEnvironment(System.getenv())
 *         .build();
 * }</pre>
 *
 * @param metrics the {@code metrics} section
 * @param logging the {@code logging} section
 * @param controller the {@code controller} section
 * @param backend the {@code backend} section
 * @param storage the {@code storage} section
 * @param client the {@code client} section
 * @param memory the {@code memory} section
 * @param network the {@code network} section
 * @param durability the {@code durability} section (the journals of the roles that keep one)
 */
public record TqConfig(
    MetricsConfig metrics,
    LoggingConfig logging,
    ControllerConfig controller,
    BackendConfig backend,
    StorageConfig storage,
    ClientConfig client,
    MemoryConfig memory,
    NetworkConfig network,
    DurabilityConfig durability) {

  /**
   * Checks the settings that span sections (each section validated itself when it was built).
   *
   * @throws NullPointerException if a section is null
   * @throws ConfigException naming each inconsistent key and value
   */
  public TqConfig {
    Objects.requireNonNull(metrics, "metrics");
    Objects.requireNonNull(logging, "logging");
    Objects.requireNonNull(controller, "controller");
    Objects.requireNonNull(backend, "backend");
    Objects.requireNonNull(storage, "storage");
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(memory, "memory");
    Objects.requireNonNull(network, "network");
    Objects.requireNonNull(durability, "durability");
    Problems p = new Problems();
    crossCheck(p, backend, network);
    p.throwIfAny();
  }

  /**
   * The settings of this configuration that are valid but have no effect in this build (upstream
   * keys for machinery it does not have, such as a Mooncake master or RDMA), each with the reason;
   * only keys set to something other than their default are listed. Processes started from the
   * configuration log them once at start-up ({@link ConfigWarnings#log}); {@code config/tq.yaml}
   * marks every such key.
   *
   * @return the warnings in the order of {@code config/tq.yaml}; empty for the defaults
   */
  public List<ConfigWarning> warnings() {
    return IneffectiveSettings.of(this);
  }

  private static void crossCheck(Problems p, BackendConfig backend, NetworkConfig network) {
    if (backend.storageBackend() == StorageBackend.MOONCAKE_STORE
        && !backend.mooncakeStore().autoInit()
        && network.storeNodeAddresses().isEmpty()) {
      p.add(
          MooncakeStoreConfig.AUTO_INIT_PROP_NAME,
          false,
          "says the object store runs elsewhere, but "
              + NetworkConfig.STORE_NODE_ADDRESSES_PROP_NAME
              + " lists no store node (set it, or auto_init: true to let a process start its own"
              + " store)");
    }
    List<HostPort> units = network.storageUnitAddresses();
    int numUnits = backend.simpleStorage().numDataStorageUnits();
    if (!units.isEmpty() && units.size() != numUnits) {
      p.add(
          NetworkConfig.STORAGE_UNIT_ADDRESSES_PROP_NAME,
          HostPort.render(units),
          "has "
              + units.size()
              + " addresses but "
              + SimpleStorageConfig.NUM_DATA_STORAGE_UNITS_PROP_NAME
              + " is "
              + numUnits);
    }
    Optional<HostPort> controller = network.controllerAddress();
    if (controller.isPresent()) {
      for (String key :
          List.of(
              NetworkConfig.STORAGE_UNIT_ADDRESSES_PROP_NAME,
              NetworkConfig.STORE_NODE_ADDRESSES_PROP_NAME)) {
        List<HostPort> list =
            key.equals(NetworkConfig.STORAGE_UNIT_ADDRESSES_PROP_NAME)
                ? units
                : network.storeNodeAddresses();
        if (list.contains(controller.get())) {
          p.add(
              key,
              HostPort.render(list),
              "contains " + NetworkConfig.CONTROLLER_ADDRESS_PROP_NAME + " " + controller.get());
        }
      }
    }
    List<HostPort> overlap = new ArrayList<>(units);
    overlap.retainAll(network.storeNodeAddresses());
    if (!overlap.isEmpty()) {
      p.add(
          NetworkConfig.STORE_NODE_ADDRESSES_PROP_NAME,
          HostPort.render(network.storeNodeAddresses()),
          "shares " + overlap + " with " + NetworkConfig.STORAGE_UNIT_ADDRESSES_PROP_NAME);
    }
  }

  /**
   * The configuration with every key at its default.
   *
   * @return the defaults
   */
  public static TqConfig defaults() {
    return builder().build();
  }

  /**
   * A builder holding the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Mutable builder of {@link TqConfig}; not thread-safe. Values can be set through the typed
   * section builders, by dotted key ({@link #set}) or from environment variables ({@link
   * #applyEnvironment}); the last write to a key wins, so apply the file first and the environment
   * last.
   */
  public static final class Builder {
    final MetricsConfig.Builder metrics = MetricsConfig.builder();
    final LoggingConfig.Builder logging = LoggingConfig.builder();
    final ControllerConfig.Builder controller = ControllerConfig.builder();
    final BackendConfig.Builder backend = BackendConfig.builder();
    final StorageConfig.Builder storage = StorageConfig.builder();
    final ClientConfig.Builder client = ClientConfig.builder();
    final MemoryConfig.Builder memory = MemoryConfig.builder();
    final NetworkConfig.Builder network = NetworkConfig.builder();
    final DurabilityConfig.Builder durability = DurabilityConfig.builder();

    Builder() {}

    /**
     * Changes the {@code metrics} section.
     *
     * @param change applied to the section builder
     * @return this builder
     */
    public Builder metrics(Consumer<MetricsConfig.Builder> change) {
      change.accept(metrics);
      return this;
    }

    /**
     * Changes the {@code logging} section.
     *
     * @param change applied to the section builder
     * @return this builder
     */
    public Builder logging(Consumer<LoggingConfig.Builder> change) {
      change.accept(logging);
      return this;
    }

    /**
     * Changes the {@code controller} section.
     *
     * @param change applied to the section builder
     * @return this builder
     */
    public Builder controller(Consumer<ControllerConfig.Builder> change) {
      change.accept(controller);
      return this;
    }

    /**
     * Changes the {@code backend} section.
     *
     * @param change applied to the section builder
     * @return this builder
     */
    public Builder backend(Consumer<BackendConfig.Builder> change) {
      change.accept(backend);
      return this;
    }

    /**
     * Changes the {@code storage} section.
     *
     * @param change applied to the section builder
     * @return this builder
     */
    public Builder storage(Consumer<StorageConfig.Builder> change) {
      change.accept(storage);
      return this;
    }

    /**
     * Changes the {@code client} section.
     *
     * @param change applied to the section builder
     * @return this builder
     */
    public Builder client(Consumer<ClientConfig.Builder> change) {
      change.accept(client);
      return this;
    }

    /**
     * Changes the {@code memory} section.
     *
     * @param change applied to the section builder
     * @return this builder
     */
    public Builder memory(Consumer<MemoryConfig.Builder> change) {
      change.accept(memory);
      return this;
    }

    /**
     * Changes the {@code network} section.
     *
     * @param change applied to the section builder
     * @return this builder
     */
    public Builder network(Consumer<NetworkConfig.Builder> change) {
      change.accept(network);
      return this;
    }

    /**
     * Changes the {@code durability} section.
     *
     * @param change applied to the section builder
     * @return this builder
     */
    public Builder durability(Consumer<DurabilityConfig.Builder> change) {
      change.accept(durability);
      return this;
    }

    /**
     * Sets one key from a structured value as a YAML reader produces it ({@code Boolean}, {@code
     * Integer}, {@code Long}, {@code Double}, {@code String}, {@code List}, or null).
     *
     * @param key the full dotted key, for example {@code controller.polling_mode}
     * @param value the value
     * @return this builder
     * @throws ConfigException naming the key and value when the key is unknown or the value has the
     *     wrong type (ranges are checked by {@link #build()})
     */
    public Builder set(String key, Object value) {
      ConfigKey<?> k =
          ConfigKey.forKey(key)
              .orElseThrow(
                  () ->
                      new ConfigException(
                          null, List.of(ConfigProblem.of(key, value, "is not a known key"))));
      k.apply(this, value);
      return this;
    }

    /**
     * Applies the environment variables of {@link ConfigKey#environmentVariables()} that are
     * present in {@code environment}, over whatever was set before. Values are text: numbers,
     * {@code true}/{@code false}, durations as seconds or with a unit ({@code 500ms}), address
     * lists separated by commas; an empty value clears a key that may be null.
     *
     * @param environment the variables, normally {@code System.getenv()}; tests pass their own map
     * @return this builder
     * @throws ConfigException naming each variable, its key and its value when a value cannot be
     *     read
     */
    public Builder applyEnvironment(Map<String, String> environment) {
      Problems p = new Problems();
      for (Map.Entry<String, ConfigKey<?>> e : ConfigKey.environmentVariables().entrySet()) {
        String text = environment.get(e.getKey());
        if (text != null) {
          ConfigKey<?> key = e.getValue();
          p.collect(
              () -> {
                key.applyText(this, text, e.getKey());
                return key;
              });
        }
      }
      p.throwIfAny();
      return this;
    }

    /**
     * Validates every section and the settings that span sections, reporting all problems at once.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public TqConfig build() {
      Problems p = new Problems();
      MetricsConfig m = p.collect(metrics::build);
      LoggingConfig l = p.collect(logging::build);
      ControllerConfig c = p.collect(controller::build);
      BackendConfig b = p.collect(backend::build);
      StorageConfig s = p.collect(storage::build);
      ClientConfig cl = p.collect(client::build);
      MemoryConfig mem = p.collect(memory::build);
      NetworkConfig n = p.collect(network::build);
      DurabilityConfig d = p.collect(durability::build);
      p.throwIfAny();
      // Sections are valid here; the constructor checks the settings that span them.
      return new TqConfig(m, l, c, b, s, cl, mem, n, d);
    }
  }
}
