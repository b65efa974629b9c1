package org.transferqueue.objectstore;

/**
 * What one object store (an embedded engine, or the engine of a store node) holds right now.
 *
 * @param objects the objects stored, readable or being written
 * @param usedBytes the bytes their allocations take
 * @param capacityBytes the bytes the store holds in all ({@code global_segment_size})
 * @param evictedObjects the objects evicted since the store was set up (only objects that are not
 *     hard-pinned are ever evicted)
 */
public record StoreStatistics(
    long objects, long usedBytes, long capacityBytes, long evictedObjects) {}
