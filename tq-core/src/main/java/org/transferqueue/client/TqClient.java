package org.transferqueue.client;

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
import org.transferqueue.config.HostPort;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.metrics.ControllerRequests;
import org.transferqueue.remote.controller.RemoteController;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.system.ControllerNotifier;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * A non-owning client of a running TransferQueue whose controller runs elsewhere: metadata calls go
 * to the controller at {@code network.controller_address}, data goes straight to storage through
 * this client's storage manager (built from {@code backend.storage_backend} by the registry), whose
 * production notifications go to the remote controller. The controller never sees data.
 *
 * <pre>{@code
 * try (TqClient tq = TqClient.connect(config)) {
 *   tq.kv().put("sample_0", "train", row, Map.of("score", 0.9));
 * }
 * }</pre>
 *
 * <p>Deadlines: every call to the controller ends by {@code client.request_timeout} (a blocking
 * fetch also gets its own wait), every call to a storage unit by {@code
 * backend.SimpleStorage.send_recv_timeout} and every call to a store node by {@code
 * client.request_timeout}; a call past its deadline fails with a {@link
 * org.transferqueue.DeadlineExceededException} ({@code DEADLINE_EXCEEDED}).
 *
 * <p>Closing releases only this client (its storage manager, connections and memory); the
 * controller and the storage servers keep running. Idempotent. Thread-safe.
 */
public final class TqClient implements AutoCloseable {
  private final TqConfig config;
  private final RootAllocator allocator;
  private final TransportClient transport;
  private final RemoteController controller;
  private final StorageManager storage;
  private final LocalMetaClient client;
  private final KvApi kv;
  private final AtomicBoolean closed = new AtomicBoolean();

  private TqClient(Builder builder, HostPort address, RootAllocator allocator, CloseStack cleanup) {
    this.config = builder.config;
    this.allocator = allocator;
    TransportConfig transportConfig = ConfigMapper.controllerClient(config);
    this.transport = cleanup.push(new TransportClient(transportConfig, allocator));
    this.controller =
        new RemoteController(
            transport,
            address,
            transportConfig.defaultCallTimeout(),
            config.controller().getMetadataTimeout());
    // Fail fast with the transport's error (connection refused, wrong token) if unreachable.
    controller.controllerId();
    this.storage =
        builder.startStorage(
            new StorageContext(
                allocator,
                new ControllerNotifier(
                    controller,
                    ControllerRequests.NOOP,
                    config.client().requestTimeout(),
                    Clock.SYSTEM)),
            () -> ConfigMapper.clientBackends(config),
            cleanup);
    this.client = new LocalMetaClient(controller, storage, allocator);
    this.kv = new KvApi(client, builder.missingKeyPolicy);
  }

  /**
   * Connects to the system whose addresses are in the configuration. Data of {@code
   * backend.storage_backend} goes to the storage servers of that backend's addresses ({@code
   * network.storage_unit_addresses} for SimpleStorage, {@code network.store_node_addresses} for
   * MooncakeStore), or, when none are configured, to storage embedded in this client (useful only
   * when one process writes and reads its own data).
   *
   * @param config the configuration; {@code network.controller_address} must be set
   * @return the client, owned by the caller
   * @throws TqException {@link ErrorCode#INVALID_CONFIGURATION} without a controller address; the
   *     transport's error ({@code CONNECTION_FAILED}, {@code UNAUTHENTICATED}, {@code
   *     DEADLINE_EXCEEDED}) when the controller cannot be reached; nothing is left open then
   */
  public static TqClient connect(TqConfig config) {
    return builder().config(config).connect();
  }

  /**
   * A builder for a client with non-default storage backends or policies.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The metadata-level client.
   *
   * @return the client
   */
  public MetaClient client() {
    return client;
  }

  /**
   * The key-value API.
   *
   * @return the API
   */
  public KvApi kv() {
    return kv;
  }

  /**
   * The remote controller this client talks to.
   *
   * @return the controller proxy
   */
  public ControllerApi controller() {
    return controller;
  }

  /**
   * Where the controller's Prometheus endpoint can be scraped, as {@link
   * TransferQueueSystem#metricsEndpoint()} answers in the process that runs the controller.
   *
   * @return {@code host:port} while the controller serves metrics; empty otherwise
   * @throws TqException the transport's error when the controller cannot be reached
   */
  public Optional<String> metricsEndpoint() {
    return client.metricsEndpoint();
  }

  /**
   * The configuration this client was connected with.
   *
   * @return the configuration
   */
  public TqConfig config() {
    return config;
  }

  /**
   * The allocator of this client's buffers (data read by {@code getData}, transport buffers).
   *
   * @return the allocator
   */
  public BufferAllocator allocator() {
    return allocator;
  }

