package org.transferqueue.controller;

import java.util.BitSet;
import java.util.Map;

/** Whole-controller invariant checks (spec section 2.12), used by tests after every step. */
final class ControllerInvariants {
  private ControllerInvariants() {}

  static void check(Map<String, Partition> partitions, IndexAllocator allocator) {
    BitSet seen = new BitSet();
    for (Partition partition : partitions.values()) {
      partition.checkInvariants();
      IndexSet members = partition.members();
      IndexSet owned = allocator.indexesOf(partition.id);
      if (!members.equals(owned)) {
        throw new IllegalStateException(
            "partition " + partition.id + " members " + members + " != allocator owned " + owned);
      }
      BitSet bits = members.toBitSet();
      if (seen.intersects(bits)) {
        BitSet both = (BitSet) seen.clone();
        both.and(bits);
        throw new IllegalStateException("indexes owned by two partitions: " + both);
      }
      seen.or(bits);
    }
    if (seen.cardinality() != allocator.allocatedCount()) {
      throw new IllegalStateException(
          "allocated count " + allocator.allocatedCount() + " != owned " + seen.cardinality());
    }
    AllocatorState state = allocator.snapshot();
    for (String owner : state.owners().keySet()) {
      if (!partitions.containsKey(owner)) {
        throw new IllegalStateException("allocator owner " + owner + " is not a partition");
      }
    }
    BitSet pool = new BitSet();
    for (long index : state.pool()) {
      if (pool.get((int) index) || seen.get((int) index)) {
        throw new IllegalStateException("pool index " + index + " duplicated or owned");
      }
      pool.set((int) index);
    }
  }
}
