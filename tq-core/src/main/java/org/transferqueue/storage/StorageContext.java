package org.transferqueue.storage;

import java.util.Map;
import java.util.Objects;
import org.transferqueue.memory.BufferAllocator;

/**
 * What a {@link StorageManagerFactory} needs to build a manager. Immutable.
 *
 * @param allocator the allocator under which the manager creates its own child allocators; the
 *     manager does not close it
 * @param notifier where the manager reports produced cells
 * @param options the backend's configuration section (for SimpleStorage the keys under {@code
 *     backend.SimpleStorage}), validated by the factory
 */
public record StorageContext(
    BufferAllocator allocator, ProductionNotifier notifier, Map<String, ?> options) {

  /** Rejects nulls and copies the options. */
  public StorageContext {
    Objects.requireNonNull(allocator, "allocator");
    Objects.requireNonNull(notifier, "notifier");
    options = Map.copyOf(options);
  }
}
