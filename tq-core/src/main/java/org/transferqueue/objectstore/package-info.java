/**
 * The object-store API with Mooncake Store's semantics, and the key-value client over it.
 *
 * <p>The API: {@link org.transferqueue.objectstore.ObjectStore} (zero-copy and copy-path writes and
 * reads, existence and size queries, removal), {@link
 * org.transferqueue.objectstore.ReplicateConfig}, {@link org.transferqueue.objectstore.StoreConfig}
 * and Mooncake's numeric {@link org.transferqueue.objectstore.StoreStatus} codes. Results are
 * values, as in Mooncake: {@code 0} or a negative code for status calls, a size or a negative code
 * for reads, one entry per key for batch calls. Engines extend {@link
 * org.transferqueue.objectstore.AbstractObjectStore}, which checks every call's arguments once
 * ({@link org.transferqueue.objectstore.ObjectStoreArgs}) and keeps the caller's registered memory
 * before the engine sees the call.
 *
 * <p>The client: {@link org.transferqueue.objectstore.MooncakeKvClient}, the key-value layer's
 * client over any {@code ObjectStore}, with its slice transfers, retries, buffer pool and region
 * registry.
 *
 * <p>Nothing in this package depends on an engine. The engines live above it: the embedded one in
 * {@code objectstore.engine} (with {@code MooncakeStoreBackend}, the storage-backend wiring), the
 * network client over store nodes ({@code RemoteObjectStore}) in {@code remote}. The architecture
 * test fails the build on a cycle between this package and either.
 */
package org.transferqueue.objectstore;
