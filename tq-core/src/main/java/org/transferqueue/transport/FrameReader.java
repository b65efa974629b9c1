package org.transferqueue.transport;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import org.transferqueue.Clock;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.FrameHeaderFlyweight;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;

/**
 * Reads frames from a blocking socket channel: the header and metadata through a small native
 * scratch buffer, the bodies with scattering reads straight into destination segments.
 *
 * <p>Owned by the connection's single reader thread; not thread-safe. {@link #close()} releases the
 * scratch buffer and is called by that thread when it exits.
 */
final class FrameReader implements AutoCloseable {
  /** Scratch for headers, metadata in chunks and drained bodies. */
  static final int SCRATCH_BYTES = 64 * 1024;

  /** The longest slice one ByteBuffer covers; bodies longer than this are split. */
  static final long MAX_BUFFER_BYTES = 1L << 30;

  private final SocketChannel channel;
  private final NativeBuffer scratch;
  private final ByteBuffer scratchBuffer;
  private final FrameHeaderFlyweight flyweight = new FrameHeaderFlyweight();

  /**
   * {@link Clock#nanoTime()} of the last byte read inside a frame through the scratch buffer
   * (header, metadata, skipped bodies), or 0 between frames and while bodies stream into a call's
   * destinations (that call's own deadline guards those). Written by the reader thread, read by
   * deadline tasks.
   */
  private volatile long partialSince;

  /** The correlation id of the frame being read once its header is complete, else 0. */
  private volatile long partialCorrelationId;

  private final Clock clock;

  FrameReader(SocketChannel channel, BufferAllocator allocator, Clock clock) {
    this.channel = channel;
    this.clock = clock;
    this.scratch = allocator.allocate(SCRATCH_BYTES);
    this.scratchBuffer = scratch.segment().asByteBuffer();
  }

  /**
   * Reads the next header.
   *
   * @return the header, or null if the peer closed the connection cleanly between frames
   * @throws EOFException if the connection ends inside the header
   */
  FrameHeader readHeader() throws IOException {
    partialSince = 0;
    partialCorrelationId = 0;
    scratchBuffer.clear().limit(FrameDescriptor.HEADER_LENGTH);
    while (scratchBuffer.hasRemaining()) {
      int read = channel.read(scratchBuffer);
      if (read > 0) {
        partialSince = clock.nanoTime();
      }
      if (read < 0) {
        if (scratchBuffer.position() == 0) {
          return null;
        }
        throw new EOFException(
            "connection closed after " + scratchBuffer.position() + " bytes of a frame header");
      }
    }
    flyweight.wrap(scratch.segment());
    partialCorrelationId = flyweight.correlationId();
    return new FrameHeader(
        flyweight.magic(),
        flyweight.version(),
        flyweight.type(),
        flyweight.flags(),
        flyweight.correlationId(),
        flyweight.metadataLength(),
        flyweight.bodyLength());
  }

  /**
   * Reads the metadata section and its padding; the caller has checked the length against its
   * limit.
   *
   * @param metadataLength the header's metadata length
   * @return the metadata bytes
   */
  byte[] readMetadata(long metadataLength) throws IOException {
    byte[] metadata = new byte[Math.toIntExact(metadataLength)];
    long remaining = FrameDescriptor.bodyOffset(metadataLength) - FrameDescriptor.HEADER_LENGTH;
    int copied = 0;
    while (remaining > 0) {
      int chunk = (int) Math.min(remaining, SCRATCH_BYTES);
      scratchBuffer.clear().limit(chunk);
      readFully(scratchBuffer);
      int useful = Math.min(chunk, metadata.length - copied);
      if (useful > 0) {
        MemorySegment.copy(
            scratch.segment(),
            java.lang.foreign.ValueLayout.JAVA_BYTE,
            0,
            metadata,
            copied,
            useful);
        copied += useful;
      }
      remaining -= chunk;
    }
    return metadata;
  }

  /**
   * Reads bodies back to back into the given buffers, each filled from its position to its limit.
   *
   * @param buffers views of the destinations ({@link FrameWriter#toBuffers}), one body each
   */
  void readBodies(ByteBuffer[] buffers) throws IOException {
    partialSince = 0;
    VectoredIo.readFully(channel, buffers, "a frame body");
  }

  /**
   * Reads and discards bytes, for bodies nobody wants (late replies, rejected requests).
   *
   * @param length bytes to skip
   */
  void skip(long length) throws IOException {
    long remaining = length;
    while (remaining > 0) {
      int chunk = (int) Math.min(remaining, SCRATCH_BYTES);
      scratchBuffer.clear().limit(chunk);
      readFully(scratchBuffer);
      remaining -= chunk;
    }
  }

  private void readFully(ByteBuffer buffer) throws IOException {
    while (buffer.hasRemaining()) {
      int read = channel.read(buffer);
      if (read < 0) {
        throw new EOFException("connection closed inside a frame");
      }
      if (read > 0) {
        partialSince = clock.nanoTime();
      }
    }
  }

  /** Marks the end of a frame: the stream is between frames again. */
  void frameDone() {
    partialSince = 0;
    partialCorrelationId = 0;
  }

  /** The correlation id of the frame being read once its header is complete, else 0. */
  long partialFrameCorrelationId() {
    return partialCorrelationId;
  }

  /**
   * How long the reader has waited for the rest of a frame it reads through the scratch buffer.
   *
   * @return nanoseconds since the last byte of that frame, or 0 if not inside such a frame
   */
  long partialFrameQuietNanos() {
    long since = partialSince;
    return since == 0 ? 0 : Math.max(0, clock.nanoTime() - since);
  }

  @Override
  public void close() {
    scratch.close();
  }
}
