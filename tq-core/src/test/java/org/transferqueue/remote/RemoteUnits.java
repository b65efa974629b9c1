package org.transferqueue.remote;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.remote.storage.RemoteSimpleStorageManager;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.transport.TransportConfig;

/** Storage units served on loopback ephemeral ports, and a router over them; closes everything. */
public final class RemoteUnits implements AutoCloseable {
  /** The units, in router order. */
  public final List<StorageUnit> units = new ArrayList<>();

  /** Their servers, in the same order. */
  public final List<StorageUnitServer> servers = new ArrayList<>();

  /** The router over the servers. */
  public final RemoteSimpleStorageManager manager;

  /**
   * Starts {@code count} units and their servers, and a router over them.
   *
   * @param allocator the units' and the transport's allocator
   * @param count how many units
   * @param capacity each unit's sample capacity
   * @param notifier where the router reports productions
   */
  public RemoteUnits(
      BufferAllocator allocator, int count, OptionalLong capacity, ProductionNotifier notifier) {
    this(allocator, count, capacity, notifier, config());
  }

  /**
   * Starts {@code count} units and their servers, and a router over them, all with {@code
   * transport} (e.g. {@link #sharedMemoryConfig()}).
   *
   * @param allocator the units' and the transport's allocator
   * @param count how many units
   * @param capacity each unit's sample capacity
   * @param notifier where the router reports productions
   * @param transport the servers' and the router's transport settings
   */
  public RemoteUnits(
      BufferAllocator allocator,
      int count,
      OptionalLong capacity,
      ProductionNotifier notifier,
      TransportConfig transport) {
    try {
      for (int i = 0; i < count; i++) {
        StorageUnit unit = new StorageUnit("unit-" + i, capacity, allocator, 1L << 30);
        units.add(unit);
        servers.add(StorageUnitServer.start(unit, transport, allocator));
      }
      List<HostPort> addresses = servers.stream().map(StorageUnitServer::address).toList();
      manager = new RemoteSimpleStorageManager(addresses, transport, allocator, notifier);
    } catch (RuntimeException e) {
      closeServersAndUnits();
      throw e;
    }
  }

  /**
   * Loopback transport settings with an ephemeral port and test deadlines, shared memory off: every
   * byte over TCP.
   *
   * @return the settings
   */
  public static TransportConfig config() {
    return builder().sharedMemory(false).build();
  }

  /**
   * {@link #config()} with shared memory on, for bodies of every size ({@code sharedMemoryMinBytes}
   * 1) and small segments (1 MiB, so that larger bodies get segments of their own), as the
   * shared-memory variants of the loopback suites run.
   *
   * @return the settings
   */
  public static TransportConfig sharedMemoryConfig() {
    return builder()
        .sharedMemory(true)
        .sharedMemoryMinBytes(SHARED_MEMORY_MIN_BYTES)
        .sharedMemorySegmentBytes(SHARED_MEMORY_SEGMENT_BYTES)
        .build();
  }

  /** The smallest total body length the shared-memory variants send through shared memory. */
  public static final long SHARED_MEMORY_MIN_BYTES = 1;

  /** The standard segment size of the shared-memory variants. */
  public static final long SHARED_MEMORY_SEGMENT_BYTES = 1L << 20;

  /**
   * The loopback settings of {@link #config()} as a builder with the transport's defaults for
   * shared memory, for tests that change a setting.
   *
   * @return the builder
   */
  public static TransportConfig.Builder builder() {
    return TransportConfig.builder()
        .bindHost("127.0.0.1")
        .bindPort(0)
        .connectTimeout(Duration.ofSeconds(5))
        .defaultCallTimeout(Duration.ofSeconds(20))
        .shutdownGracePeriod(Duration.ofSeconds(5));
  }

  @Override
  public void close() {
    manager.close();
    closeServersAndUnits();
  }

  private void closeServersAndUnits() {
    servers.reversed().forEach(StorageUnitServer::close);
    units.reversed().forEach(StorageUnit::close);
  }
}
