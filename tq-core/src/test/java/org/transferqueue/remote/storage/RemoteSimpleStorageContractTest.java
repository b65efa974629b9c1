package org.transferqueue.remote.storage;

import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.remote.RemoteUnits;
import org.transferqueue.storage.ClearResult;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerContract;
import org.transferqueue.tensor.Batch;
import org.transferqueue.transport.TransportConfig;

/**
 * SimpleStorage over two remote units (loopback, every byte over TCP) against the storage-manager
 * contract; {@link RemoteSimpleStorageSharedMemoryContractTest} runs it with shared memory.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteSimpleStorageContractTest extends StorageManagerContract {
  @Override
  protected StorageManager create(BufferAllocator allocator, ProductionNotifier notifier) {
    return new Closing(new RemoteUnits(allocator, 2, OptionalLong.empty(), notifier, transport()));
  }

  /** The units' and the router's transport settings. */
  TransportConfig transport() {
    return RemoteUnits.config();
  }

  /** The router, closing its servers and units with it. */
  record Closing(RemoteUnits remote) implements StorageManager {
    @Override
    public String backendName() {
      return remote.manager.backendName();
    }

    @Override
    public PutResult put(Batch batch, BatchMeta meta) {
      return remote.manager.put(batch, meta);
    }

    @Override
    public PutResult put(Batch batch, BatchMeta meta, DataParserReference parser) {
      return remote.manager.put(batch, meta, parser);
    }

    @Override
    public Batch get(BatchMeta meta, BufferAllocator allocator) {
      return remote.manager.get(meta, allocator);
    }

    @Override
    public ClearResult clear(BatchMeta meta) {
      return remote.manager.clear(meta);
    }

    @Override
    public void saveCheckpoint(Path directory) {
      remote.manager.saveCheckpoint(directory);
    }

    @Override
    public void loadCheckpoint(Path directory) {
      remote.manager.loadCheckpoint(directory);
    }

    @Override
    public void close() {
      remote.close();
    }
  }
}
