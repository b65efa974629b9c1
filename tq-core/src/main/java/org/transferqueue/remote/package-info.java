/**
 * The remote services of a multi-process deployment built on {@link org.transferqueue.transport},
 * one sub-package per service, each with one protocol table that both its client proxy and its
 * server adapter are built from: the controller ({@link org.transferqueue.remote.controller},
 * message types 100-199), the storage units and the SimpleStorage router over them ({@link
 * org.transferqueue.remote.StorageUnitProtocol}, message types 200-299), and the object-store nodes
 * and the sharding store over them ({@link org.transferqueue.remote.StoreNodeProtocol}, message
 * types 300-399).
 *
 * <p>This package holds what the services share: the table entry type ({@link
 * org.transferqueue.remote.MessageType}), the msgpack encoding of metadata values ({@link
 * org.transferqueue.remote.MetaCodec}), the checkpoint messages and their two-phase load ({@link
 * org.transferqueue.remote.CheckpointMessages}, {@link
 * org.transferqueue.remote.StagedCheckpointLoads}).
 *
 * <p>Tensor cells travel as raw frame bodies: requests are written with gathering writes straight
 * from the caller's tensor rows; a storage unit reads a put's row bodies from the socket straight
 * into the buffers that become its cells, and a store node into the objects' memory in its segment,
 * so a put is copied once on the server, from the socket; replies are written straight from the
 * stored cells. Metadata travels as msgpack in the frame's metadata section.
 */
package org.transferqueue.remote;
