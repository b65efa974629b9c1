package org.transferqueue.transport;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.FrameHeaderFlyweight;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;

/**
 * Writes the frames of one connection from a queue, on one virtual thread, each frame with a
 * gathering write of its header-and-metadata prefix plus its body segments straight from their
 * memory.
 *
 * <p>Design note. Threads: any thread {@link #enqueue}s; only the writer thread touches the channel
 * for writing, the scratch buffer and the frames' bodies. A frame's {@link Listener} is told when
 * the writer starts reading its bodies and when it has let go of them, so a caller can keep bodies
 * alive exactly as long as needed. States: running, then stopped (after {@link #stop}, {@link
 * #closeAfterFlush} or an I/O error); once stopped, queued and later frames are failed at once.
 * Invariant: every enqueued frame gets exactly one {@code onWriteEnd}, or none if its {@code
 * onWriteStart} returned false.
 */
final class FrameWriter {
  /** Scratch for the header, metadata and padding of one frame. */
  static final int SCRATCH_BYTES = 64 * 1024;

  private static final Object STOP = new Object();
  private static final Object FLUSH_AND_CLOSE = new Object();

  /** Told when a frame's bodies are taken and released by the writer. */
  interface Listener {
    /**
     * Called on the writer thread before the frame is written.
     *
     * @return false to skip the frame (it then gets no {@code onWriteEnd})
     */
    boolean onWriteStart();

    /**
     * Called once the writer no longer touches the frame's bodies.
     *
     * @param failure null if the frame was written, otherwise why not
     */
    void onWriteEnd(Throwable failure);
  }

  /** One frame to write; metadata is the whole metadata section (body table included). */
  record OutboundFrame(
      int type,
      int flags,
      long correlationId,
      byte[] metadata,
      List<MemorySegment> bodies,
      Listener listener) {}

  private final SocketChannel channel;
  private final BufferAllocator allocator;
  private final Consumer<Throwable> onFailure;
  private final Runnable onExit;
  private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
  private final FrameHeaderFlyweight header = new FrameHeaderFlyweight();
  private final Thread thread;
  private volatile boolean stopped;

  /**
   * Starts the writer thread.
   *
   * @param onFailure told once about an I/O error, on the writer thread, to close the connection
   * @param onExit run last on the writer thread, after the scratch buffer is released
   */
  FrameWriter(
      SocketChannel channel,
      BufferAllocator allocator,
      String name,
      Consumer<Throwable> onFailure,
      Runnable onExit) {
    this.channel = channel;
    this.allocator = allocator;
    this.onFailure = onFailure;
    this.onExit = onExit;
    NativeBuffer scratch = allocator.allocate(SCRATCH_BYTES);
    this.thread = Thread.ofVirtual().name(name).start(() -> run(scratch));
  }

  /**
   * Queues a frame. If the writer has stopped, the frame's listener is told at once.
   *
   * @return true if queued
   */
  boolean enqueue(OutboundFrame frame) {
    if (!stopped) {
      queue.add(frame);
      if (!stopped || !queue.remove(frame)) {
        return true;
      }
    }
    frame.listener().onWriteEnd(closedError());
    return false;
  }

  /** Writes what is queued, then closes the channel and stops. */
  void closeAfterFlush() {
    queue.add(FLUSH_AND_CLOSE);
  }

  /** Stops after the frame being written (the caller closes the channel to cut that short). */
  void stop() {
    stopped = true;
    queue.add(STOP);
  }

  /** The writer thread, for joining on close. */
  Thread thread() {
    return thread;
  }

