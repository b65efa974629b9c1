package org.transferqueue.memory;

/**
 * A named allocator under another one: its own limit and statistics, memory from the root's pool.
 * Thread-safe.
 */
final class ChildAllocator extends AccountingAllocator {
  private final RootAllocator root;

  ChildAllocator(String name, long limitBytes, AccountingAllocator parent, boolean trackSites) {
    super(name, limitBytes, parent, trackSites);
    this.root = parent.root();
  }

  @Override
  RootAllocator root() {
    return root;
  }

  @Override
  public void close() {
    closeAccounting();
  }
}
