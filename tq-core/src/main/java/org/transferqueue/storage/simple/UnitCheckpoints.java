package org.transferqueue.storage.simple;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.checkpoint.FileDigest;

/**
 * Saving and loading one {@link StorageUnit}'s checkpoint file ({@link UnitCheckpoint} is the
 * format): a save takes the unit's cells as of one instant and writes them outside the unit's lock;
 * a load reads and verifies the whole file into the unit's allocator first and then installs it in
 * one step, so a failed load leaves the unit as it was.
 *
 * <p>Stateless; thread-safe as the unit is.
 */
final class UnitCheckpoints {
  private UnitCheckpoints() {}

  /**
   * Writes every cell of a unit to {@code file} (replacing it); see {@link
   * StorageUnit#saveCheckpoint}.
   */
  static FileDigest save(StorageUnit unit, Path file) {
    try (UnitCheckpoint.Contents contents = unit.checkpointContents()) {
      return UnitCheckpoint.write(file, contents, unit.allocator());
    } catch (IOException e) {
      throw new StorageException(
          ErrorCode.STORAGE_ERROR,
          "Storage unit " + unit.id() + " failed to save checkpoint to " + file + ": " + e,
          e);
    }
  }

  /** Replaces a unit's whole state by a checkpoint; see {@link StorageUnit#loadCheckpoint}. */
  static void load(StorageUnit unit, Path file) {
    unit.install(read(unit, file, CheckpointDigests.none()));
  }

  /**
   * Reads and verifies a checkpoint file without changing the unit; see {@link
   * StorageUnit#prepareLoadCheckpoint}.
   */
  static StorageManager.PreparedLoad prepare(StorageUnit unit, Path file, FileDigest expected) {
    CheckpointDigests digests =
        expected == null
            ? CheckpointDigests.none()
            : CheckpointDigests.expecting(
                file.toAbsolutePath().getParent(), Map.of(file.getFileName().toString(), expected));
    return new StagedUnitLoad(List.of(unit), List.of(read(unit, file, digests)));
  }

  /** Reads a checkpoint into blocks of the unit's allocator, without changing the unit. */
  static UnitCheckpoint.Contents read(StorageUnit unit, Path file, CheckpointDigests digests) {
    unit.ensureOpenNow();
    return UnitCheckpoint.read(file, unit.allocator(), digests);
  }
}
