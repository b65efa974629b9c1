/**
 * The storage-unit service over the transport (message types 200-299) and the SimpleStorage backend
 * built on it: the protocol table ({@link org.transferqueue.remote.storage.StorageUnitProtocol}),
 * the server adapter of one unit ({@link org.transferqueue.remote.storage.StorageUnitServer}), its
 * client proxy ({@link org.transferqueue.remote.storage.RemoteStorageUnit}) and the router over
 * several units ({@link org.transferqueue.remote.storage.RemoteSimpleStorageManager}, which a
 * client builds through {@link org.transferqueue.remote.storage.RemoteSimpleStorage}), with the
 * pieces a get reassembles its columns from.
 *
 * <p>Tensor rows travel as frame bodies: a put is written with one gathering write from the
 * caller's rows and read by the unit straight into the buffers that become its cells; a get's reply
 * is written from the stored cells and read into the caller's result tensors.
 */
package org.transferqueue.remote.storage;
