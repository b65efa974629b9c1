/**
 * The remote services of a multi-process deployment built on {@link org.transferqueue.transport}:
 * the msgpack encoding of metadata values shared by every service ({@link
 * org.transferqueue.remote.MetaCodec}) and the per-role servers and their clients: the controller
 * service ({@link org.transferqueue.remote.ControllerServer}, {@link
 * org.transferqueue.remote.RemoteController}, message types 100-199), the storage-unit servers and
 * the SimpleStorage router over them ({@link org.transferqueue.remote.StorageUnitServer}, {@link
 * org.transferqueue.remote.RemoteStorageUnit}, {@link
 * org.transferqueue.remote.RemoteSimpleStorageManager}, message types 200-299), and the
 * object-store nodes and the sharding store over them ({@link
 * org.transferqueue.remote.StoreNodeServer}, {@link org.transferqueue.remote.RemoteObjectStore},
 * message types 300-399).
 *
 * <p>Tensor cells travel as raw frame bodies: requests are written with gathering writes straight
 * from the caller's tensor rows, servers copy request bodies once into their cells and write
 * replies straight from the stored cells. Metadata travels as msgpack in the frame's metadata
 * section.
 */
package org.transferqueue.remote;
