package org.transferqueue.client;

import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.transferqueue.Clock;
import org.transferqueue.CloseStack;
import org.transferqueue.Closeables;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.Durability;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.metrics.ControllerRequests;
import org.transferqueue.metrics.MetricsEndpoint;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.Samplers;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.system.ControllerNotifier;
import org.transferqueue.system.MetricsCollector;
import org.transferqueue.system.SystemMetrics;

/**
 * An embedded TransferQueue: controller, storage and clients in this JVM, started from one
 * configuration and owned by whoever started it.
 *
 * <pre>{@code
 * try (TransferQueueSystem tq = TransferQueueSystem.start(TqConfig.defaults())) {
 *   BatchMeta written = tq.client().put(batch, "train");
 *   tq.kv().put("sample_0", "train", Map.of("input_ids", ids), Map.of("score", 0.9));
 * }
 * }</pre>
 *
 * <p>Closing the system stops the clients, the storage (releasing all its memory) and the
 * controller, in that order; it is idempotent. Thread-safe.
 */
public final class TransferQueueSystem implements AutoCloseable {
  private final TqConfig config;
  private final RootAllocator allocator;
  private final Controller controller;
  private final StorageManager storage;
  // The view of storage every client of this system uses: measured when metrics are on.
  private final StorageManager clientStorage;
  private final ControllerRequests requests;
  private final LocalMetaClient client;
  private final KvApi kv;
  private final SystemMetrics metrics;
  private final MetricsEndpoint metricsEndpoint;
  private final Clock clock;
  private final Object checkpointLock = new Object();
  private final AtomicBoolean closed = new AtomicBoolean();

  private TransferQueueSystem(Builder builder, RootAllocator allocator, CloseStack cleanup) {
    this.config = builder.config;
    this.clock = builder.clock;
    this.allocator = allocator;
    Sampler sampler =
        builder.sampler != null ? builder.sampler : Samplers.create(config.controller());
    // With controller.durability: journal, the embedded controller recovers from and journals
    // into <durability.journal_dir>/controller, as `tq controller` does.
    this.controller =
        cleanup.push(
            config.controller().durability() == Durability.JOURNAL
                ? Controller.recover(
                    ConfigMapper.controller(config),
                    sampler,
                    builder.clock,
                    ConfigMapper.journal(config.durability(), "controller"))
                : new Controller(ConfigMapper.controller(config), sampler, builder.clock));
    this.metrics =
        builder.meterRegistry == null ? null : new SystemMetrics(builder.meterRegistry, clock);
    this.requests = metrics == null ? ControllerRequests.NOOP : metrics.controllerRequests();
    this.storage =
        builder.startStorage(
            new StorageContext(allocator, new ControllerNotifier(controller, requests)),
            () -> StorageBackends.builtIn(config),
            cleanup);
    // Closed before the storage it measures.
    cleanup.push(metrics);
    if (metrics != null) {
      this.clientStorage = metrics.attach(controller, storage);
      metrics.start(config.metrics().collectInterval());
    } else {
      this.clientStorage = storage;
    }
    MetricsEndpoint startedEndpoint = null;
    if (config.metrics().enabled() && builder.endpointFactory != null) {
      MetricsCollector collector = metrics == null ? null : metrics.collector();
      startedEndpoint =
          cleanup.push(
              builder.endpointFactory.start(
                  config.network().bindHost(),
                  config.metrics().port(),
                  collector == null
                      ? () -> {}
                      : () -> collector.refresh(MetricsCollector.SCRAPE_REFRESH_DEADLINE)));
      controller.publishMetricsEndpoint(startedEndpoint.address());
    }
    this.metricsEndpoint = startedEndpoint;
    this.client = newMeteredClient();
    this.kv = new KvApi(client, builder.missingKeyPolicy);
  }

  /**
   * Starts an embedded system with the built-in backends.
   *
   * @param config the configuration
   * @return the running system; the caller owns it and must close it
   * @throws TqException {@code INVALID_CONFIGURATION} naming a key whose value cannot be used;
   *     nothing stays running then
   */
  public static TransferQueueSystem start(TqConfig config) {
    return builder().config(config).start();
  }

  /**
   * Connects to a system started elsewhere (for example by {@code tq controller} and the storage
   * roles) whose addresses are in the configuration; the returned client does not own it.
   *
   * @param config the configuration; {@code network.controller_address} must be set
   * @return a non-owning client; closing it releases only the client
   * @throws org.transferqueue.TqException as described on {@link TqClient#connect(TqConfig)}
   */
  public static TqClient connect(TqConfig config) {
    return TqClient.connect(config);
  }

