package org.transferqueue.client;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.transferqueue.Clock;
import org.transferqueue.Closeables;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.remote.objectstore.RemoteMooncakeStore;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.remote.storage.RemoteSimpleStorage;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerFactory;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.transport.SharedMemoryStats;
import org.transferqueue.transport.TransportConfig;

/**
 * A system deployed as servers in this JVM on 127.0.0.1 ephemeral ports, reached only through a
 * remote client: a {@link ControllerServer}, then {@code backend.SimpleStorage
 * .num_data_storage_units} {@link StorageUnitServer}s (each with the per-unit capacity of the
 * configuration) or {@link #STORE_NODES} {@link StoreNodeServer}s (sharing the configured global
 * segment size), and a {@link TqClient} connected with their addresses, as {@code tq controller},
 * {@code tq storage-unit} and {@code tq store-node} processes would be. The client's storage
 * manager is the one {@link TqClient#connect} would build ({@link RemoteSimpleStorage}, {@link
 * RemoteMooncakeStore}), kept here so that scenarios can read storage directly as they do embedded.
 *
 * <p>The servers allocate from their own allocator, checked for leaks on close, as the client's is.
 * Closing closes the client, the storage servers and their units or engines, the controller server
 * and the servers' allocator, in that order, and rethrows the first failure with the later ones
 * suppressed.
 */
final class LoopbackSystem implements TestSystem {
  /** The number of store nodes a MooncakeStore deployment shards its keys over. */
  static final int STORE_NODES = 2;

  /** {@code network.shared_memory_min_bytes} of a shared-memory system: bodies of every size. */
  static final long SHARED_MEMORY_MIN_BYTES = 1;

  /**
   * {@code network.shared_memory_segment_bytes} of a shared-memory system: 1 MiB, so that a
   * scenario's larger tensors get segments of their own.
   */
  static final long SHARED_MEMORY_SEGMENT_BYTES = 1L << 20;

  /**
   * The controller server's logger, kept (loggers are held weakly) at WARNING: each of the hundreds
   * of loopback systems the suites start would otherwise log its address at INFO.
   */
  private static final java.util.logging.Logger CONTROLLER_SERVER_LOG =
      java.util.logging.Logger.getLogger(ControllerServer.class.getName());

  static {
    CONTROLLER_SERVER_LOG.setLevel(java.util.logging.Level.WARNING);
  }

  private final TqConfig config;
  private final RootAllocator serverAllocator;
  private final List<AutoCloseable> started = new ArrayList<>();
  private final List<StorageUnit> units = new ArrayList<>();
  private final List<StoreNodeServer> storeNodes = new ArrayList<>();
  private final List<Supplier<SharedMemoryStats>> pools = new ArrayList<>();
  private Controller controller;
  private TqClient client;
  private volatile StorageManager storage;
  private final List<TqClient> otherClients = new ArrayList<>();
  private TqConfig clientConfig;
  private boolean closed;

  private LoopbackSystem(TqConfig config) {
    this.config = config;
    this.serverAllocator =
        RootAllocator.builder()
            .name("loopback-servers")
            .limitBytes(config.memory().limitBytes().orElse(Long.MAX_VALUE))
            .leakPolicy(LeakPolicy.THROW)
            .build();
  }

