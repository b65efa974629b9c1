/**
 * The remote services of a multi-process deployment built on {@link org.transferqueue.transport},
 * one sub-package per service, each with one protocol table that both its client proxy and its
 * server adapter are built from: the controller ({@link org.transferqueue.remote.controller},
 * message types 100-199), the storage units and the SimpleStorage router over them ({@link
 * org.transferqueue.remote.storage}, 200-299), and the object-store nodes and the sharding store
 * over them ({@link org.transferqueue.remote.objectstore}, 300-399).
 *
 * <p>This package holds what the services share: the table entry type ({@link
 * org.transferqueue.remote.MessageType}), the msgpack encoding of metadata values ({@link
 * org.transferqueue.remote.MetaCodec}, {@link org.transferqueue.remote.MetaReader}, {@link
 * org.transferqueue.remote.MetaWriter}) and of the storage services' metadata ({@link
 * org.transferqueue.remote.Wire}), the checkpoint messages of both storage services and their
 * two-phase load ({@link org.transferqueue.remote.CheckpointMessages}, {@link
 * org.transferqueue.remote.StagedCheckpointLoads}, {@link
 * org.transferqueue.remote.DistributedCheckpointLoad}).
 *
 * <p>Tensor cells travel as raw frame bodies: requests are written with gathering writes straight
 * from the caller's tensor rows; a storage unit reads a put's row bodies from the socket straight
 * into the buffers that become its cells, and a store node into the objects' memory in its segment,
 * so a put is copied once on the server, from the socket; replies are written straight from the
 * stored cells. Metadata travels as msgpack in the frame's metadata section.
 */
package org.transferqueue.remote;
