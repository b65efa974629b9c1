package org.transferqueue.objectstore;

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
import org.transferqueue.ErrorCode;
import org.transferqueue.JsonWriter;
import org.transferqueue.StorageException;

/**
 * The checkpoint layout of an object store: one file per node, by sharding position, and a list of
 * the nodes.
 *
 * <pre>
 *  directory/mooncake_store/store_node_info.json   [{"position": 0, "node": "127.0.0.1:7301"}, ...]
 *  directory/mooncake_store/node_0.ckpt            the objects of node 0
 *  directory/mooncake_store/node_1.ckpt
 * </pre>
 *
 * Keys are sharded over nodes by position, so a checkpoint loads only into a store with the same
 * number of nodes (an embedded store is one node). Stateless.
 */
public final class ObjectStoreCheckpoints {
  /** The sub-directory of a checkpoint directory that holds the object store's files. */
  public static final String CHECKPOINT_DIRECTORY = "mooncake_store";

  /** The list of nodes. */
  public static final String MANIFEST_FILE = "store_node_info.json";

  private static final Pattern ENTRY =
      Pattern.compile(
          "\\{\\s*\"position\"\\s*:\\s*(\\d+)\\s*,\\s*\"node\"\\s*:\\s*\"([^\"]*)\"\\s*}");

  private ObjectStoreCheckpoints() {}

  /**
   * The file of the node at {@code position}.
   *
   * @param position the node's sharding position
   * @return {@code node_<position>.ckpt}
   */
  public static String nodeFileName(int position) {
    return "node_" + position + ".ckpt";
  }

  /**
   * Writes {@code store_node_info.json} into {@code base}.
   *
   * @param base the {@code mooncake_store} directory
   * @param nodes the node names in sharding order
   * @throws StorageException {@code STORAGE_ERROR} if it cannot be written
   */
  public static void writeNodeManifest(Path base, List<String> nodes) {
    List<Map<String, Object>> entries = new ArrayList<>(nodes.size());
    for (int p = 0; p < nodes.size(); p++) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("position", p);
      // The reader's pattern takes a name up to the next quote.
      entry.put("node", nodes.get(p).replace("\"", ""));
      entries.add(entry);
    }
    StringBuilder out = JsonWriter.SPACED.write(new StringBuilder(), entries).append('\n');
    try {
      Files.createDirectories(base);
      Files.writeString(base.resolve(MANIFEST_FILE), out);
    } catch (IOException e) {
      throw new StorageException(
          ErrorCode.STORAGE_ERROR, "cannot write " + base.resolve(MANIFEST_FILE) + ": " + e, e);
    }
  }

  /**
   * Reads {@code store_node_info.json} and checks it lists exactly positions {@code 0..nodes-1}.
   *
   * @param base the {@code mooncake_store} directory
   * @param nodes the node count of the running store
   * @return node name by position
   * @throws StorageException {@code NOT_FOUND} when missing, {@code INVALID_ARGUMENT} for another
   *     node count, {@code CORRUPT_DATA} for other positions
   */
  public static Map<Integer, String> readNodeManifest(Path base, int nodes) {
    Path file = base.resolve(MANIFEST_FILE);
    String text;
    try {
      text = Files.readString(file);
    } catch (NoSuchFileException e) {
      throw new StorageException(
          ErrorCode.NOT_FOUND, "object store node list not found: " + file, e);
    } catch (IOException e) {
      throw new StorageException(ErrorCode.STORAGE_ERROR, "cannot read " + file + ": " + e, e);
    }
    Map<Integer, String> saved = new TreeMap<>();
    Matcher entry = ENTRY.matcher(text);
    while (entry.find()) {
      saved.put(Integer.parseInt(entry.group(1)), entry.group(2));
    }
    if (saved.size() != nodes) {
      throw new StorageException(
          ErrorCode.INVALID_ARGUMENT,
          "Object store node count mismatch: checkpoint has "
              + saved.size()
              + ", current store has "
              + nodes
              + ".");
    }
    for (int p = 0; p < nodes; p++) {
      if (!saved.containsKey(p)) {
        throw new StorageException(
            ErrorCode.CORRUPT_DATA,
            file + " lists positions " + saved.keySet() + ", expected 0 to " + (nodes - 1));
      }
    }
    return saved;
  }
}