  /**
   * Starts the servers of {@code config} and connects a client to them; with {@code sharedMemory}
   * the servers and the client use shared memory for bodies of every size ({@code
   * network.shared_memory_min_bytes: 1}, 1 MiB segments), without it every byte goes over TCP
   * ({@code network.shared_memory: false}), whatever the configuration says.
   */
  static LoopbackSystem start(
      TqConfig config, MissingKeyPolicy policy, Sampler sampler, boolean sharedMemory) {
    LoopbackSystem system = new LoopbackSystem(config);
    try {
      system.startServers(sampler, policy, sharedMemory);
      return system;
    } catch (RuntimeException | Error e) {
      try {
        system.close();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private void startServers(Sampler sampler, MissingKeyPolicy policy, boolean sharedMemory) {
    NetworkConfig n = config.network();
    TransportConfig transport =
        ConfigMapper.transportBuilder(n)
            .bindHost("127.0.0.1")
            .bindPort(0)
            .sharedMemory(sharedMemory)
            .sharedMemoryMinBytes(SHARED_MEMORY_MIN_BYTES)
            .sharedMemorySegmentBytes(SHARED_MEMORY_SEGMENT_BYTES)
            .build();
    controller =
        new Controller(
            ConfigMapper.controller(config),
            sampler != null
                ? sampler
                : TransferQueueSystem.samplerNamed(config.controller().sampler()),
            Clock.SYSTEM);
    ControllerServer controllerServer =
        ControllerServer.start(controller, transport, serverAllocator);
    started.add(controllerServer);
    pools.add(controllerServer::sharedMemoryStats);
    List<HostPort> unitAddresses = List.of();
    List<HostPort> nodes = List.of();
    if (config.backend().storageBackend() == StorageBackend.MOONCAKE_STORE) {
      nodes = startStoreNodes(transport);
    } else {
      unitAddresses = startStorageUnits(transport);
    }
    NetworkConfig network =
        new NetworkConfig(
            n.bindHost(),
            n.authToken(),
            Optional.of(controllerServer.address()),
            unitAddresses,
            nodes,
            n.connectTimeout(),
            n.maxFrameBytes(),
            sharedMemory,
            n.sharedMemoryLimitBytes(),
            SHARED_MEMORY_SEGMENT_BYTES,
            SHARED_MEMORY_MIN_BYTES);
    TqConfig clientConfig =
        new TqConfig(
            config.metrics(),
            config.logging(),
            config.controller(),
            config.backend(),
            config.storage(),
            config.client(),
            config.memory(),
            network,
            config.durability());
    TransportConfig clientTransport = ConfigMapper.transport(network);
    StorageManagerFactory factory =
        unitAddresses.isEmpty()
            ? RemoteMooncakeStore.factory(
                nodes,
                clientTransport,
                ConfigMapper.store(config.backend().mooncakeStore()),
                ConfigMapper.kvClient(config.backend().mooncakeStore()))
            : RemoteSimpleStorage.factory(unitAddresses, clientTransport);
    String backendName = config.backend().storageBackend().configName();
    StorageManagerRegistry backends =
        StorageManagerRegistry.builder()
            .register(
                backendName,
                context -> {
                  storage = factory.create(context);
                  return storage;
                })
            .build();
    this.clientConfig = clientConfig;
    client =
        TqClient.builder()
            .config(clientConfig)
            .storageBackends(backends)
            .leakPolicy(LeakPolicy.THROW)
            .missingKeyPolicy(policy)
            .connect();
  }

  private List<HostPort> startStorageUnits(TransportConfig transport) {
    List<HostPort> addresses = new ArrayList<>();
    var simple = config.backend().simpleStorage();
    for (int i = 0; i < simple.numDataStorageUnits(); i++) {
      StorageUnit unit =
          new StorageUnit(
              "TQ_STORAGE_UNIT_" + i,
              simple.perUnitCapacity(),
              serverAllocator,
              config.memory().storageUnitLimitBytes().orElse(Long.MAX_VALUE));
      started.add(unit);
      units.add(unit);
      StorageUnitServer server = StorageUnitServer.start(unit, transport, serverAllocator);
      started.add(server);
      pools.add(server::sharedMemoryStats);
      addresses.add(server.address());
    }
    return addresses;
  }

  private List<HostPort> startStoreNodes(TransportConfig transport) {
    List<HostPort> addresses = new ArrayList<>();
    MooncakeStoreConfig mooncake = config.backend().mooncakeStore();
    for (int i = 0; i < STORE_NODES; i++) {
      // With shared memory on, the engine's slabs lie in the node's pool (as tq store-node does).
      String hostname = "store-node-" + i;
      SharedMemoryPool pool =
          StoreNodeServer.newSharedMemoryPool(transport, serverAllocator, hostname);
      if (pool != null) {
        started.add(pool);
      }
      EmbeddedObjectStore engine =
          EmbeddedObjectStore.create(serverAllocator, MasterConfig.DEFAULT, pool);
      started.add(engine);
      int rc =
          engine.setup(
              StoreConfig.builder()
                  .localHostname(hostname)
                  .globalSegmentSize(mooncake.globalSegmentSize() / STORE_NODES)
                  .localBufferSize(mooncake.localBufferSize())
                  .build());
      if (rc != 0) {
        throw new TqException(ErrorCode.STORAGE_ERROR, "store node " + i + " setup: rc=" + rc);
      }
      StoreNodeServer server =
          StoreNodeServer.start(engine, transport, serverAllocator, StorageRequests.NOOP, pool);
      started.add(server);
      pools.add(server::sharedMemoryStats);
      storeNodes.add(server);
      addresses.add(server.address());
    }
    return addresses;
  }

  /**
   * Stops store node {@code i} as a crash would end it for its clients: its server closes and its
   * objects are no longer reachable (the engine's memory is freed when the system closes).
   */
  void stopStoreNode(int i) {
    storeNodes.get(i).close();
  }

  @Override
  public MetaClient client() {
    return client.client();
  }

  @Override
  public KvApi kv() {
    return client.kv();
  }

  @Override
  public MetaClient newClient() {
    TqClient other = TqClient.builder().config(clientConfig).leakPolicy(LeakPolicy.THROW).connect();
    otherClients.add(other);
    return other.client();
  }

  @Override
  public BufferAllocator allocator() {
    return client.allocator();
  }

  @Override
  public TqConfig config() {
    return config;
  }

  @Override
  public ControllerApi controller() {
    return client.controller();
  }

  @Override
  public StorageManager storage() {
    return storage;
  }

  @Override
  public CheckpointResult saveCheckpoint(
      Path directory, boolean includeStorage, Map<String, ?> metadata) {
    return client.saveCheckpoint(directory, includeStorage, metadata);
  }

  @Override
  public Map<String, Object> loadCheckpoint(Path directory) {
    return client.loadCheckpoint(directory);
  }

  @Override
  public long storedBytes() {
    if (units.isEmpty()) {
      // The servers' shared-memory segments count in their allocator too; they hold no object.
      return serverAllocator.allocatedBytes() - sharedMemory().segmentBytes();
    }
    return units.stream().mapToLong(u -> u.stats().allocatedBytes()).sum();
  }

  /**
   * The shared-memory pools of every server (controller, storage units or store nodes) summed.
   *
   * @return the sums; not enabled when shared memory is off
   */
  SharedMemoryStats sharedMemory() {
    return sum(pools);
  }

  /**
   * The shared-memory pools of the store nodes summed (none with SimpleStorage).
   *
   * @return the sums
   */
  SharedMemoryStats storeNodeSharedMemory() {
    return sum(
        storeNodes.stream().<Supplier<SharedMemoryStats>>map(n -> n::sharedMemoryStats).toList());
  }

  private static SharedMemoryStats sum(List<Supplier<SharedMemoryStats>> pools) {
    SharedMemoryStats sum = SharedMemoryStats.OFF;
    for (Supplier<SharedMemoryStats> pool : pools) {
      sum = sum.plus(pool.get());
    }
    return sum;
  }

  /** The remote client the scenario talks through. */
  TqClient remote() {
    return client;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<AutoCloseable> order = new ArrayList<>(otherClients);
    if (client != null) {
      order.add(client);
    }
    order.addAll(started.reversed());
    order.add(serverAllocator);
    started.clear();
    units.clear();
    Closeables.closeAll(order);
  }

  @Override
  public String toString() {
    return "LoopbackSystem["
        + config.backend().storageBackend()
        + (clientConfig != null && clientConfig.network().sharedMemory() ? ", shm" : ", tcp")
        + "]";
  }
}
