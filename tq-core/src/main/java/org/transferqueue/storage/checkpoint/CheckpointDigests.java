package org.transferqueue.storage.checkpoint;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The digests of the files of one checkpoint directory, by path relative to its root ({@code /}
 * separated): on save, what writers {@link #record recorded} while writing, so that nobody reads a
 * file back to checksum it; on load, what the manifest expects, so that a reader verifies each file
 * in the same pass that reads its data and reports it {@link #verified}.
 *
 * <pre>{@code
 * CheckpointDigests digests = CheckpointDigests.recording(tmp);
 * storage.saveCheckpoint(tmp, digests);            // writers call record(file, digest)
 * digests.recorded();                              // -> manifest lines
 *
 * CheckpointDigests expected = CheckpointDigests.expecting(dir, fromManifest);
 * storage.prepareLoadCheckpoint(dir, expected);    // readers call expected(file), verified(file)
 * }</pre>
 *
 * <p>Thread-safe: writers and readers of several units call in parallel.
 */
public final class CheckpointDigests {
  private final Path root;
  private final Map<String, FileDigest> expected;
  private final Map<String, FileDigest> recorded = new ConcurrentHashMap<>();
  private final Set<String> verified = ConcurrentHashMap.newKeySet();

  private CheckpointDigests(Path root, Map<String, FileDigest> expected) {
    this.root = root == null ? null : root.toAbsolutePath().normalize();
    this.expected = expected;
  }

  /**
   * Digests of a directory being written: every {@link #record} is kept.
   *
   * @param root the checkpoint directory
   * @return an empty collection that records
   */
  public static CheckpointDigests recording(Path root) {
    return new CheckpointDigests(Objects.requireNonNull(root, "root"), Map.of());
  }

  /**
   * Digests a load checks files against.
   *
   * @param root the checkpoint directory
   * @param expected digest by relative path, as the manifest lists them
   * @return the expectations
   */
  public static CheckpointDigests expecting(Path root, Map<String, FileDigest> expected) {
    return new CheckpointDigests(Objects.requireNonNull(root, "root"), Map.copyOf(expected));
  }

  /**
   * No expectations and nothing recorded: readers check only the structure of files.
   *
   * @return digests that know no file
   */
  public static CheckpointDigests none() {
    return new CheckpointDigests(null, Map.of());
  }

  /**
   * The path of {@code file} relative to the root, {@code /}-separated, or null if outside it.
   *
   * @param file a file
   * @return the relative path or null
   */
  public String relative(Path file) {
    if (root == null) {
      return null;
    }
    Path absolute = file.toAbsolutePath().normalize();
    if (!absolute.startsWith(root)) {
      return null;
    }
    return root.relativize(absolute).toString().replace('\\', '/');
  }

  /**
   * The digest the manifest records for {@code file}.
   *
   * @param file a file under the root
   * @return the digest, or null when none is known (then only the structure is checked)
   */
  public FileDigest expected(Path file) {
    String path = relative(file);
    return path == null ? null : expected.get(path);
  }

  /**
   * Notes that {@code file} was read completely and matched its expected digest.
   *
   * @param file a file under the root
   */
  public void verified(Path file) {
    String path = relative(file);
    if (path != null) {
      verified.add(path);
    }
  }

  /**
   * Notes that {@code relativePath} was verified (by a process that reads it on another host).
   *
   * @param relativePath a path relative to the root
   */
  public void verified(String relativePath) {
    verified.add(relativePath);
  }

  /**
   * Whether a reader verified {@code relativePath}.
   *
   * @param relativePath a path relative to the root
   * @return true once {@link #verified} was called for it
   */
  public boolean isVerified(String relativePath) {
    return verified.contains(relativePath);
  }

  /**
   * Records the digest a writer computed while writing {@code file}; files outside the root are
   * ignored.
   *
   * @param file the written file
   * @param digest its size and checksum
   */
  public void record(Path file, FileDigest digest) {
    String path = relative(file);
    if (path != null) {
      recorded.put(path, digest);
    }
  }

  /**
   * Records the digest of a file written by another process.
   *
   * @param relativePath the file's path relative to the root
   * @param digest its size and checksum
   */
  public void record(String relativePath, FileDigest digest) {
    recorded.put(relativePath, digest);
  }

  /**
   * What writers recorded.
   *
   * @return digest by relative path, sorted by path
   */
  public Map<String, FileDigest> recorded() {
    return new TreeMap<>(recorded);
  }
}
