package org.transferqueue.codec;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.msgpack.core.ExtensionTypeHeader;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
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
 * Stateless and thread-safe.
 */
public final class ValueDecoder {
  private static final MessagePack.UnpackerConfig CONFIG =
      new MessagePack.UnpackerConfig()
          .withActionOnMalformedString(CodingErrorAction.REPORT)
          .withActionOnUnmappableString(CodingErrorAction.REPORT);

  /** The first frame of upstream's whole-message pickle fallback, which Java never decodes. */
  private static final byte[] FALLBACK_SENTINEL = {(byte) 0xC1, (byte) 0xFE, (byte) 0xED};

  private static final BigInteger TWO_TO_63 = BigInteger.ONE.shiftLeft(63);

  private final MemorySegment mainSegment;
  private final MessageUnpacker unpacker;
  private final long mainLength;
  private final List<MemorySegment> aux;
  private final String valueName;
  private final BufferAllocator allocator;
  private final List<Tensor> copies = new ArrayList<>();

  private ValueDecoder(
      MemorySegment main, List<MemorySegment> aux, String valueName, BufferAllocator allocator) {
    this.mainSegment = main;
    this.unpacker = CONFIG.newUnpacker(asBuffer(main));
    this.mainLength = main.byteSize();
    this.aux = List.copyOf(aux);
    this.valueName = Objects.requireNonNull(valueName, "valueName");
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
    return new ValueDecoder(mainFrame, auxFrames, valueName, null).decodeWhole();
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
    return new ValueDecoder(mainFrame, auxFrames, valueName, allocator).decodeWhole();
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
      throw new TqException(
          ErrorCode.CORRUPT_DATA,
          "value "
              + valueName
              + " is not a column: expected an array, found "
              + (value == null ? "nil" : value.getClass().getSimpleName()));
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
        throw new TqException(
            ErrorCode.CORRUPT_DATA,
            "value "
                + valueName
                + " is not a column: expected an array, found "
                + (value == null ? "nil" : value.getClass().getSimpleName()));
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
      if (unpacker.hasNext()) {
        throw corrupt("has trailing bytes after the value", null);
      }
      return value;
    } catch (TqException e) {
      // CORRUPT_DATA from the checks here, or OUT_OF_MEMORY/CLOSED from the allocator.
      closeCopies();
      throw e;
    } catch (IOException | MessagePackException | ArithmeticException e) {
      closeCopies();
      throw corrupt("is not valid msgpack at offset=" + unpacker.getTotalReadBytes() + ": " + e, e);
    }
  }

  private void closeCopies() {
    for (Tensor copy : copies) {
      copy.close();
    }
    copies.clear();
  }

  private Object read(int depth) throws IOException {
    MessageFormat format = unpacker.getNextFormat();
    return switch (format.getValueType()) {
      case NIL -> {
        unpacker.unpackNil();
        yield null;
      }
      case BOOLEAN -> unpacker.unpackBoolean();
      case INTEGER -> {
        if (format == MessageFormat.UINT64) {
          BigInteger big = unpacker.unpackBigInteger();
          yield big.compareTo(TWO_TO_63) < 0 ? (Object) big.longValue() : big;
        }
        yield unpacker.unpackLong();
      }
      case FLOAT -> unpacker.unpackDouble();
      case STRING -> readString();
      case BINARY -> readPayload(unpacker.unpackBinaryHeader(), "binary");
      case ARRAY -> readArray(depth);
      case MAP -> readMap(depth);
      case EXTENSION -> readExtension();
    };
  }

  private String readString() throws IOException {
    byte[] bytes = readPayload(unpacker.unpackRawStringHeader(), "string");
    if (isAscii(bytes)) {
      return new String(bytes, StandardCharsets.US_ASCII);
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw corrupt("has a string that is not valid UTF-8", e);
    }
  }

  private static boolean isAscii(byte[] bytes) {
    for (byte b : bytes) {
      if (b < 0) {
        return false;
      }
    }
    return true;
  }

  private byte[] readPayload(int length, String what) throws IOException {
    checkRemaining(Integer.toUnsignedLong(length), 1, what + " of length");
    return unpacker.readPayload(length);
  }

  private List<Object> readArray(int depth) throws IOException {
    checkDepth(depth);
    int size = unpacker.unpackArrayHeader();
    checkRemaining(Integer.toUnsignedLong(size), 1, "array of size");
    List<Object> list = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      list.add(read(depth + 1));
    }
    return list;
  }

  private Map<Object, Object> readMap(int depth) throws IOException {
    checkDepth(depth);
    int size = unpacker.unpackMapHeader();
    checkRemaining(Integer.toUnsignedLong(size), 2, "map of size");
    Map<Object, Object> map = LinkedHashMap.newLinkedHashMap(size);
    for (int i = 0; i < size; i++) {
      long keyOffset = unpacker.getTotalReadBytes();
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

  private Object readExtension() throws IOException {
    long offset = unpacker.getTotalReadBytes();
    ExtensionTypeHeader header = unpacker.unpackExtensionTypeHeader();
    byte type = header.getType();
    byte[] payload = readPayload(header.getLength(), "extension payload");
    return switch (type) {
      case ValueDescriptor.EXT_OPAQUE, ValueDescriptor.EXT_CALLABLE ->
          new OpaqueValue(type, payload);
      case ValueDescriptor.EXT_TENSOR -> readTensor(payload, offset);
      default ->
          throw corrupt("has an unsupported extension type=" + type + " at offset=" + offset, null);
    };
  }

  private Tensor readTensor(byte[] payload, long offset) throws IOException {
    TensorReference ref = TensorReference.parse(payload, aux.size(), this, offset);
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
    long remaining = mainLength - unpacker.getTotalReadBytes();
    if (count > remaining / minBytesEach) {
      throw corrupt(
          "has a "
              + what
              + " "
              + count
              + " at offset="
              + unpacker.getTotalReadBytes()
              + " but only "
              + remaining
              + " bytes remain",
          null);
    }
  }

  private void checkDepth(int depth) {
    if (depth >= ValueDescriptor.MAX_DEPTH) {
      throw corrupt(
          "nests deeper than "
              + ValueDescriptor.MAX_DEPTH
              + " at offset="
              + unpacker.getTotalReadBytes(),
          null);
    }
  }

  TqException corrupt(String detail, Throwable cause) {
    return new TqException(ErrorCode.CORRUPT_DATA, "value " + valueName + " " + detail, cause);
  }

  /**
   * A heap buffer over the main frame. The msgpack library reads direct buffers through JDK
   * internals that are not exported, so native main frames (metadata only, never tensor bytes) are
   * copied to the heap once.
   */
  private static ByteBuffer asBuffer(MemorySegment main) {
    if (!main.isNative() && !main.isReadOnly() && main.heapBase().orElse(null) instanceof byte[]) {
      return main.asByteBuffer();
    }
    return ByteBuffer.wrap(main.toArray(ValueLayout.JAVA_BYTE));
  }

  /** The parsed payload of a tensor extension. */
  private record TensorReference(
      DType dtype, long[] shape, int bufferIndex, long byteOffset, long byteLength) {

    static TensorReference parse(byte[] payload, int auxCount, ValueDecoder owner, long offset)
        throws IOException {
      try (MessageUnpacker in = CONFIG.newUnpacker(payload)) {
        int fields = in.unpackArrayHeader();
        if (fields != 3 && fields != 5) {
          throw owner.corrupt(
              "has a tensor reference at offset=" + offset + " with " + fields + " fields", null);
        }
        String dtypeName = in.unpackString();
        DType dtype;
        try {
          dtype = DType.fromName(dtypeName);
        } catch (TqException e) {
          throw owner.corrupt(
              "has a tensor of unknown dtype '" + dtypeName + "' at offset=" + offset, e);
        }
        int rank = in.unpackArrayHeader();
        if (rank < 0 || rank > ValueDescriptor.MAX_RANK) {
          throw owner.corrupt(
              "has a tensor of rank " + Integer.toUnsignedString(rank) + " at offset=" + offset,
              null);
        }
        long[] shape = new long[rank];
        for (int i = 0; i < rank; i++) {
          shape[i] = in.unpackLong();
          if (shape[i] < 0) {
            throw owner.corrupt(
                "has a tensor with negative dimension " + shape[i] + " at offset=" + offset, null);
          }
        }
        int index = in.unpackInt();
        if (index < 1 || index > auxCount) {
          throw owner.corrupt(
              "has a tensor at offset="
                  + offset
                  + " referring to aux frame "
                  + index
                  + " of "
                  + auxCount,
              null);
        }
        long byteOffset = fields == 5 ? in.unpackLong() : 0;
        long byteLength = fields == 5 ? in.unpackLong() : -1;
        if (fields == 5 && (byteOffset < 0 || byteLength < 0)) {
          throw owner.corrupt(
              "has a tensor slice at offset="
                  + offset
                  + " with byte offset="
                  + byteOffset
                  + " length="
                  + byteLength,
              null);
        }
        if (in.hasNext()) {
          throw owner.corrupt("has trailing bytes in a tensor reference at offset=" + offset, null);
        }
        return new TensorReference(dtype, shape, index, byteOffset, byteLength);
      }
    }

    long nbytes() {
      long total = dtype.byteSize();
      for (long dim : shape) {
        total = Math.multiplyExact(total, dim);
      }
      return total;
    }
  }
}
