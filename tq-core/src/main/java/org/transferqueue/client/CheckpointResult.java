package org.transferqueue.client;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What {@link TransferQueueSystem#saveCheckpoint} wrote.
 *
 * @param directory the checkpoint directory
 * @param formatVersion the on-disk format version (see {@code docs/CHECKPOINT.md})
 * @param createdAt when the checkpoint was taken
 * @param backend the storage backend's name
 * @param storageSaved whether stored data is in the checkpoint; false for backends without
 *     checkpoints or when storage was excluded, in which case loading restores only the controller
 * @param files every data file with its size and checksum, as listed in the manifest
 * @param metadata the caller's metadata saved in the manifest (empty for none); unmodifiable
 */
public record CheckpointResult(
    Path directory,
    int formatVersion,
    Instant createdAt,
    String backend,
    boolean storageSaved,
    List<CheckpointFile> files,
    Map<String, Object> metadata) {
  /** Validates and copies the arguments. */
  public CheckpointResult {
    Objects.requireNonNull(directory, "directory");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(backend, "backend");
    files = List.copyOf(files);
    metadata =
        metadata == null || metadata.isEmpty()
            ? Map.of()
            : Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
  }

  /**
   * The total size of the data files.
   *
   * @return bytes
   */
  public long totalBytes() {
    return files.stream().mapToLong(CheckpointFile::sizeBytes).sum();
  }

  /**
   * One data file of a checkpoint.
   *
   * @param path the path relative to the checkpoint directory, with {@code /} separators
   * @param sizeBytes the file's size
   * @param crc32c the CRC32C of its content
   */
  public record CheckpointFile(String path, long sizeBytes, long crc32c) {
    /** Validates the arguments. */
    public CheckpointFile {
      Objects.requireNonNull(path, "path");
    }
  }
}
