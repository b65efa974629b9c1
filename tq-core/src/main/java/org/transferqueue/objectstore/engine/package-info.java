/**
 * The embedded object-store engine: {@link
 * org.transferqueue.objectstore.engine.EmbeddedObjectStore}, an in-process {@link
 * org.transferqueue.objectstore.ObjectStore} whose objects live in slabs taken from a {@link
 * org.transferqueue.memory.BufferAllocator} at setup; and {@link
 * org.transferqueue.objectstore.engine.MooncakeStoreBackend}, the {@code MooncakeStore} storage
 * backend over this engine or any other store.
 *
 * <p>Two layers, split along Mooncake's master/client boundary so that a network node can reuse the
 * metadata side: {@code StoreMaster} (package-private) owns keys, write and read tickets, leases,
 * pins, placement in slabs and eviction, and never touches object bytes; {@code
 * EmbeddedObjectStore} moves the bytes with one {@link java.lang.foreign.MemorySegment#copy} per
 * direction, outside every lock, after {@link org.transferqueue.objectstore.AbstractObjectStore}
 * checked the arguments and registered regions. Checkpoints of the engine are written and read by
 * {@code StoreCheckpointFile}.
 */
package org.transferqueue.objectstore.engine;
