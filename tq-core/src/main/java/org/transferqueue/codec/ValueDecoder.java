package org.transferqueue.codec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Decodes object values encoded as described in {@link ValueDescriptor} from a main frame and its
 * aux frames.
 *
 * <p>Tensors come back in one of two forms, chosen by the entry point:
 *
 * <ul>
 *   <li>{@link #decode}: read-only views over the aux frames, zero-copy; they own nothing and are
 *       valid only while the frames' memory is.
 *   <li>{@link #decodeCopying}: independent, writable tensors allocated from the given allocator;
 *       the caller owns them and closes them, for example with {@link #closeTensors}.
 * </ul>
 *
 * <p>Every length in the input is checked against the bytes that remain before anything is
 * allocated, so a lying length, a truncated frame, invalid msgpack or UTF-8, an unknown extension
 * type, an unknown dtype or an aux frame of the wrong size is reported as {@link
 * ErrorCode#CORRUPT_DATA} naming the value and the byte offset, never as an out-of-bounds read.
 *
 * <p>The main frame is read in place, heap or native, without a copy of the whole frame; each
 * string or binary is copied once, from the frame into its value. Strings are strict UTF-8 at the
 * cost of the JDK's own decoder (ASCII is a bulk copy). Stateless and thread-safe.
 */
public final class ValueDecoder {
  /** The first frame of upstream's whole-message pickle fallback, which Java never decodes. */
  private static final byte[] FALLBACK_SENTINEL = {(byte) 0xC1, (byte) 0xFE, (byte) 0xED};

  private final MemorySegment mainSegment;
  private final MsgpackReader in;
  private final long mainLength;
  private final List<MemorySegment> aux;
  private final String valueName;
  private final BufferAllocator allocator;
  private final List<Tensor> copies = new ArrayList<>();

  private ValueDecoder(
      MemorySegment main,
      List<MemorySegment> aux,
      String valueName,
      BufferAllocator allocator,
      ByteScratch scratch) {
    this.valueName = Objects.requireNonNull(valueName, "valueName");
    this.mainSegment = main;
    this.in = new MsgpackReader(main, 0, valueName, scratch);
    this.mainLength = main.byteSize();
    this.aux = List.copyOf(aux);
    this.allocator = allocator;
  }

  /**
   * Decodes a value; tensors are read-only views over the aux frames.
   *
   * @param mainFrame the msgpack main frame
   * @param auxFrames the aux frames, buffer index 1 first
   * @param valueName what is being decoded, for error messages (for example a key)
   * @return the value; its tensors own nothing and are valid while the frames are
   * @throws TqException with {@code CORRUPT_DATA} naming the value for any malformed input
   */
  public static Object decode(
      MemorySegment mainFrame, List<MemorySegment> auxFrames, String valueName) {
    return decode(mainFrame, auxFrames, valueName, new ByteScratch());
  }

  /**
   * As {@link #decode(MemorySegment, List, String)}, staging strings in {@code scratch}.
   *
   * @param scratch shared by the values one thread decodes in a row
   */
  static Object decode(
      MemorySegment mainFrame,
      List<MemorySegment> auxFrames,
      String valueName,
      ByteScratch scratch) {
    return new ValueDecoder(mainFrame, auxFrames, valueName, null, scratch).decodeWhole();
  }

  /**
   * Decodes a value; tensors are independent copies allocated from {@code allocator}.
   *
   * @param mainFrame the msgpack main frame
   * @param auxFrames the aux frames, buffer index 1 first
   * @param valueName what is being decoded, for error messages
   * @param allocator where the tensor copies are allocated
   * @return the value; the caller owns every tensor in it and must close them ({@link
   *     #closeTensors}); on failure nothing stays allocated
   * @throws TqException with {@code CORRUPT_DATA} naming the value for any malformed input, or
   *     {@code OUT_OF_MEMORY} from the allocator
   */
  public static Object decodeCopying(
      MemorySegment mainFrame,
      List<MemorySegment> auxFrames,
      String valueName,
      BufferAllocator allocator) {
    Objects.requireNonNull(allocator, "allocator");
    return new ValueDecoder(mainFrame, auxFrames, valueName, allocator, new ByteScratch())
        .decodeWhole();
  }

  /**
   * Decodes a column of object values encoded by {@link ValueEncoder#encodeColumn}; tensors are
   * read-only views, as with {@link #decode}.
   *
   * @param mainFrame the msgpack main frame
   * @param auxFrames the aux frames
   * @param valueName what is being decoded, for error messages
   * @return the row values
   * @throws TqException with {@code CORRUPT_DATA} if the input is malformed or not an array
   */
  public static List<Object> decodeColumn(
      MemorySegment mainFrame, List<MemorySegment> auxFrames, String valueName) {
    Object value = decode(mainFrame, auxFrames, valueName);
    if (!(value instanceof List<?> rows)) {
      throw notAColumn(valueName, value);
    }
    @SuppressWarnings("unchecked")
    List<Object> column = (List<Object>) rows;
    return column;
  }

  /**
   * Decodes an object column encoded by {@link ValueEncoder#encodeColumn(ObjectColumn)}; its
   * tensors are independent copies owned by the returned column.
   *
   * @param mainFrame the msgpack main frame
   * @param auxFrames the aux frames
   * @param valueName what is being decoded, for error messages
   * @param allocator where the tensor copies are allocated
   * @return a column the caller owns and must close; on failure nothing stays allocated
   * @throws TqException with {@code CORRUPT_DATA} if the input is malformed, not an array, or holds
   *     a value an object column does not accept (such as a map key of another type)
   */
  public static ObjectColumn decodeObjectColumn(
      MemorySegment mainFrame,
      List<MemorySegment> auxFrames,
      String valueName,
      BufferAllocator allocator) {
    Object value = decodeCopying(mainFrame, auxFrames, valueName, allocator);
    try {
      if (!(value instanceof List<?> rows)) {
        throw notAColumn(valueName, value);
      }
      return new ObjectColumn(rows);
    } catch (TqException e) {
      closeTensors(value);
      if (e.code() == ErrorCode.CORRUPT_DATA) {
        throw e;
      }
      throw new TqException(
          ErrorCode.CORRUPT_DATA,
          "value " + valueName + " is not a valid object column: " + e.getMessage(),
          e);
    }
  }

  /**
   * Closes every tensor inside a decoded value (in lists, map keys and values); other values are
   * ignored. Closing a view does nothing, so this is safe on the result of either entry point.
   *
   * @param value a decoded value
   */
  public static void closeTensors(Object value) {
    switch (value) {
      case Tensor tensor -> tensor.close();
      case Collection<?> list -> list.forEach(ValueDecoder::closeTensors);
      case Map<?, ?> map ->
          map.forEach(
              (key, element) -> {
                closeTensors(key);
                closeTensors(element);
              });
      case null, default -> {}
    }
  }

  private Object decodeWhole() {
    if (!aux.isEmpty() && mainLength == FALLBACK_SENTINEL.length) {
      byte[] head = new byte[FALLBACK_SENTINEL.length];
      MemorySegment.copy(mainSegment, ValueLayout.JAVA_BYTE, 0, head, 0, head.length);
      if (Arrays.equals(head, FALLBACK_SENTINEL)) {
        throw corrupt("uses the unsupported encoding of a pickled whole message", null);
      }
    }
    try {
      Object value = read(0);
      if (in.hasRemaining()) {
        throw corrupt("has trailing bytes after the value at offset=" + in.offset(), null);
      }
      return value;
    } catch (TqException e) {
      // CORRUPT_DATA from the checks here, or OUT_OF_MEMORY/CLOSED from the allocator.
      closeCopies();
      throw e;
    } catch (ArithmeticException e) {
      closeCopies();
      throw corrupt("is not valid msgpack at offset=" + in.offset() + ": " + e, e);
    }
  }

  private void closeCopies() {
    for (Tensor copy : copies) {
      copy.close();
    }
    copies.clear();
  }

  private Object read(int depth) {
    long offset = in.offset();
    int format = in.readFormat();
    if (format <= 0x7F || format >= 0xE0) {
      return (long) (byte) format; // positive or negative fixint
    }
    if (format >= 0xA0 && format <= 0xBF) {
      return readString(format & 0x1F);
    }
    if (format >= 0x90 && format <= 0x9F) {
      return readArray(format & 0x0F, depth);
    }
    if (format >= 0x80 && format <= 0x8F) {
      return readMap(format & 0x0F, depth);
    }
    return switch (format) {
      case MsgpackReader.NIL -> null;
      case MsgpackReader.FALSE -> Boolean.FALSE;
      case MsgpackReader.TRUE -> Boolean.TRUE;
      case MsgpackReader.BIN8 -> readBinary(in.readU8());
      case MsgpackReader.BIN16 -> readBinary(in.readU16());
      case MsgpackReader.BIN32 -> readBinary(in.readLength32());
      case MsgpackReader.EXT8 -> readExtension(in.readU8(), offset);
      case MsgpackReader.EXT16 -> readExtension(in.readU16(), offset);
      case MsgpackReader.EXT32 -> readExtension(in.readLength32(), offset);
      case MsgpackReader.FLOAT32 -> (double) Float.intBitsToFloat(in.readI32());
      case MsgpackReader.FLOAT64 -> Double.longBitsToDouble(in.readI64());
      case MsgpackReader.UINT8 -> (long) in.readU8();
      case MsgpackReader.UINT16 -> (long) in.readU16();
      case MsgpackReader.UINT32 -> in.readU32();
      case MsgpackReader.UINT64 -> in.readUint64();
      case MsgpackReader.INT8 -> (long) in.readI8();
      case MsgpackReader.INT16 -> (long) in.readI16();
      case MsgpackReader.INT32 -> (long) in.readI32();
      case MsgpackReader.INT64 -> in.readI64();
      case MsgpackReader.FIXEXT1 -> readExtension(1, offset);
      case MsgpackReader.FIXEXT2 -> readExtension(2, offset);
      case MsgpackReader.FIXEXT4 -> readExtension(4, offset);
      case MsgpackReader.FIXEXT8 -> readExtension(8, offset);
      case MsgpackReader.FIXEXT16 -> readExtension(16, offset);
      case MsgpackReader.STR8 -> readString(in.readU8());
      case MsgpackReader.STR16 -> readString(in.readU16());
      case MsgpackReader.STR32 -> readString(in.readLength32());
      case MsgpackReader.ARRAY16 -> readArray(in.readU16(), depth);
      case MsgpackReader.ARRAY32 -> readArray(in.readLength32(), depth);
      case MsgpackReader.MAP16 -> readMap(in.readU16(), depth);
      case MsgpackReader.MAP32 -> readMap(in.readLength32(), depth);
      default -> throw in.invalid(offset, "format byte 0xc1 is never used");
    };
  }

  private String readString(int length) {
    checkRemaining(length, 1, "string of length");
    return in.readString(length);
  }

  private byte[] readBinary(int length) {
    checkRemaining(length, 1, "binary of length");
    return in.readBytes(length);
  }

  private List<Object> readArray(int size, int depth) {
    checkDepth(depth);
    checkRemaining(size, 1, "array of size");
    List<Object> list = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      list.add(read(depth + 1));
    }
    return list;
  }

  private Map<Object, Object> readMap(int size, int depth) {
    checkDepth(depth);
    checkRemaining(size, 2, "map of size");
    Map<Object, Object> map = LinkedHashMap.newLinkedHashMap(size);
    for (int i = 0; i < size; i++) {
      long keyOffset = in.offset();
      Object key = read(depth + 1);
      if (key instanceof Tensor || key instanceof Map) {
        throw corrupt("has a map key at offset=" + keyOffset + " that is a tensor or map", null);
      }
      if (map.containsKey(key)) {
        throw corrupt("has a duplicate map key " + key + " at offset=" + keyOffset, null);
      }
      map.put(key, read(depth + 1));
    }
    return map;
  }

  private Object readExtension(int length, long offset) {
    byte type = in.readI8();
    checkRemaining(length, 1, "extension payload of length");
    return switch (type) {
      case ValueDescriptor.EXT_OPAQUE, ValueDescriptor.EXT_CALLABLE ->
          new OpaqueValue(type, in.readBytes(length));
      case ValueDescriptor.EXT_TENSOR -> {
        long payloadOffset = in.offset();
        MsgpackReader payload =
            new MsgpackReader(in.slice(length), payloadOffset, valueName, in.scratch());
        yield readTensor(TensorReference.parse(payload, aux.size(), offset), offset);
      }
      default ->
          throw corrupt("has an unsupported extension type=" + type + " at offset=" + offset, null);
    };
  }

  private Tensor readTensor(TensorReference ref, long offset) {
    MemorySegment frame = aux.get(ref.bufferIndex() - 1);
    long nbytes = ref.nbytes();
    long start = ref.byteOffset();
    long length = ref.byteLength() < 0 ? frame.byteSize() - start : ref.byteLength();
    if (start < 0 || length < 0 || start > frame.byteSize() - length || length != nbytes) {
      throw corrupt(
          "has a "
              + ref.dtype()
              + " tensor of shape "
              + Arrays.toString(ref.shape())
              + " (nbytes="
              + nbytes
              + ") at offset="
              + offset
              + " but aux frame "
              + ref.bufferIndex()
              + " has "
              + frame.byteSize()
              + " bytes"
              + (ref.byteLength() < 0 ? "" : " (slice at " + start + " of " + length + ")"),
          null);
    }
    MemorySegment bytes = frame.asSlice(start, length);
    if (allocator == null) {
      return Tensor.wrap(ref.dtype(), bytes.asReadOnly(), ref.shape());
    }
    Tensor copy = Tensor.allocate(allocator, ref.dtype(), ref.shape());
    copies.add(copy);
    MemorySegment.copy(bytes, 0, copy.segment(), 0, length);
    return copy;
  }

  private void checkRemaining(long count, long minBytesEach, String what) {
    long remaining = in.remaining();
    if (count > remaining / minBytesEach) {
      throw corrupt(
          "has a "
              + what
              + " "
              + count
              + " at offset="
              + in.offset()
              + " but only "
              + remaining
              + " bytes remain",
          null);
    }
  }

  private void checkDepth(int depth) {
    if (depth >= ValueDescriptor.MAX_DEPTH) {
      throw corrupt(
          "nests deeper than " + ValueDescriptor.MAX_DEPTH + " at offset=" + in.offset(), null);
    }
  }

  private TqException corrupt(String detail, Throwable cause) {
    return in.corrupt(detail, cause);
  }

  /** The parsed payload of a tensor extension. */
  private record TensorReference(
      DType dtype, long[] shape, int bufferIndex, long byteOffset, long byteLength) {

    static TensorReference parse(MsgpackReader in, int auxCount, long offset) {
      int fields = in.readArrayHeader();
      if (fields != 3 && fields != 5) {
        throw in.corrupt(
            "has a tensor reference at offset=" + offset + " with " + fields + " fields", null);
      }
      String dtypeName = in.readString();
      DType dtype;
      try {
        dtype = DType.fromName(dtypeName);
      } catch (TqException e) {
        throw in.corrupt(
            "has a tensor of unknown dtype '" + dtypeName + "' at offset=" + offset, e);
      }
      int rank = in.readArrayHeader();
      if (rank > ValueDescriptor.MAX_RANK) {
        throw in.corrupt("has a tensor of rank " + rank + " at offset=" + offset, null);
      }
      long[] shape = new long[rank];
      for (int i = 0; i < rank; i++) {
        shape[i] = in.readLong();
        if (shape[i] < 0) {
          throw in.corrupt(
              "has a tensor with negative dimension " + shape[i] + " at offset=" + offset, null);
        }
      }
      long index = in.readLong();
      if (index < 1 || index > auxCount) {
        throw in.corrupt(
            "has a tensor at offset="
                + offset
                + " referring to aux frame "
                + index
                + " of "
                + auxCount,
            null);
      }
      long byteOffset = fields == 5 ? in.readLong() : 0;
      long byteLength = fields == 5 ? in.readLong() : -1;
      if (fields == 5 && (byteOffset < 0 || byteLength < 0)) {
        throw in.corrupt(
            "has a tensor slice at offset="
                + offset
                + " with byte offset="
                + byteOffset
                + " length="
                + byteLength,
            null);
      }
      if (in.hasRemaining()) {
        throw in.corrupt("has trailing bytes in a tensor reference at offset=" + offset, null);
      }
      return new TensorReference(dtype, shape, (int) index, byteOffset, byteLength);
    }

    long nbytes() {
      long total = dtype.byteSize();
      for (long dim : shape) {
        total = Math.multiplyExact(total, dim);
      }
      return total;
    }
  }

  private static TqException notAColumn(String valueName, Object value) {
    return new TqException(
        ErrorCode.CORRUPT_DATA,
        "value "
            + valueName
            + " is not a column: expected an array, found "
            + (value == null ? "nil" : value.getClass().getSimpleName()));
  }
}
