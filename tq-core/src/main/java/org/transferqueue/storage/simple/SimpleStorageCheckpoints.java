package org.transferqueue.storage.simple;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.transferqueue.ErrorCode;
import org.transferqueue.JsonWriter;
import org.transferqueue.StorageException;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;

/**
 * The checkpoint directory of a {@link SimpleStorageManager}: one {@link UnitCheckpoint} file per
 * unit and a manifest of positions.
 *
 * <pre>
 *  directory/simple_storage/su_0_TQ_STORAGE_UNIT_1a2b3c4d.ckpt
 *  directory/simple_storage/su_1_TQ_STORAGE_UNIT_5e6f7a8b.ckpt
 *  directory/simple_storage/storage_unit_info.json
 *      [{"position": 0, "storage_unit_id": "TQ_STORAGE_UNIT_1a2b3c4d"}, ...]
 * </pre>
 *
 * <p>Stateless; the units' own locks make saving safe while requests run. The layout helpers are
 * public so that remote units ({@code org.transferqueue.remote}) write the same layout.
 */
public final class SimpleStorageCheckpoints {
  /** The sub-directory of a checkpoint directory that holds SimpleStorage's files. */
  public static final String CHECKPOINT_DIRECTORY = "simple_storage";

  /** The manifest listing (position, unit id) of every saved unit. */
  public static final String MANIFEST_FILE = "storage_unit_info.json";

  private static final Pattern MANIFEST_ENTRY =
      Pattern.compile(
          "\\{\\s*\"position\"\\s*:\\s*(\\d+)\\s*,\\s*\"storage_unit_id\"\\s*:\\s*\"([^\"]*)\"\\s*}");

  private SimpleStorageCheckpoints() {}

  /**
   * Saves every unit, in parallel, under {@code directory/simple_storage/}: one file {@code
   * su_<position>_<unitId>.ckpt} per unit, then the manifest {@code storage_unit_info.json} listing
   * positions and unit ids. Puts and gets may continue; each unit's file is one instant of it.
   *
   * @param directory the checkpoint directory, created if needed
   * @throws StorageException with {@code STORAGE_ERROR} naming the unit and path that failed
   */
  static void save(
      Path directory, List<StorageUnit> units, UnitExecutor executor, CheckpointDigests digests) {
    Path base = directory.resolve(CHECKPOINT_DIRECTORY);
    try {
      Files.createDirectories(base);
    } catch (IOException e) {
      throw new StorageException(
          ErrorCode.STORAGE_ERROR, "cannot create checkpoint directory " + base + ": " + e, e);
    }
    List<Integer> positions = IntStream.range(0, units.size()).boxed().toList();
    executor.runAll(
        positions,
        p -> {
          Path file = base.resolve(unitFileName(p, units.get(p).id()));
          digests.record(file, units.get(p).saveCheckpoint(file));
          return p;
        },
        null);
    writeUnitManifest(base, units.stream().map(StorageUnit::id).toList());
  }

