package org.transferqueue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The two file-tree steps every on-disk format here shares (checkpoints, journal segments and
 * journal checkpoints): making a directory's entries durable, and removing a directory tree.
 * Stateless.
 */
public final class DurableFiles {
  private static final System.Logger LOG = System.getLogger(DurableFiles.class.getName());

  private DurableFiles() {}

  /**
   * Fsyncs a directory, so that the files created, renamed or deleted in it survive a crash. Some
   * file systems cannot open or force a directory; then the files themselves, synced by their
   * writers, are all there is, and this logs at DEBUG and returns.
   *
   * @param directory the directory
   */
  public static void syncDirectory(Path directory) {
    try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "cannot fsync directory " + directory, e);
    }
  }

  /**
   * Deletes a file or a directory with everything under it; nothing when it does not exist.
   *
   * @param root the file or directory
   * @throws IOException when an entry cannot be deleted (the entries before it are gone)
   */
  public static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    Files.walkFileTree(
        root,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.delete(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
            Files.delete(dir);
            return FileVisitResult.CONTINUE;
          }
        });
  }
}
