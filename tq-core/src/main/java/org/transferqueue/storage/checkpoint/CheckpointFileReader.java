package org.transferqueue.storage.checkpoint;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;

/**
 * Reads one checkpoint file front to back with bounds checks, computing its CRC32C in the same
 * pass, and at {@link #finish} checks size and checksum against the manifest's digest. Callers
 * stage what they read (in memory they own) and apply it only after {@link #finish} returned, so a
 * file is read once and still validated before anything changes.
 *
 * <pre>{@code
 * try (CheckpointFileReader in = CheckpointFileReader.open(file, digests.expected(file))) {
 *   int magic = in.i32();
 *   long n = in.length("byteLength");       // checked against the bytes left
 *   in.readInto(staged.segment());           // straight into off-heap memory
 *   in.finish();                             // whole file consumed, CRC32C matches
 * }
 * }</pre>
 *
 * <p>Every error is a {@link StorageException}: {@code NOT_FOUND} for a missing file, {@code
 * CORRUPT_DATA} naming the file for a truncated, malformed or altered one, {@code STORAGE_ERROR}
 * for an I/O failure. Not thread-safe: one thread reads a file.
 */
public final class CheckpointFileReader implements AutoCloseable {
  private static final int BUFFER_BYTES = 1 << 16;
  private static final long MAX_CHUNK = 1L << 30;
  private static final int MAX_STRING_BYTES = 1 << 20;