  /**
   * Starts building a system, for settings beyond the configuration file (a sampler instance, a
   * clock, extra storage backends).
   *
   * @return a builder with {@link TqConfig#defaults()}
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The low-level, metadata-based client of this system.
   *
   * @return the client; owned by the system (closing it has no effect on the system)
   */
  public MetaClient client() {
    return client;
  }

  /**
   * Creates another client of this system, for a component that manages its own client's lifetime.
   * Closing it releases only that client: the system and its other clients keep running. Close it
   * before the system; the system does not track it. Its requests are measured in the system's
   * {@link #metrics()} exactly as those of {@link #client()}.
   *
   * @return a new client the caller owns and closes
   * @throws TqException {@code CLOSED} when the system is closed
   */
  public MetaClient newClient() {
    if (closed.get()) {
      throw new TqException(ErrorCode.CLOSED, "the system is closed");
    }
    return newMeteredClient();
  }

  private LocalMetaClient newMeteredClient() {
    return new LocalMetaClient(controller, clientStorage, allocator, requests);
  }

  /**
   * The key-value API of this system.
   *
   * @return the API; owned by the system
   */
  public KvApi kv() {
    return kv;
  }

  /**
   * The effective configuration.
   *
   * @return the configuration the system runs with
   */
  public TqConfig config() {
    return config;
  }

  /**
   * The allocator behind storage and the batches that reads return; its statistics show the memory
   * the system holds.
   *
   * @return the system's root allocator
   */
  public BufferAllocator allocator() {
    return allocator;
  }

  /**
   * The embedded controller, for statistics and checkpoint state.
   *
   * @return the controller
   */
  public Controller controller() {
    return controller;
  }

  /**
   * The storage manager of the configured backend.
   *
   * @return the storage manager
   */
  public StorageManager storage() {
    return storage;
  }

  /**
   * The address of the metrics endpoint.
   *
   * @return {@code host:port} while an endpoint runs ({@code metrics.enabled} and an endpoint
   *     factory given to the builder); empty otherwise
   */
  public Optional<String> metricsEndpoint() {
    return Optional.ofNullable(metricsEndpoint).map(MetricsEndpoint::address);
  }

  /**
   * The meters of this system.
   *
   * @return the metrics when a meter registry was given to the builder; empty otherwise
   */
  public Optional<SystemMetrics> metrics() {
    return Optional.ofNullable(metrics);
  }

  /**
   * Saves the controller's state and, where the backend supports it, the stored data into a
   * checkpoint directory (format in {@code docs/CHECKPOINT.md}).
   *
   * <p>Everything is written into a temporary sibling directory, synced to disk and renamed into
   * place; an existing checkpoint at {@code directory} is replaced only once the new one is
   * complete. A failed save leaves no partial directory behind. SimpleStorage keeps its data only
   * in memory, so it is always saved ({@code includeStorage=false} is ignored with a warning);
   * MooncakeStore saves its objects when {@code includeStorage} is true; a backend without
   * checkpoints saves only the controller and the result says {@code storageSaved=false}. Requests
   * running during a save may or may not be included; quiesce producers for a consistent
   * checkpoint.
   *
   * @param directory the checkpoint directory; its parent is created if needed
   * @param includeStorage whether to save stored data
   * @return what was saved
   * @throws TqException {@code CLOSED} after {@link #close()}, {@code STORAGE_ERROR} naming the
   *     path on an I/O error, {@code INVALID_ARGUMENT} for a tag value that cannot be stored
   */
  public CheckpointResult saveCheckpoint(Path directory, boolean includeStorage) {
    return saveCheckpoint(directory, includeStorage, Map.of());
  }

  /**
   * Saves a checkpoint as {@link #saveCheckpoint(Path, boolean)} does, with the caller's metadata
   * (upstream's {@code save_checkpoint(..., metadata=)}: a training step, a loss, a run id) in the
   * manifest; {@link #loadCheckpoint} returns it.
   *
   * <pre>{@code
   * tq.saveCheckpoint(dir, true, Map.of("iteration", 42, "loss", 0.5));
   * Map<String, Object> meta = tq.loadCheckpoint(dir); // {iteration=42, loss=0.5}
   * }</pre>
   *
   * @param directory the checkpoint directory; its parent is created if needed
   * @param includeStorage whether to save stored data
   * @param metadata plain values by name (null, booleans, numbers, strings, byte arrays, lists,
   *     maps); integers come back as {@code Long}, floating-point numbers as {@code Double}
   * @return what was saved, with the metadata
   * @throws TqException as {@link #saveCheckpoint(Path, boolean)}; {@code INVALID_ARGUMENT} for
   *     metadata that is not plain values, before anything is written
   */
  public CheckpointResult saveCheckpoint(
      Path directory, boolean includeStorage, Map<String, ?> metadata) {
    Objects.requireNonNull(directory, "directory");
    synchronized (checkpointLock) {
      ensureOpen();
      return Checkpoints.save(directory, includeStorage, metadata, controller, storage, clock);
    }
  }

