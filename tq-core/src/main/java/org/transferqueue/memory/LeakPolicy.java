package org.transferqueue.memory;

/** What closing an allocator does when buffers or child allocators are still outstanding. */
public enum LeakPolicy {
  /** Throw a {@code RESOURCE_LEAK} exception naming what leaked: for tests. */
  THROW,
  /** Log the leak once and count it in {@link RootAllocator#leakCount()}: for production. */
  LOG
}
