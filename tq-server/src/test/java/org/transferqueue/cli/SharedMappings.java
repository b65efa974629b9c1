package org.transferqueue.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * What the kernel shows of a process's shared-memory segments, independent of the product's own
 * accounting: the memfd mappings of {@code /proc/<pid>/maps} (their inodes name the segments, the
 * same inode in two processes is the same memory) and the entries of {@code /dev/shm}.
 */
final class SharedMappings {
  /** How a segment's mapping shows in {@code /proc/<pid>/maps}: memfd name "tq-shm". */
  static final String MEMFD_NAME = "/memfd:tq-shm";

  private SharedMappings() {}

  /**
   * The inodes of the memfd segments {@code pid} maps, or an empty set once it is gone.
   *
   * @param pid the process, or -1 for this one
   * @return the inodes
   */
  static Set<Long> segmentInodes(long pid) {
    Path maps = Path.of("/proc", pid < 0 ? "self" : Long.toString(pid), "maps");
    Set<Long> inodes = new TreeSet<>();
    try (Stream<String> lines = Files.lines(maps)) {
      lines
          .filter(line -> line.contains(MEMFD_NAME))
          .forEach(line -> inodes.add(Long.parseLong(line.trim().split("\\s+")[4])));
    } catch (IOException | java.io.UncheckedIOException e) {
      // The process has exited: it maps nothing any more.
    }
    return inodes;
  }

  /**
   * The names in {@code /dev/shm} that mention {@code tq} (other programs on a shared machine may
   * keep their own files there); empty where there is no such directory.
   *
   * @return the names, sorted
   */
  static Set<String> tqFilesInDevShm() {
    Path dir = Path.of("/dev/shm");
    Set<String> names = new TreeSet<>();
    if (!Files.isDirectory(dir)) {
      return names;
    }
    try (Stream<Path> entries = Files.list(dir)) {
      entries
          .map(p -> p.getFileName().toString())
          .filter(name -> name.toLowerCase(java.util.Locale.ROOT).contains("tq"))
          .forEach(names::add);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return names;
  }
}
