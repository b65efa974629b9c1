package org.transferqueue.storage.simple;

import java.util.OptionalLong;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerContract;

/** SimpleStorage (three embedded units) against the storage-manager contract. */
class SimpleStorageContractTest extends StorageManagerContract {
  @Override
  protected StorageManager create(BufferAllocator allocator, ProductionNotifier notifier) {
    return new SimpleStorageManager(
        SimpleStorageSettings.builder().unitCount(3).totalStorageSize(OptionalLong.empty()).build(),
        allocator,
        notifier,
        new DataParserRegistry());
  }
}
