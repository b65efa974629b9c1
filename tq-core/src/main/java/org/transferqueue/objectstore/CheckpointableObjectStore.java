package org.transferqueue.objectstore;

import java.nio.file.Path;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;

/**
 * An object store whose objects can be saved into and restored from a checkpoint directory, in the
 * layout of {@link ObjectStoreCheckpoints}: one file per node, written and read by the node itself.
 *
 * <p>Loading runs in two phases: {@link #prepareLoadCheckpoint} reads and verifies every node's
 * file and stages its objects without changing any node; {@link StorageManager.PreparedLoad#commit}
 * then replaces every node's objects by the staged ones. Requests must not run during a load.
 * Implementations are thread-safe.
 */
public interface CheckpointableObjectStore {
  /**
   * Saves every readable object (with its pins) under {@code directory/mooncake_store/}, each node
   * as of one instant.
   *
   * @param directory the checkpoint directory, as every node's host sees it
   * @param digests receives each file's size and CRC32C, computed while writing
   * @throws org.transferqueue.StorageException {@code STORAGE_ERROR} naming the node that failed
   */
  void saveCheckpoint(Path directory, CheckpointDigests digests);

  /**
   * Reads, verifies and stages a checkpoint saved by {@link #saveCheckpoint}, changing nothing.
   *
   * @param directory the checkpoint directory
   * @param digests the manifest's digests; files verified on the way are marked
   * @return the staged load; commit it or close it to discard
   * @throws org.transferqueue.StorageException {@code NOT_FOUND} for a missing file, {@code
   *     INVALID_ARGUMENT} for another node count or more data than the store holds, {@code
   *     CORRUPT_DATA} naming the file; every node is unchanged then
   */
  StorageManager.PreparedLoad prepareLoadCheckpoint(Path directory, CheckpointDigests digests);
}
