package org.transferqueue.storage.checkpoint;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Writes one checkpoint file and computes its CRC32C on the way, so that nobody reads the file back
 * to checksum it. Little-endian numbers go through a small heap buffer; bulk bytes go straight from
 * their (off-heap) segment to the file.
 *
 * <pre>{@code
 * try (CheckpointFileWriter out = CheckpointFileWriter.create(file)) {
 *   out.i32(MAGIC).i32(VERSION).string(name);
 *   out.bytes(cell.segment());
 *   FileDigest digest = out.finish();      // flushes and fsyncs
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one thread writes a file.
 */
public final class CheckpointFileWriter implements AutoCloseable {
  private static final int BUFFER_BYTES = 1 << 16;
  private static final long MAX_CHUNK = 1L << 30;

  private final FileChannel channel;
  private final ByteBuffer buffer =
      ByteBuffer.allocate(BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
  private final CRC32C crc = new CRC32C();
  private long written;

  private CheckpointFileWriter(FileChannel channel) {
    this.channel = channel;
  }

  /**
   * Creates (or truncates) {@code file} for writing.
   *
   * @param file the file
   * @return a writer the caller closes
   * @throws IOException if the file cannot be opened
   */
  public static CheckpointFileWriter create(Path file) throws IOException {
    return new CheckpointFileWriter(
        FileChannel.open(
            file,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE));
  }

  private ByteBuffer room(int n) throws IOException {
    if (buffer.remaining() < n) {
      flush();
    }
    return buffer;
  }

  /**
   * Appends one byte.
   *
   * @param value the low 8 bits are written
   * @return this writer
   * @throws IOException on a write error
   */
  public CheckpointFileWriter u8(int value) throws IOException {
    room(1).put((byte) value);
    return this;
  }

  /**
   * Appends a little-endian 32-bit integer.
   *
   * @param value the value
   * @return this writer
   * @throws IOException on a write error
   */
  public CheckpointFileWriter i32(int value) throws IOException {
    room(4).putInt(value);
    return this;
  }

  /**
   * Appends a little-endian 64-bit integer.
   *
   * @param value the value
   * @return this writer
   * @throws IOException on a write error
   */
  public CheckpointFileWriter i64(long value) throws IOException {
    room(8).putLong(value);
    return this;
  }

  /**
   * Appends a string as its UTF-8 length ({@code u32}) and bytes.
   *
   * @param value the string
   * @return this writer
   * @throws IOException on a write error
   */
  public CheckpointFileWriter string(String value) throws IOException {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    i32(bytes.length);
    if (bytes.length <= BUFFER_BYTES) {
      room(bytes.length).put(bytes);
    } else {
      flush();
      ByteBuffer wrapped = ByteBuffer.wrap(bytes);
      crc.update(wrapped.duplicate());
      writeFully(wrapped);
    }
    return this;
  }

  /**
   * Appends every byte of {@code segment}, straight from its memory.
   *
   * @param segment the bytes; not retained
   * @return this writer
   * @throws IOException on a write error
   */
  public CheckpointFileWriter bytes(MemorySegment segment) throws IOException {
    flush();
    long size = segment.byteSize();
    for (long at = 0; at < size; at += MAX_CHUNK) {
      ByteBuffer chunk = segment.asSlice(at, Math.min(MAX_CHUNK, size - at)).asByteBuffer();
      crc.update(chunk.duplicate());
      writeFully(chunk);
    }
    return this;
  }

  private void flush() throws IOException {
    buffer.flip();
    crc.update(buffer.duplicate());
    writeFully(buffer);
    buffer.clear();
  }

  private void writeFully(ByteBuffer bytes) throws IOException {
    while (bytes.hasRemaining()) {
      written += channel.write(bytes);
    }
  }

  /**
   * Flushes, fsyncs the file and returns its digest. Write nothing afterwards.
   *
   * @return the size and CRC32C of everything written
   * @throws IOException on a write or sync error
   */
  public FileDigest finish() throws IOException {
    flush();
    channel.force(true);
    return new FileDigest(written, crc.getValue());
  }

  /**
   * Closes the file (without flushing: a writer closed before {@link #finish} leaves a partial
   * file, which its caller deletes). Idempotent.
   *
   * @throws IOException on a close error
   */
  @Override
  public void close() throws IOException {
    channel.close();
  }
}
