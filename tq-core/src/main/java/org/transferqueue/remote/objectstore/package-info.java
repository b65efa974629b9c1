/**
 * The object-store node service over the transport (message types 300-399): the protocol table
 * ({@link org.transferqueue.remote.objectstore.StoreNodeProtocol}), the server adapter of one node
 * ({@link org.transferqueue.remote.objectstore.StoreNodeServer}) and the {@link
 * org.transferqueue.objectstore.ObjectStore} that shards keys over several nodes ({@link
 * org.transferqueue.remote.objectstore.RemoteObjectStore}), under the MooncakeStore backend of a
 * client ({@link org.transferqueue.remote.objectstore.RemoteMooncakeStore}).
 *
 * <p>A write's bodies are read by a node straight into the objects' memory in its segment, and a
 * read's reply is written from there; results are the engine's per-key Mooncake codes.
 */
package org.transferqueue.remote.objectstore;