  /**
   * Writes {@code storage_unit_info.json} into {@code base}, listing position and id of every unit.
   *
   * @param base the {@code simple_storage} directory
   * @param unitIds the unit ids in routing order
   * @throws StorageException with {@code STORAGE_ERROR} if the file cannot be written
   */
  public static void writeUnitManifest(Path base, List<String> unitIds) {
    List<Map<String, Object>> entries = new ArrayList<>(unitIds.size());
    for (int p = 0; p < unitIds.size(); p++) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("position", p);
      entry.put("storage_unit_id", unitIds.get(p));
      entries.add(entry);
    }
    StringBuilder manifest = JsonWriter.SPACED.write(new StringBuilder(), entries).append('\n');
    try {
      Files.writeString(base.resolve(MANIFEST_FILE), manifest);
    } catch (IOException e) {
      throw new StorageException(
          ErrorCode.STORAGE_ERROR, "cannot write checkpoint manifest in " + base + ": " + e, e);
    }
  }

  /**
   * Replaces the state of every unit by a checkpoint saved with {@link #save}: the file of position
   * {@code p} goes to the unit now at position {@code p}, whatever its id, so routing by {@code gi
   * mod N} stays valid. All files are read before any unit changes; on an error no unit changes.
   *
   * @param directory the directory given to {@link #save}
   * @throws StorageException with {@code NOT_FOUND} when the manifest is missing, {@code
   *     INVALID_ARGUMENT} when the unit count differs, {@code NOT_FOUND}, {@code CORRUPT_DATA} or
   *     {@code STORAGE_ERROR} naming the unit and file that failed
   */
  static void load(Path directory, List<StorageUnit> units, UnitExecutor executor) {
    try (StorageManager.PreparedLoad load =
        prepare(directory, units, executor, CheckpointDigests.none())) {
      load.commit();
    }
  }

  /**
   * Reads every unit's file as {@link #load} does, without changing any unit, verifying each file's
   * CRC32C in the same pass when {@code digests} knows it.
   *
   * @param directory the directory given to {@link #save}
   * @param units the units in routing order
   * @param executor runs the reads in parallel
   * @param digests the manifest's digests
   * @return the contents, installed by {@link StorageManager.PreparedLoad#commit()}
   * @throws StorageException as {@link #load}
   */
  static StorageManager.PreparedLoad prepare(
      Path directory, List<StorageUnit> units, UnitExecutor executor, CheckpointDigests digests) {
    Path base = directory.resolve(CHECKPOINT_DIRECTORY);
    Map<Integer, String> saved = readUnitManifest(base, units.size());
    List<Integer> positions = new ArrayList<>(saved.keySet());
    List<UnitCheckpoint.Contents> contents =
        executor.runAll(
            positions,
            p -> {
              Path file = base.resolve(unitFileName(p, saved.get(p)));
              StorageUnit unit = units.get(p);
              try {
                return UnitCheckpoints.read(unit, file, digests);
              } catch (StorageException e) {
                throw new StorageException(
                    e.code(),
                    "Storage unit "
                        + unit.id()
                        + " failed to load checkpoint from "
                        + file
                        + ": "
                        + e.getMessage(),
                    e);
              }
            },
            UnitCheckpoint.Contents::close);
    List<StorageUnit> targets = positions.stream().map(units::get).toList();
    return new StagedUnitLoad(targets, contents);
  }

  /**
   * Reads {@code storage_unit_info.json} from {@code base} and checks that it lists exactly the
   * positions {@code 0..units-1}.
   *
   * @param base the {@code simple_storage} directory
   * @param units the number of units of the running system
   * @return unit id by position, in position order
   * @throws StorageException with {@code NOT_FOUND} when the file is missing, {@code
   *     INVALID_ARGUMENT} when the unit count differs, {@code CORRUPT_DATA} for other positions
   */
  public static Map<Integer, String> readUnitManifest(Path base, int units) {
    Path manifestPath = base.resolve(MANIFEST_FILE);
    String manifest;
    try {
      manifest = Files.readString(manifestPath);
    } catch (NoSuchFileException e) {
      throw new StorageException(
          ErrorCode.NOT_FOUND, "Storage unit manifest not found: " + manifestPath, e);
    } catch (IOException e) {
      throw new StorageException(
          ErrorCode.STORAGE_ERROR, "cannot read " + manifestPath + ": " + e, e);
    }
    Map<Integer, String> saved = new TreeMap<>();
    Matcher entry = MANIFEST_ENTRY.matcher(manifest);
    while (entry.find()) {
      saved.put(Integer.parseInt(entry.group(1)), entry.group(2));
    }
    if (saved.size() != units) {
      throw new StorageException(
          ErrorCode.INVALID_ARGUMENT,
          "Storage unit count mismatch: checkpoint has "
              + saved.size()
              + ", current system has "
              + units
              + ".");
    }
    for (int p = 0; p < units; p++) {
      if (!saved.containsKey(p)) {
        throw new StorageException(
            ErrorCode.CORRUPT_DATA,
            manifestPath + " lists positions " + saved.keySet() + ", expected 0 to " + (units - 1));
      }
    }
    return saved;
  }

  /**
   * The file name of a unit's checkpoint: {@code su_<position>_<unitId>.ckpt}.
   *
   * @param position the unit's routing position
   * @param unitId the unit's id when it was saved
   * @return the file name
   */
  public static String unitFileName(int position, String unitId) {
    return "su_" + position + "_" + unitId + ".ckpt";
  }
}