  /**
   * Saves the running system's controller state and stored data into a checkpoint directory, in the
   * format of {@link TransferQueueSystem#saveCheckpoint} ({@code docs/CHECKPOINT.md}): the
   * controller's state is fetched over the network and written here, each storage unit or store
   * node writes its own file on its host. The directory must therefore be the same path for this
   * process and every storage unit or node (a shared filesystem, or one host). Written into a
   * temporary sibling directory and renamed into place; a failed save leaves no partial directory.
   * Quiesce producers for a consistent checkpoint. Saves the stored data ({@code includeStorage}
   * true) and no metadata.
   *
   * @param directory the checkpoint directory; its parent is created if needed
   * @return what was saved
   * @throws TqException {@code CLOSED} after {@link #close()}, {@code STORAGE_ERROR} naming the
   *     path on an I/O error, or the error of the controller or a unit
   */
  public CheckpointResult saveCheckpoint(Path directory) {
    return saveCheckpoint(directory, true, Map.of());
  }

  /**
   * Saves a checkpoint as {@link #saveCheckpoint(Path)} does, choosing whether stored data is saved
   * (as {@link TransferQueueSystem#saveCheckpoint(Path, boolean)}: SimpleStorage keeps its data
   * only in memory and is always saved, with a warning; MooncakeStore saves only the controller
   * when false) and adding the caller's metadata to the manifest, which {@link #loadCheckpoint}
   * returns.
   *
   * <pre>{@code
   * tq.saveCheckpoint(dir, false, Map.of("iteration", 42)); // controller only, on MooncakeStore
   * }</pre>
   *
   * @param directory the checkpoint directory; its parent is created if needed
   * @param includeStorage whether to save stored data
   * @param metadata plain values by name (see {@link TransferQueueSystem#saveCheckpoint(Path,
   *     boolean, Map)}); empty for none
   * @return what was saved, with the metadata
   * @throws TqException as {@link #saveCheckpoint(Path)}; {@code INVALID_ARGUMENT} for metadata
   *     that is not plain values, before anything is written
   */
  public CheckpointResult saveCheckpoint(
      Path directory, boolean includeStorage, Map<String, ?> metadata) {
    Objects.requireNonNull(directory, "directory");
    ensureOpen();
    return Checkpoints.save(directory, includeStorage, metadata, controller, storage, Clock.SYSTEM);
  }

  /**
   * Replaces the running system's controller state and stored data by a checkpoint, in two phases
   * across the storage processes. The manifest, every file's size, the small files' CRC32C and the
   * controller state (decoded and restored into a scratch controller here) are checked first; then
   * every storage unit or store node reads its own file on its host, verifies it (structure and
   * CRC32C in one pass) and stages its data without applying it. If any of them fails, all discard
   * what they staged and nothing changed; otherwise the controller's state is replaced and every
   * unit or node swaps its staged data in. Requests must not run meanwhile.
   *
   * @param directory a directory written by {@link #saveCheckpoint} or {@link
   *     TransferQueueSystem#saveCheckpoint}, at the same path for every storage unit or node
   * @return the caller's metadata saved with the checkpoint, empty for none
   * @throws TqException as {@link TransferQueueSystem#loadCheckpoint}
   */
  public Map<String, Object> loadCheckpoint(Path directory) {
    Objects.requireNonNull(directory, "directory");
    ensureOpen();
    return Checkpoints.load(directory, controller, storage);
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new TqException(ErrorCode.CLOSED, "client is closed");
    }
  }

  /** Releases this client: its APIs, storage manager, connections and memory. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    List<AutoCloseable> order = new ArrayList<>(List.of(kv, client, storage, transport, allocator));
    Closeables.closeAll(order);
  }

  @Override
  public String toString() {
    return "TqClient[controller=" + controller.address() + "]";
  }

  /** Builds a {@link TqClient}; the setters are those of every client builder. Not thread-safe. */
  public static final class Builder extends AbstractClientBuilder<Builder> {
    private Builder() {}

    @Override
    Builder self() {
      return this;
    }

    /**
     * Connects.
     *
     * @return the client, owned by the caller
     * @throws TqException as described on {@link TqClient#connect(TqConfig)}
     */
    public TqClient connect() {
      HostPort address =
          config
              .network()
              .controllerAddress()
              .orElseThrow(
                  () ->
                      new TqException(
                          ErrorCode.INVALID_CONFIGURATION,
                          NetworkConfig.CONTROLLER_ADDRESS_PROP_NAME
                              + " is not set: a client can only connect to a controller whose"
                              + " address is configured"));
      return start(
          "transferqueue-client",
          (allocator, cleanup) -> new TqClient(this, address, allocator, cleanup));
    }
  }
}
