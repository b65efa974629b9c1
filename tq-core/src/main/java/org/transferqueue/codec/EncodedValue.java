package org.transferqueue.codec;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.Tensor;

/**
 * An object value encoded by {@link ValueEncoder}: the msgpack main frame and the tensors whose
 * bytes form the aux frames, in buffer-index order.
 *
 * <p>The main frame is held as a gather list: headers and short payloads in one heap array, long
 * strings and binaries by reference. {@link #packInto} and {@link #writeMainFrame} copy each of
 * those bytes once, straight into the destination; {@link #mainFrame()} assembles a new array.
 *
 * <p>The aux tensors are the caller's own tensors, not copies: this value borrows them and is valid
 * only while they are open. Writing the frames (to a socket or with {@link #packInto}) copies each
 * tensor byte once, straight from the tensor's segment. Likewise a {@code byte[]} value of 256
 * bytes or more is borrowed and must not change while this value is in use. Immutable apart from
 * the borrowed memory; safe to read from several threads.
 */
public final class EncodedValue {
  private final MsgpackWriter main;
  private final List<Tensor> auxTensors;

  /**
   * Wraps an already encoded main frame.
   *
   * @param mainFrame the msgpack bytes (metadata only, no tensor bytes); borrowed, not copied
   * @param auxTensors the tensors referenced by buffer indices 1..n
   */
  public EncodedValue(byte[] mainFrame, List<Tensor> auxTensors) {
    this(MsgpackWriter.of(Objects.requireNonNull(mainFrame, "mainFrame")), auxTensors);
  }

  EncodedValue(MsgpackWriter main, List<Tensor> auxTensors) {
    this.main = main;
    this.auxTensors = List.copyOf(auxTensors);
  }

  /**
   * The msgpack main frame as one array.
   *
   * @return a new array on each call, holding the main frame's bytes
   * @throws org.transferqueue.TqException with {@code INVALID_ARGUMENT} if the frame is too large
   *     for a Java array
   */
  public byte[] mainFrame() {
    return main.toByteArray();
  }

  /**
   * The length of the main frame.
   *
   * @return its bytes, without building it
   */
  public long mainFrameSize() {
    return main.size();
  }

  /**
   * Copies the main frame into {@code target} at {@code offset}.
   *
   * @param target the destination, heap or native; the caller keeps it
   * @param offset where the frame starts
   * @throws IndexOutOfBoundsException if {@link #mainFrameSize()} bytes do not fit from {@code
   *     offset}
   */
  public void writeMainFrame(MemorySegment target, long offset) {
    Objects.checkFromIndexSize(offset, main.size(), target.byteSize());
    main.writeTo(target, offset);
  }

  /**
   * Copies the main frame into a new native buffer of exactly its size, for a transport to write
   * from (a heap array would be copied once more into a temporary direct buffer by the channel).
   *
   * @param allocator where the buffer comes from
   * @return the buffer holding the frame; the caller owns it and closes it once it is written
   * @throws org.transferqueue.TqException {@code OUT_OF_MEMORY} from the allocator
   */
  public NativeBuffer copyMainFrame(BufferAllocator allocator) {
    NativeBuffer frame = allocator.allocate(main.size());
    try {
      main.writeTo(frame.segment(), 0);
      return frame;
    } catch (RuntimeException e) {
      frame.close();
      throw e;
    }
  }

  /**
   * The tensors referenced by buffer indices 1..n.
   *
   * @return an unmodifiable list of the borrowed tensors
   */
  public List<Tensor> auxTensors() {
    return auxTensors;
  }

  /**
   * The number of frames: one main frame plus one per tensor.
   *
   * @return {@code 1 + auxTensors().size()}
   */
  public int frameCount() {
    return 1 + auxTensors.size();
  }

  /**
   * The frames as segments: the main frame (a heap segment over a new {@link #mainFrame()})
   * followed by each tensor's segment.
   *
   * @return a new list of views; valid while the tensors are open
   */
  public List<MemorySegment> frames() {
    List<MemorySegment> frames = new ArrayList<>(frameCount());
    frames.add(MemorySegment.ofArray(mainFrame()));
    for (Tensor tensor : auxTensors) {
      frames.add(tensor.segment());
    }
    return frames;
  }

  /**
   * The packed-buffer length of these frames.
   *
   * @return {@code 4 + 8 * frameCount() + total frame bytes}
   * @throws org.transferqueue.TqException with {@code INVALID_ARGUMENT} if a frame exceeds the
   *     format's 32-bit sizes
   */
  public long packedSize() {
    return PackedBufferDescriptor.packedSize(frameSizes());
  }

  /**
   * Writes the frames into a packed buffer at the start of {@code target}.
   *
   * @param target the destination, at least {@link #packedSize()} bytes; the caller keeps it
   * @return the packed length written
   * @throws org.transferqueue.TqException as {@link PackedBufferWriter#packInto}
   */
  public long packInto(MemorySegment target) {
    long[] sizes = frameSizes();
    long packedSize = PackedBufferWriter.writeTable(target, sizes);
    long offset = PackedBufferDescriptor.payloadOffset(sizes.length);
    main.writeTo(target, offset);
    offset += sizes[0];
    for (int i = 0; i < auxTensors.size(); i++) {
      MemorySegment.copy(auxTensors.get(i).segment(), 0, target, offset, sizes[i + 1]);
      offset += sizes[i + 1];
    }
    return packedSize;
  }

  private long[] frameSizes() {
    long[] sizes = new long[frameCount()];
    sizes[0] = main.size();
    for (int i = 0; i < auxTensors.size(); i++) {
      sizes[i + 1] = auxTensors.get(i).segment().byteSize();
    }
    return sizes;
  }
}
