package org.transferqueue.storage;

import java.util.Objects;
import org.transferqueue.memory.BufferAllocator;

/**
 * What a {@link StorageManagerFactory} needs from the process to build a manager. A backend's own
 * settings are typed and given to its factory when it is registered (for example {@code
 * SimpleStorageManager.factory(SimpleStorageSettings)}), not carried here. Immutable.
 *
 * @param allocator the allocator under which the manager creates its own child allocators; the
 *     manager does not close it
 * @param notifier where the manager reports produced cells
 */
public record StorageContext(BufferAllocator allocator, ProductionNotifier notifier) {

  /** Rejects nulls. */
  public StorageContext {
    Objects.requireNonNull(allocator, "allocator");
    Objects.requireNonNull(notifier, "notifier");
  }
}
