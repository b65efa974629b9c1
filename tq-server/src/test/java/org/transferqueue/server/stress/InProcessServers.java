package org.transferqueue.server.stress;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.server.bench.BenchBackend;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.transport.TransportConfig;

/**
 * The servers {@code tq up} starts, in the test JVM on ephemeral loopback ports: a controller and
 * two storage units (SimpleStorage) or two store nodes (MooncakeStore), and the configuration a
 * client connects with, every byte over TCP or through the servers' shared memory. Closing stops
 * them in reverse order.
 */
final class InProcessServers implements AutoCloseable {
  private static final long SEGMENT_BYTES = 256L << 20;

  private final List<AutoCloseable> started = new ArrayList<>();
  private final List<AutoCloseable> storageServers = new ArrayList<>();
  private final List<LongSupplier> segmentBytes = new ArrayList<>();
  private final TqConfig clientConfig;

  InProcessServers(BenchBackend backend, BufferAllocator allocator) {
    this(backend, allocator, false);
  }

  /**
   * Starts the servers.
   *
   * @param backend the storage servers' backend
   * @param allocator the servers' allocator
   * @param sharedMemory false: every byte over TCP; true: the servers and the client configuration
   *     use shared memory for bodies of every size ({@code shared_memory_min_bytes: 1})
   */
  InProcessServers(BenchBackend backend, BufferAllocator allocator, boolean sharedMemory) {
    TransportConfig loopback =
        TransportConfig.builder()
            .bindHost("127.0.0.1")
            .bindPort(0)
            .sharedMemory(sharedMemory)
            .sharedMemoryMinBytes(1)
            .build();
    try {
      Controller controller = new Controller(ControllerOptions.defaults());
      ControllerServer controllerServer = ControllerServer.start(controller, loopback, allocator);
      segmentBytes.add(() -> controllerServer.sharedMemoryStats().segmentBytes());
      started.add(controllerServer);
      List<HostPort> addresses = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        if (backend == BenchBackend.SIMPLE_STORAGE) {
          StorageUnit unit =
              new StorageUnit("TQ_STORAGE_UNIT_" + i, OptionalLong.empty(), allocator, 1L << 30);
          started.add(unit);
          StorageUnitServer server = StorageUnitServer.start(unit, loopback, allocator);
          started.add(server);
          storageServers.add(server);
          addresses.add(server.address());
          segmentBytes.add(() -> server.sharedMemoryStats().segmentBytes());
        } else {
          SharedMemoryPool pool =
              StoreNodeServer.newSharedMemoryPool(loopback, allocator, "stress-node-" + i);
          if (pool != null) {
            started.add(pool);
          }
          EmbeddedObjectStore engine =
              EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT, pool);
          started.add(engine);
          int rc =
              engine.setup(
                  StoreConfig.builder()
                      .localHostname("stress-node-" + i)
                      .globalSegmentSize(SEGMENT_BYTES)
                      .localBufferSize(SEGMENT_BYTES)
                      .build());
          if (rc != 0) {
            throw new IllegalStateException("store node setup returned " + rc);
          }
          StoreNodeServer server =
              StoreNodeServer.start(engine, loopback, allocator, StorageRequests.NOOP, pool);
          started.add(server);
          storageServers.add(server);
          addresses.add(server.address());
          segmentBytes.add(() -> server.sharedMemoryStats().segmentBytes());
        }
      }
      String list = addresses.stream().map(a -> "\"" + a + "\"").collect(Collectors.joining(", "));
      clientConfig =
          TqConfigs.parse(
              "backend:\n  storage_backend: "
                  + backend.configName()
                  + "\n  MooncakeStore:\n    global_segment_size: "
                  + SEGMENT_BYTES
                  + "\n    local_buffer_size: "
                  + SEGMENT_BYTES
                  + "\nnetwork:\n  shared_memory: "
                  + sharedMemory
                  + "\n  shared_memory_min_bytes: 1\n  controller_address: \""
                  + controllerServer.address()
                  + "\"\n  "
                  + (backend == BenchBackend.SIMPLE_STORAGE
                      ? "storage_unit_addresses"
                      : "store_node_addresses")
                  + ": ["
                  + list
                  + "]\n");
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** Stops the server of storage unit or store node {@code i}; its data stays until close. */
  void stopStorageServer(int i) throws Exception {
    storageServers.get(i).close();
  }

  /**
   * The bytes of the servers' shared-memory segments, which their allocator counts too (a pool
   * keeps its first segment once created).
   */
  long sharedMemorySegmentBytes() {
    return segmentBytes.stream().mapToLong(LongSupplier::getAsLong).sum();
  }

  TqConfig clientConfig() {
    return clientConfig;
  }

  @Override
  public void close() {
    for (int i = started.size() - 1; i >= 0; i--) {
      try {
        started.get(i).close();
      } catch (Exception e) {
        throw new IllegalStateException("closing " + started.get(i) + " failed", e);
      }
    }
    started.clear();
  }
}