  private final FileChannel channel;
  private final Path file;
  private final FileDigest expected;
  private final long size;
  private final ByteBuffer buffer =
      ByteBuffer.allocate(BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
  private final CRC32C crc = new CRC32C();
  private long consumed;

  private CheckpointFileReader(FileChannel channel, Path file, FileDigest expected, long size) {
    this.channel = channel;
    this.file = file;
    this.expected = expected;
    this.size = size;
    buffer.limit(0);
  }

  /**
   * Opens {@code file}; when {@code expected} is given its size is checked at once.
   *
   * @param file the file
   * @param expected the manifest's digest, or null to check only the structure
   * @return a reader the caller closes
   * @throws StorageException {@code NOT_FOUND}, {@code CORRUPT_DATA} (size differs) or {@code
   *     STORAGE_ERROR}
   */
  public static CheckpointFileReader open(Path file, FileDigest expected) {
    FileChannel channel;
    try {
      channel = FileChannel.open(file, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw new StorageException(ErrorCode.NOT_FOUND, "checkpoint file not found: " + file, e);
    } catch (IOException e) {
      throw new StorageException(ErrorCode.STORAGE_ERROR, "cannot open " + file + ": " + e, e);
    }
    try {
      long size = channel.size();
      if (expected != null && size != expected.sizeBytes()) {
        throw corrupt(
            file,
            "is "
                + size
                + " bytes, the manifest records "
                + expected.sizeBytes()
                + " (truncated?)");
      }
      return new CheckpointFileReader(channel, file, expected, size);
    } catch (IOException e) {
      closeQuietly(channel, e);
      throw new StorageException(ErrorCode.STORAGE_ERROR, "cannot read " + file + ": " + e, e);
    } catch (RuntimeException e) {
      closeQuietly(channel, e);
      throw e;
    }
  }

  private static void closeQuietly(FileChannel channel, Throwable failure) {
    try {
      channel.close();
    } catch (IOException e) {
      failure.addSuppressed(e);
    }
  }

  /**
   * The file being read.
   *
   * @return its path
   */
  public Path file() {
    return file;
  }

  /**
   * The bytes not read yet.
   *
   * @return the count
   */
  public long remaining() {
    return size - consumed;
  }

  private ByteBuffer need(int n) {
    if (buffer.remaining() < n) {
      refill(n);
    }
    consumed += n;
    return buffer;
  }

  private void refill(int n) {
    buffer.compact();
    try {
      while (buffer.position() < n) {
        int start = buffer.position();
        int read = channel.read(buffer);
        if (read < 0) {
          buffer.flip();
          throw corrupt("truncated at byte " + (consumed + buffer.remaining()));
        }
        crc.update(buffer.array(), start, read);
      }
    } catch (IOException e) {
      throw new StorageException(ErrorCode.STORAGE_ERROR, "cannot read " + file + ": " + e, e);
    }
    buffer.flip();
  }

  /**
   * Reads one unsigned byte.
   *
   * @return 0 to 255
   */
  public int u8() {
    return need(1).get() & 0xFF;
  }

  /**
   * Reads a little-endian 32-bit integer.
   *
   * @return the value
   */
  public int i32() {
    return need(4).getInt();
  }

  /**
   * Reads a little-endian 64-bit integer.
   *
   * @return the value
   */
  public long i64() {
    return need(8).getLong();
  }

  /**
   * Reads a non-negative 32-bit count.
   *
   * @param what names the count in the error
   * @return the count
   * @throws StorageException {@code CORRUPT_DATA} when negative
   */
  public int count(String what) {
    int n = i32();
    if (n < 0) {
      throw corrupt(what + "=" + n + " < 0");
    }
    return n;
  }

  /**
   * Reads a 64-bit byte length and checks it against the bytes left in the file, so that nothing is
   * allocated for a length the file cannot hold.
   *
   * @param what names the length in the error
   * @return the length
   * @throws StorageException {@code CORRUPT_DATA} when negative or longer than the rest
   */
  public long length(String what) {
    long n = i64();
    if (n < 0 || n > remaining()) {
      throw corrupt(what + "=" + n + " but " + remaining() + " bytes are left");
    }
    return n;
  }

  /**
   * Reads a string written by {@link CheckpointFileWriter#string}.
   *
   * @return the string
   * @throws StorageException {@code CORRUPT_DATA} for an impossible length
   */
  public String string() {
    int n = i32();
    if (n < 0 || n > MAX_STRING_BYTES || n > remaining()) {
      throw corrupt("string length " + n + " at byte " + (consumed - 4));
    }
    byte[] bytes = new byte[n];
    int fromBuffer = Math.min(n, buffer.remaining());
    buffer.get(bytes, 0, fromBuffer);
    consumed += fromBuffer;
    if (fromBuffer < n) {
      ByteBuffer rest = ByteBuffer.wrap(bytes, fromBuffer, n - fromBuffer);
      readDirect(rest);
    }
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /**
   * Fills {@code target} with the next {@code target.byteSize()} bytes of the file; bulk bytes go
   * from the file straight into the segment.
   *
   * @param target where the bytes go
   * @throws StorageException {@code CORRUPT_DATA} when the file ends first
   */
  public void readInto(MemorySegment target) {
    long n = target.byteSize();
    if (n > remaining()) {
      throw corrupt("needs " + n + " bytes at byte " + consumed + ", " + remaining() + " are left");
    }
    int fromBuffer = (int) Math.min(n, buffer.remaining());
    if (fromBuffer > 0) {
      MemorySegment.copy(
          buffer.array(), buffer.position(), target, ValueLayout.JAVA_BYTE, 0, fromBuffer);
      buffer.position(buffer.position() + fromBuffer);
      consumed += fromBuffer;
    }
    for (long at = fromBuffer; at < n; at += MAX_CHUNK) {
      readDirect(target.asSlice(at, Math.min(MAX_CHUNK, n - at)).asByteBuffer());
    }
  }

  /** Reads straight into {@code target}; the internal buffer must be empty. */
  private void readDirect(ByteBuffer target) {
    ByteBuffer view = target.duplicate();
    try {
      while (target.hasRemaining()) {
        if (channel.read(target) < 0) {
          throw corrupt("truncated at byte " + (consumed + target.position() - view.position()));
        }
      }
    } catch (IOException e) {
      throw new StorageException(ErrorCode.STORAGE_ERROR, "cannot read " + file + ": " + e, e);
    }
    view.limit(target.position());
    consumed += view.remaining();
    crc.update(view);
  }

  /**
   * Checks that the whole file was read and, when a digest was expected, that its CRC32C matches;
   * marks the file verified in {@code digests}.
   *
   * @param digests where a verified file is noted, or null
   * @throws StorageException {@code CORRUPT_DATA} for trailing bytes or a checksum mismatch
   */
  public void finish(CheckpointDigests digests) {
    if (remaining() != 0) {
      throw corrupt(remaining() + " trailing bytes after the last entry at byte " + consumed);
    }
    if (expected != null) {
      if (crc.getValue() != expected.crc32c()) {
        throw corrupt(
            "has CRC32C "
                + new FileDigest(size, crc.getValue()).crcHex()
                + ", the manifest records "
                + expected.crcHex());
      }
      if (digests != null) {
        digests.verified(file);
      }
    }
  }

  /**
   * The size and checksum of what was read, valid after the whole file was read.
   *
   * @return the digest
   */
  public FileDigest digest() {
    return new FileDigest(consumed, crc.getValue());
  }

  /**
   * A {@code CORRUPT_DATA} error naming this file.
   *
   * @param what the problem
   * @return the error to throw
   */
  public StorageException corrupt(String what) {
    return corrupt(file, what);
  }

  private static StorageException corrupt(Path file, String what) {
    return new StorageException(
        ErrorCode.CORRUPT_DATA, "corrupt checkpoint file " + file + ": " + what);
  }

  /** Closes the file. Idempotent. */
  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException e) {
      throw new StorageException(ErrorCode.STORAGE_ERROR, "cannot close " + file + ": " + e, e);
    }
  }
}
