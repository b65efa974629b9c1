package org.transferqueue.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.transferqueue.Closeables;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
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
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.transport.SharedMemoryStats;
import org.transferqueue.transport.TransportConfig;

/**
 * A controller and two storage servers of one backend (storage units or store nodes) in the test
 * JVM on ephemeral loopback ports, all allocating from the test's allocator, so that a test can
 * read their accounting while clients in other processes use them; {@link #yaml} is the
 * configuration those clients load. Closing stops them in reverse order.
 */
final class InJvmServers implements AutoCloseable {
  static final long SEGMENT_BYTES = 128L << 20;

  private final StorageBackend backend;
  private final List<AutoCloseable> started = new ArrayList<>();
  private final List<HostPort> storage = new ArrayList<>();
  private final List<Supplier<SharedMemoryStats>> pools = new ArrayList<>();
  private final HostPort controller;
  private Supplier<SharedMemoryStats> controllerPool = () -> SharedMemoryStats.OFF;

  InJvmServers(StorageBackend backend, BufferAllocator allocator, TransportConfig transport) {
    this.backend = backend;
    try {
      ControllerServer controllerServer =
          ControllerServer.start(
              new Controller(ControllerOptions.defaults()), transport, allocator);
      started.add(controllerServer);
      controller = controllerServer.address();
      controllerPool = controllerServer::sharedMemoryStats;
      for (int i = 0; i < 2; i++) {
        if (backend == StorageBackend.SIMPLE_STORAGE) {
          StorageUnit unit =
              new StorageUnit("TQ_STORAGE_UNIT_" + i, OptionalLong.empty(), allocator, 1L << 30);
          started.add(unit);
          StorageUnitServer server = StorageUnitServer.start(unit, transport, allocator);
          started.add(server);
          storage.add(server.address());
          pools.add(server::sharedMemoryStats);
        } else {
          SharedMemoryPool pool =
              StoreNodeServer.newSharedMemoryPool(transport, allocator, "node-" + i);
          if (pool != null) {
            started.add(pool);
          }
          EmbeddedObjectStore engine =
              EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT, pool);
          started.add(engine);
          int rc =
              engine.setup(
                  StoreConfig.builder()
                      .localHostname("node-" + i)
                      .globalSegmentSize(SEGMENT_BYTES)
                      .localBufferSize(SEGMENT_BYTES)
                      .build());
          if (rc != 0) {
            throw new IllegalStateException("store node setup returned " + rc);
          }
          StoreNodeServer server =
              StoreNodeServer.start(engine, transport, allocator, StorageRequests.NOOP, pool);
          started.add(server);
          storage.add(server.address());
          pools.add(server::sharedMemoryStats);
        }
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** The shared-memory statistics of each storage server, in address order. */
  List<SharedMemoryStats> sharedMemory() {
    return pools.stream().map(Supplier::get).toList();
  }

  /**
   * The bytes of every server's shared-memory segments (controller included), which their allocator
   * counts too; a pool keeps emptied segments for reuse.
   */
  long segmentBytes() {
    return controllerPool.get().segmentBytes()
        + sharedMemory().stream().mapToLong(SharedMemoryStats::segmentBytes).sum();
  }

  /** The storage servers' addresses. */
  List<HostPort> storage() {
    return storage;
  }

  /**
   * The configuration of a client of these servers.
   *
   * @param network further lines of the {@code network:} section, each indented by two spaces
   */
  String yaml(String network) {
    String list = storage.stream().map(a -> "\"" + a + "\"").collect(Collectors.joining(", "));
    return "backend:\n  storage_backend: "
        + backend.configName()
        + "\n  MooncakeStore:\n    global_segment_size: "
        + SEGMENT_BYTES
        + "\n    local_buffer_size: "
        + SEGMENT_BYTES
        + "\nnetwork:\n  controller_address: \""
        + controller
        + "\"\n  "
        + (backend == StorageBackend.SIMPLE_STORAGE
            ? "storage_unit_addresses"
            : "store_node_addresses")
        + ": ["
        + list
        + "]\n"
        + network;
  }

  @Override
  public void close() {
    List<AutoCloseable> order = new ArrayList<>(started.reversed());
    started.clear();
    Closeables.closeAll(order);
  }
}
