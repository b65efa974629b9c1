package org.transferqueue.storage.simple;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.remote.storage.RemoteSimpleStorageManager;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.storage.ClearResult;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.tensor.Batch;
import org.transferqueue.transport.TransportConfig;

/**
 * SimpleStorage as the round-trip scenarios use it: the in-process {@link SimpleStorageManager}, or
 * a {@link RemoteSimpleStorageManager} routing to storage-unit servers on 127.0.0.1 ephemeral ports
 * in this JVM, over TCP or through shared memory. Closing closes the router, the servers and the
 * units.
 */
final class RouterUnderTest implements AutoCloseable {
  /** Where the units run, and how the bytes reach them. */
  enum Placement {
    IN_PROCESS,
    /** Storage-unit servers on loopback, every byte over TCP. */
    LOOPBACK,
    /** The servers of {@link #LOOPBACK} with shared memory on, for bodies of every size. */
    SHARED_MEMORY
  }

  private final StorageManager manager;
  private final List<StorageUnit> units;
  private final List<StorageUnitServer> servers;

  private RouterUnderTest(
      StorageManager manager, List<StorageUnit> units, List<StorageUnitServer> servers) {
    this.manager = manager;
    this.units = units;
    this.servers = servers;
  }

  /** Starts {@code count} units holding at most {@code total} samples in all (-1: unlimited). */
  static RouterUnderTest start(
      Placement placement, BufferAllocator allocator, int count, long total) {
    OptionalLong capacity = total < 0 ? OptionalLong.empty() : OptionalLong.of(total);
    SimpleStorageSettings settings =
        SimpleStorageSettings.builder().unitCount(count).totalStorageSize(capacity).build();
    if (placement == Placement.IN_PROCESS) {
      SimpleStorageManager local =
          new SimpleStorageManager(
              settings, allocator, new RecordingNotifier(), new DataParserRegistry());
      return new RouterUnderTest(local, local.units(), List.of());
    }
    TransportConfig loopback =
        TransportConfig.builder()
            .bindHost("127.0.0.1")
            .bindPort(0)
            .defaultCallTimeout(Duration.ofSeconds(20))
            .sharedMemory(placement == Placement.SHARED_MEMORY)
            .sharedMemoryMinBytes(1)
            .sharedMemorySegmentBytes(1L << 20)
            .build();
    List<StorageUnit> units = new ArrayList<>();
    List<StorageUnitServer> servers = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        StorageUnit unit =
            new StorageUnit(
                "TQ_STORAGE_UNIT_" + i, settings.unitCapacity(), allocator, Long.MAX_VALUE);
        units.add(unit);
        servers.add(StorageUnitServer.start(unit, loopback, allocator));
      }
      List<HostPort> addresses = servers.stream().map(StorageUnitServer::address).toList();
      return new RouterUnderTest(
          new RemoteSimpleStorageManager(addresses, loopback, allocator, new RecordingNotifier()),
          units,
          servers);
    } catch (RuntimeException e) {
      servers.reversed().forEach(StorageUnitServer::close);
      units.reversed().forEach(StorageUnit::close);
      throw e;
    }
  }

  PutResult put(Batch batch, BatchMeta meta) {
    return manager.put(batch, meta);
  }

  Batch get(BatchMeta meta, BufferAllocator allocator) {
    return manager.get(meta, allocator);
  }

  ClearResult clear(BatchMeta meta) {
    return manager.clear(meta);
  }

  /** The statistics of every unit, as the router reports them. */
  List<StorageUnitStats> unitStats() {
    return switch (manager) {
      case SimpleStorageManager local -> local.unitStats();
      case RemoteSimpleStorageManager remote -> remote.unitStats();
      default -> throw new IllegalStateException("unexpected manager " + manager);
    };
  }

  /** The units behind the router, in routing order. */
  List<StorageUnit> units() {
    return units;
  }

  @Override
  public void close() {
    manager.close();
    servers.reversed().forEach(StorageUnitServer::close);
    if (!servers.isEmpty()) {
      units.reversed().forEach(StorageUnit::close);
    }
  }
}