  private void run(NativeBuffer scratch) {
    try {
      while (true) {
        Object item = queue.take();
        if (item == STOP) {
          return;
        }
        if (item == FLUSH_AND_CLOSE) {
          stopped = true;
          channel.close();
          return;
        }
        OutboundFrame frame = (OutboundFrame) item;
        if (!frame.listener().onWriteStart()) {
          continue;
        }
        ByteBuffer[] bodies;
        try {
          bodies = toBuffers(frame.bodies());
        } catch (RuntimeException e) {
          // Nothing written yet: only this frame fails, the connection goes on.
          frame.listener().onWriteEnd(new UnwritableFrameException(e));
          continue;
        }
        try {
          write(frame, bodies, scratch);
        } catch (IOException | RuntimeException e) {
          frame.listener().onWriteEnd(e);
          stopped = true;
          onFailure.accept(e);
          return;
        }
        frame.listener().onWriteEnd(null);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      onFailure.accept(e);
    } finally {
      stopped = true;
      failQueued();
      scratch.close();
      onExit.run();
    }
  }

  private void failQueued() {
    List<Object> rest = new ArrayList<>();
    queue.drainTo(rest);
    for (Object item : rest) {
      if (item instanceof OutboundFrame frame) {
        frame.listener().onWriteEnd(closedError());
      }
    }
  }

  private static TqException closedError() {
    return new TqException(ErrorCode.CONNECTION_FAILED, "connection closed before the write");
  }

  private void write(OutboundFrame frame, ByteBuffer[] bodies, NativeBuffer scratch)
      throws IOException {
    long bodyLength = 0;
    for (ByteBuffer body : bodies) {
      bodyLength += body.remaining();
    }
    int metadataLength = frame.metadata().length;
    long prefixLength = FrameDescriptor.bodyOffset(metadataLength);
    NativeBuffer prefixBuffer =
        prefixLength <= scratch.lengthBytes() ? null : allocator.allocate(prefixLength);
    try {
      MemorySegment prefix =
          (prefixBuffer == null ? scratch : prefixBuffer).segment().asSlice(0, prefixLength);
      header
          .wrap(prefix)
          .writeHeader(
              frame.type(), frame.flags(), frame.correlationId(), metadataLength, bodyLength);
      header.putMetadata(MemorySegment.ofArray(frame.metadata()));
      ByteBuffer[] buffers = new ByteBuffer[bodies.length + 1];
      buffers[0] = prefix.asByteBuffer();
      System.arraycopy(bodies, 0, buffers, 1, bodies.length);
      int first = 0;
      while (first < buffers.length) {
        channel.write(buffers, first, IoWindow.length(buffers, first));
        while (first < buffers.length && !buffers[first].hasRemaining()) {
          first++;
        }
      }
    } finally {
      if (prefixBuffer != null) {
        prefixBuffer.close();
      }
    }
  }

  /** A frame whose bodies cannot be read (closed or thread-confined memory); nothing was sent. */
  static final class UnwritableFrameException extends TqException {
    private static final long serialVersionUID = 1L;

    UnwritableFrameException(RuntimeException cause) {
      super(
          ErrorCode.INVALID_ARGUMENT,
          "frame bodies cannot be read by the writer thread: " + Errors.describe(cause),
          cause);
    }
  }

  /**
   * The byte buffers over the segments, each at most 1 GiB.
   *
   * @throws IllegalStateException if a segment is closed or confined to another thread
   */
  static ByteBuffer[] toBuffers(List<MemorySegment> segments) {
    List<ByteBuffer> buffers = new ArrayList<>(segments.size());
    for (MemorySegment segment : segments) {
      if (!segment.scope().isAlive() || !segment.isAccessibleBy(Thread.currentThread())) {
        throw new IllegalStateException(
            "segment of " + segment.byteSize() + " bytes is closed or confined to another thread");
      }
      long size = segment.byteSize();
      if (size <= FrameReader.MAX_BUFFER_BYTES) {
        buffers.add(segment.asByteBuffer());
        continue;
      }
      for (long offset = 0; offset < size; offset += FrameReader.MAX_BUFFER_BYTES) {
        long length = Math.min(FrameReader.MAX_BUFFER_BYTES, size - offset);
        buffers.add(segment.asSlice(offset, length).asByteBuffer());
      }
    }
    return buffers.toArray(ByteBuffer[]::new);
  }
}
