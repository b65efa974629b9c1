package org.transferqueue.storage.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The {@code DIGESTS} file of a role's journal checkpoint: one line {@code name size crc32c-hex}
 * per data file of the checkpoint directory, so that recovery verifies each file's size and CRC32C
 * while reading it ({@link CheckpointDigests#expecting}).
 *
 * <p>Stateless.
 */
public final class DigestFile {
  /** The file's name inside a checkpoint directory. */
  public static final String NAME = "DIGESTS";

  private DigestFile() {}

  /**
   * Writes and fsyncs the digest file.
   *
   * @param directory the checkpoint directory
   * @param digests digest by file name
   * @throws IOException on a write error
   */
  public static void write(Path directory, Map<String, FileDigest> digests) throws IOException {
    StringBuilder text = new StringBuilder();
    digests.forEach(
        (name, digest) ->
            text.append(name)
                .append(' ')
                .append(digest.sizeBytes())
                .append(' ')
                .append(digest.crcHex())
                .append('\n'));
    try (FileChannel out =
        FileChannel.open(
            directory.resolve(NAME),
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      ByteBuffer bytes = ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8));
      while (bytes.hasRemaining()) {
        out.write(bytes);
      }
      out.force(true);
    }
  }

  /**
   * Reads the digest file of a checkpoint directory.
   *
   * @param directory the checkpoint directory
   * @return the expectations for its files
   * @throws TqException {@link ErrorCode#CORRUPT_DATA} naming the file when it is missing or
   *     malformed
   */
  public static CheckpointDigests read(Path directory) {
    Path file = directory.resolve(NAME);
    Map<String, FileDigest> digests = new LinkedHashMap<>();
    try {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        String[] parts = line.split(" ");
        if (parts.length != 3) {
          throw new TqException(ErrorCode.CORRUPT_DATA, file + ": malformed line '" + line + "'");
        }
        digests.put(
            parts[0], new FileDigest(Long.parseLong(parts[1]), Long.parseLong(parts[2], 16)));
      }
    } catch (NoSuchFileException e) {
      throw new TqException(ErrorCode.CORRUPT_DATA, "checkpoint file " + file + " is missing", e);
    } catch (IOException e) {
      throw new TqException(ErrorCode.STORAGE_ERROR, "cannot read " + file + ": " + e, e);
    } catch (IllegalArgumentException e) {
      throw new TqException(ErrorCode.CORRUPT_DATA, file + " is malformed: " + e.getMessage(), e);
    }
    return CheckpointDigests.expecting(directory, digests);
  }
}
