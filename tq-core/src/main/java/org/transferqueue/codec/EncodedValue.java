package org.transferqueue.codec;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.transferqueue.tensor.Tensor;

/**
 * An object value encoded by {@link ValueEncoder}: the msgpack main frame and the tensors whose
 * bytes form the aux frames, in buffer-index order.
 *
 * <p>The aux tensors are the caller's own tensors, not copies: this value borrows them and is valid
 * only while they are open. Writing the frames (to a socket or with {@link #packInto}) copies each
 * tensor byte once, straight from the tensor's segment. Immutable apart from the borrowed tensor
 * memory.
 *
 * @param mainFrame the msgpack bytes (metadata only, no tensor bytes)
 * @param auxTensors the tensors referenced by buffer indices 1..n
 */
public record EncodedValue(byte[] mainFrame, List<Tensor> auxTensors) {
  /** Checks for nulls and freezes the tensor list. */
  public EncodedValue {
    Objects.requireNonNull(mainFrame, "mainFrame");
    auxTensors = List.copyOf(auxTensors);
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
   * The frames as segments: the main frame (a heap segment over {@link #mainFrame()}) followed by
   * each tensor's segment.
   *
   * @return a new list of views; valid while the tensors are open
   */
  public List<MemorySegment> frames() {
    List<MemorySegment> frames = new ArrayList<>(frameCount());
    frames.add(MemorySegment.ofArray(mainFrame));
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
    long[] sizes = new long[frameCount()];
    sizes[0] = mainFrame.length;
    for (int i = 0; i < auxTensors.size(); i++) {
      sizes[i + 1] = auxTensors.get(i).nbytes();
    }
    return PackedBufferDescriptor.packedSize(sizes);
  }

  /**
   * Writes the frames into a packed buffer at the start of {@code target}.
   *
   * @param target the destination, at least {@link #packedSize()} bytes; the caller keeps it
   * @return the packed length written
   * @throws org.transferqueue.TqException as {@link PackedBufferWriter#packInto}
   */
  public long packInto(MemorySegment target) {
    return PackedBufferWriter.packInto(target, frames());
  }
}
