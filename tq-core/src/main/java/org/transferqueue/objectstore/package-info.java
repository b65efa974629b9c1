/**
 * The object-store API with Mooncake Store's semantics: {@link
 * org.transferqueue.objectstore.ObjectStore} (zero-copy and copy-path writes and reads, existence
 * and size queries, removal), {@link org.transferqueue.objectstore.ReplicateConfig}, {@link
 * org.transferqueue.objectstore.StoreConfig} and Mooncake's numeric {@link
 * org.transferqueue.objectstore.StoreStatus}s.
 *
 * <p>Results are values, as in Mooncake: {@code 0} or a negative code for status calls, a size or a
 * negative code for reads, one entry per key for batch calls. Nothing in this package depends on a
 * particular engine: the embedded engine ({@code objectstore.engine}) and a later network client
 * implement the same interface, usually by extending {@link
 * org.transferqueue.objectstore.AbstractObjectStore}.
 */
package org.transferqueue.objectstore;