  /**
   * Replaces the controller's whole state and the stored data by a checkpoint: partitions created
   * since disappear. Everything is validated first (manifest, sizes and CRC32C checksums, the
   * controller state, the storage files and the unit count), and nothing changes when any of it
   * fails. Meant for a freshly started system with the same backend, unit count and sampler type;
   * requests must not run meanwhile.
   *
   * @param directory a directory written by {@link #saveCheckpoint}
   * @return the caller's metadata saved with the checkpoint, empty for none
   * @throws TqException {@code NOT_FOUND} for a missing directory or manifest; {@code CORRUPT_DATA}
   *     for a missing, truncated or altered file; {@code INVALID_ARGUMENT} for a foreign or
   *     unsupported checkpoint (bad magic, format version, backend or unit count); {@code
   *     INVALID_CONFIGURATION} for another sampler type; {@code CLOSED} after {@link #close()}
   */
  public Map<String, Object> loadCheckpoint(Path directory) {
    Objects.requireNonNull(directory, "directory");
    synchronized (checkpointLock) {
      ensureOpen();
      return Checkpoints.load(directory, controller, storage);
    }
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new TqException(ErrorCode.CLOSED, "the TransferQueue system is closed");
    }
  }

  /** Stops clients, storage and controller and releases all memory. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    List<AutoCloseable> order = new ArrayList<>();
    if (metricsEndpoint != null) {
      order.add(metricsEndpoint);
    }
    if (metrics != null) {
      order.add(metrics);
    }
    order.addAll(List.of(kv, client, storage, controller, allocator));
    Closeables.closeAll(order);
  }

  /**
   * Creates a built-in sampler from its configuration name with its default arguments, or a user
   * sampler from a class name; {@link Samplers#create(String, Map)} takes arguments too.
   *
   * @param name {@code SequentialSampler}, {@code GRPOGroupNSampler}, {@code RankAwareSampler},
   *     {@code SeqlenBalancedSampler} or a fully qualified class name
   * @return a new sampler
   * @throws TqException {@code INVALID_CONFIGURATION} naming the value when no sampler fits
   */
  public static Sampler samplerNamed(String name) {
    return Samplers.create(name, Map.of());
  }

  /**
   * Settings of a {@link TransferQueueSystem} beyond its configuration: those of every client
   * builder, and the system's own (sampler, clock, meters, metrics endpoint).
   */
  public static final class Builder extends AbstractClientBuilder<Builder> {
    private Sampler sampler;
    private Clock clock = Clock.SYSTEM;
    private MeterRegistry meterRegistry;
    private MetricsEndpoint.Factory endpointFactory;

    private Builder() {}

    @Override
    Builder self() {
      return this;
    }

    /**
     * Records the system's meters (controller requests and gauges, storage units) in this registry.
     * Without one, nothing is measured.
     *
     * @param registry the registry; not closed by the system
     * @return this builder
     */
    public Builder meterRegistry(MeterRegistry registry) {
      this.meterRegistry = Objects.requireNonNull(registry, "registry");
      return this;
    }

    /**
     * Sets how the metrics endpoint is started when {@code metrics.enabled} is true: on {@code
     * network.bind_host} and {@code metrics.port}. The system owns the endpoint and stops it on
     * close.
     *
     * @param factory starts the endpoint (the Prometheus endpoint of {@code tq-server})
     * @return this builder
     */
    public Builder metricsEndpoint(MetricsEndpoint.Factory factory) {
      this.endpointFactory = Objects.requireNonNull(factory, "factory");
      return this;
    }

    /**
     * Uses this sampler instance instead of the one named by {@code controller.sampler}.
     *
     * @param sampler the sampler
     * @return this builder
     */
    public Builder sampler(Sampler sampler) {
      this.sampler = Objects.requireNonNull(sampler, "sampler");
      return this;
    }

    /**
     * Sets the controller's time source (for tests).
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Starts the system.
     *
     * @return the running system; the caller owns it
     */
    public TransferQueueSystem start() {
      if (backends == null
          && config.backend().storageBackend() == StorageBackend.MOONCAKE_STORE
          && !config.backend().mooncakeStore().autoInit()) {
        throw new TqException(
            ErrorCode.INVALID_CONFIGURATION,
            MooncakeStoreConfig.AUTO_INIT_PROP_NAME
                + ": false says the object store runs elsewhere, but an embedded system starts its"
                + " own; connect to the store nodes with TransferQueueSystem.connect(config)");
      }
      return start(
          "transferqueue",
          (allocator, cleanup) -> new TransferQueueSystem(this, allocator, cleanup));
    }
  }
}
