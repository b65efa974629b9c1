/**
 * The storage-manager SPI: how a client stores, reads and removes the cells of a batch, whatever
 * the backend.
 *
 * <p>A {@link org.transferqueue.storage.StorageManager} turns batch-level put, get and clear into
 * backend operations. A put is complete only when the controller has accepted the production
 * update, which the manager sends through a {@link org.transferqueue.storage.ProductionNotifier}
 * (one {@link org.transferqueue.meta.ProductionUpdate} per partition of the batch); a rejected or
 * failed notification fails the put with {@link org.transferqueue.ErrorCode#NOTIFICATION_FAILED}.
 * Backends are created by name through a {@link org.transferqueue.storage.StorageManagerRegistry}.
 * Storage never talks to the controller directly: the system wiring adapts the controller to the
 * notifier.
 *
 * <p>Sub-packages hold the backends: {@code storage.simple} (storage units and router) and {@code
 * storage.kv} (key-value managers over a client SPI).
 */
package org.transferqueue.storage;
