package org.transferqueue.codec;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;

/**
 * Stores object values as packed buffers: the frames of {@link ValueEncoder} laid out as in {@link
 * PackedBufferDescriptor}, so a key-value store can keep one value (with its tensors) under one
 * key.
 *
 * <p>Stateless and thread-safe. Tensor bytes are copied once, from the caller's tensors straight
 * into the target buffer; decoding returns read-only views of the buffer ({@link #unpack}) or
 * independent copies ({@link #unpackCopying}).
 *
 * <pre>{@code
 * List<MemorySegment> packed =
 *     PackedValueCodec.batchEncodeInto(values, sizes -> store.allocateAll(sizes));
 * List<Object> back = PackedValueCodec.batchDecodeFrom(packed, keys);
 * }</pre>
 */
public final class PackedValueCodec {
  private PackedValueCodec() {}

  /**
   * Decodes a packed value; tensors are read-only views of {@code packed}.
   *
   * @param packed the packed bytes (trailing bytes past the packed length are ignored)
   * @param valueName what is being decoded, for error messages (for example the key)
   * @return the value, valid while {@code packed} is
   * @throws TqException with {@code CORRUPT_DATA} naming the value for a malformed buffer or value
   */
  public static Object unpack(MemorySegment packed, String valueName) {
    PackedBufferReader reader = read(packed, valueName);
    return ValueDecoder.decode(reader.item(0), auxFrames(reader), valueName);
  }

  /**
   * Decodes a packed value; tensors are independent copies from {@code allocator}.
   *
   * @param packed the packed bytes
   * @param valueName what is being decoded, for error messages
   * @param allocator where tensor copies are allocated
   * @return the value; the caller owns its tensors ({@link ValueDecoder#closeTensors})
   * @throws TqException with {@code CORRUPT_DATA} naming the value for a malformed buffer or value
   */
  public static Object unpackCopying(
      MemorySegment packed, String valueName, BufferAllocator allocator) {
    PackedBufferReader reader = read(packed, valueName);
    return ValueDecoder.decodeCopying(reader.item(0), auxFrames(reader), valueName, allocator);
  }

  /**
   * Encodes values, asks for all buffers at once, and packs value {@code i} into buffer {@code i}.
   *
   * @param values the values to store
   * @param allocate called exactly once (also for no values) with the packed sizes; returns one
   *     target per size, each at least that large; the caller keeps ownership of the targets
   * @return per value, the slice {@code [0, packedSize)} of its target
   * @throws TqException with {@code INVALID_ARGUMENT} if a value cannot be encoded (before {@code
   *     allocate} is called) or if {@code allocate} returns the wrong number of targets or one too
   *     small
   */
  public static List<MemorySegment> batchEncodeInto(
      List<?> values, Function<long[], List<MemorySegment>> allocate) {
    Objects.requireNonNull(allocate, "allocate");
    List<EncodedValue> encoded = new ArrayList<>(values.size());
    long[] sizes = new long[values.size()];
    for (int i = 0; i < sizes.length; i++) {
      EncodedValue value = ValueEncoder.encode(values.get(i));
      encoded.add(value);
      sizes[i] = value.packedSize();
    }
    List<MemorySegment> targets = allocate.apply(sizes.clone());
    if (targets == null || targets.size() != sizes.length) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "allocator returned "
              + (targets == null ? "null" : targets.size() + " buffers")
              + " for "
              + sizes.length
              + " values");
    }
    List<MemorySegment> packed = new ArrayList<>(sizes.length);
    for (int i = 0; i < sizes.length; i++) {
      MemorySegment target = targets.get(i);
      encoded.get(i).packInto(target);
      packed.add(target.asSlice(0, sizes[i]));
    }
    return packed;
  }

  /**
   * Decodes packed values; tensors are read-only views of the buffers, which must stay valid as
   * long as the values are used.
   *
   * @param buffers the packed buffers
   * @param valueNames one name per buffer for error messages (for example the keys)
   * @return the values in order
   * @throws TqException with {@code CORRUPT_DATA} naming the first malformed value, {@code
   *     INVALID_ARGUMENT} if the lists differ in length
   */
  public static List<Object> batchDecodeFrom(List<MemorySegment> buffers, List<String> valueNames) {
    if (buffers.size() != valueNames.size()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          buffers.size() + " buffers but " + valueNames.size() + " value names");
    }
    List<Object> values = new ArrayList<>(buffers.size());
    ByteScratch scratch = new ByteScratch();
    for (int i = 0; i < buffers.size(); i++) {
      String valueName = valueNames.get(i);
      PackedBufferReader reader = read(buffers.get(i), valueName);
      values.add(ValueDecoder.decode(reader.item(0), auxFrames(reader), valueName, scratch));
    }
    return values;
  }

  private static PackedBufferReader read(MemorySegment packed, String valueName) {
    PackedBufferReader reader = new PackedBufferReader().wrap(packed, valueName);
    if (reader.itemCount() == 0) {
      throw new TqException(
          ErrorCode.CORRUPT_DATA,
          "packed value " + valueName + " is corrupt: it has no frames, needs a main frame");
    }
    return reader;
  }

  private static List<MemorySegment> auxFrames(PackedBufferReader reader) {
    List<MemorySegment> aux = new ArrayList<>(reader.itemCount() - 1);
    for (int i = 1; i < reader.itemCount(); i++) {
      aux.add(reader.item(i));
    }
    return aux;
  }
}
