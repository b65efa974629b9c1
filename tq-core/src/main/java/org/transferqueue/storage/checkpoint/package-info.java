/**
 * Building blocks of storage checkpoints: files written and read in one pass with their CRC32C
 * computed on the way ({@link org.transferqueue.storage.checkpoint.CheckpointFileWriter}, {@link
 * org.transferqueue.storage.checkpoint.CheckpointFileReader}), and the per-file digests that a
 * checkpoint's manifest records and a load verifies ({@link
 * org.transferqueue.storage.checkpoint.CheckpointDigests}).
 *
 * <p>The checkpoint format is documented in {@code docs/CHECKPOINT.md}.
 */
package org.transferqueue.storage.checkpoint;
