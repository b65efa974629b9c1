package org.transferqueue.codec;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.Strings;
import org.transferqueue.TqException;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Encodes object values (null, Boolean, integers, Double, String, byte[], List, Map, and tensors
 * nested inside them) into msgpack frames as described in {@link ValueDescriptor}.
 *
 * <p>Only the structure goes into the heap main frame; tensor bytes stay in the tensors and become
 * aux frames. Long strings and binaries are not buffered either: the main frame keeps them by
 * reference and {@link EncodedValue#packInto} copies them once, straight into the destination. The
 * bytes are those msgpack-core's packer writes for the same values. Stateless and thread-safe: each
 * call has its own writer and aux-frame list, so concurrent encodes never mix buffers.
 *
 * <pre>{@code
 * EncodedValue encoded = ValueEncoder.encode(Map.of("reward", 1.5, "logits", tensor));
 * NativeBuffer packed = allocator.allocate(encoded.packedSize());
 * encoded.packInto(packed.segment());
 * }</pre>
 */
public final class ValueEncoder {
  private static final int MAX_PATH_CHARS = 160;
  private static final BigInteger MIN_INT = BigInteger.valueOf(Long.MIN_VALUE);
  private static final BigInteger MAX_UINT = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

  /** Small first buffer: most values are short; long payloads are borrowed, not buffered. */
  private static final int INITIAL_BYTES = 256;

  private final MsgpackWriter packer = new MsgpackWriter(INITIAL_BYTES);
  private final List<Tensor> tensors = new ArrayList<>();

  private ValueEncoder() {}

  /**
   * Encodes one value.
   *
   * @param value the value; tensors inside it are borrowed by the result, not copied
   * @return the main frame and the aux tensors
   * @throws TqException with {@code INVALID_ARGUMENT} naming the type and the path (such as {@code
   *     $["a"][2]}) of a value that cannot be encoded: an unsupported type, an integer outside
   *     [-2^63, 2^64 - 1], a string (value or map key) with a lone surrogate, which has no UTF-8
   *     form (shown escaped, with its index), nesting deeper than {@link ValueDescriptor#MAX_DEPTH}
   *     (a cycle)
   */
  public static EncodedValue encode(Object value) {
    ValueEncoder encoder = new ValueEncoder();
    try {
      encoder.write(value, 0);
    } catch (PathFailure failure) {
      String path =
          failure.path.length() <= MAX_PATH_CHARS
              ? failure.path
              : failure.path.substring(0, MAX_PATH_CHARS) + "...";
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, failure.getMessage().replace("{path}", "$" + path));
    }
    return new EncodedValue(encoder.packer, encoder.tensors);
  }

  /**
   * Encodes a column of object values, one per row, as one msgpack array.
   *
   * @param rows the row values
   * @return the encoded column; decode it with {@link ValueDecoder#decodeColumn}
   * @throws TqException as {@link #encode}
   */
  public static EncodedValue encodeColumn(List<?> rows) {
    return encode(rows);
  }

  /**
   * Encodes an object column as one msgpack array of its row values.
   *
   * @param column the column; its tensors are borrowed by the result, not copied
   * @return the encoded column; decode it with {@link ValueDecoder#decodeObjectColumn}
   * @throws TqException as {@link #encode}
   */
  public static EncodedValue encodeColumn(ObjectColumn column) {
    return encode(column.values());
  }

  private void write(Object value, int depth) {
    switch (value) {
      case null -> packer.writeNil();
      case Boolean b -> packer.writeBoolean(b);
      case Long l -> packer.writeLong(l);
      case Integer i -> packer.writeLong(i);
      case Short s -> packer.writeLong(s);
      case Byte b -> packer.writeLong(b);
      case BigInteger big -> writeBigInteger(big);
      case Double d -> packer.writeDouble(d);
      case Float f -> packer.writeDouble(f);
      case String s -> {
        // A lone surrogate has no UTF-8 form (getBytes would write '?'): refused, never changed.
        int loneSurrogate = Strings.loneSurrogate(s);
        if (loneSurrogate >= 0) {
          throw new PathFailure(
              Strings.notWellFormed(s, loneSurrogate, "string at {path}").getMessage());
        }
        // String.getBytes has an intrinsic ASCII fast path, and the array it returns is ours, so
        // a long one is borrowed by the frame and copied once more, into the destination. Bytes
        // as msgpack-core's: a string header, then the UTF-8.
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        packer.writeStringHeader(utf8.length);
        packer.writePayload(utf8);
      }
      case byte[] bytes -> {
        packer.writeBinaryHeader(bytes.length);
        packer.writePayload(bytes);
      }
      case Tensor tensor -> writeTensor(tensor);
      case OpaqueValue opaque -> {
        byte[] payload = opaque.payload();
        packer.writeExtensionHeader((byte) opaque.extensionType(), payload.length);
        packer.writePayload(payload);
      }
      case Collection<?> list -> writeCollection(list, depth);
      case Map<?, ?> map -> writeMap(map, depth);
      default ->
          throw new PathFailure(
              "value of type "
                  + value.getClass().getName()
                  + " at {path} cannot be encoded; supported: null, Boolean, Long (and narrower"
                  + " integers), BigInteger, Double, Float, String, byte[], List, Map, Tensor");
    }
  }

  private void writeBigInteger(BigInteger value) {
    if (value.compareTo(MIN_INT) < 0 || value.compareTo(MAX_UINT) > 0) {
      throw new PathFailure(
          "integer " + value + " at {path} is outside the encodable range [-2^63, 2^64 - 1]");
    }
    if (value.bitLength() <= 63) {
      packer.writeLong(value.longValue());
    } else {
      packer.writeUint64(value.longValue());
    }
  }

  private void writeTensor(Tensor tensor) {
    tensors.add(tensor);
    long[] shape = tensor.shape();
    MsgpackWriter payload = new MsgpackWriter(32 + 9 * shape.length);
    payload.writeArrayHeader(3);
    byte[] dtype = tensor.dtype().torchName().getBytes(StandardCharsets.UTF_8);
    payload.writeStringHeader(dtype.length);
    payload.writePayload(dtype);
    payload.writeArrayHeader(shape.length);
    for (long dim : shape) {
      payload.writeLong(dim);
    }
    payload.writeLong(tensors.size());
    byte[] bytes = payload.toByteArray();
    packer.writeExtensionHeader(ValueDescriptor.EXT_TENSOR, bytes.length);
    packer.writePayload(bytes);
  }

  private void writeCollection(Collection<?> list, int depth) {
    checkDepth(depth);
    packer.writeArrayHeader(list.size());
    int index = 0;
    for (Object element : list) {
      try {
        write(element, depth + 1);
      } catch (PathFailure failure) {
        throw failure.under("[" + index + "]");
      }
      index++;
    }
  }

  private void writeMap(Map<?, ?> map, int depth) {
    checkDepth(depth);
    packer.writeMapHeader(map.size());
    for (Map.Entry<?, ?> entry : map.entrySet()) {
      Object key = entry.getKey();
      String step = key instanceof String s ? "[" + Strings.quote(s) + "]" : "[" + key + "]";
      if (key instanceof Tensor || key instanceof Map) {
        throw new PathFailure(
                "map key of type " + key.getClass().getName() + " at {path} cannot be encoded")
            .under(step);
      }
      try {
        write(key, depth + 1);
        write(entry.getValue(), depth + 1);
      } catch (PathFailure failure) {
        throw failure.under(step);
      }
    }
  }

  private static void checkDepth(int depth) {
    if (depth >= ValueDescriptor.MAX_DEPTH) {
      throw new PathFailure(
          "value at {path} nests deeper than "
              + ValueDescriptor.MAX_DEPTH
              + " lists and maps (a cycle?)");
    }
  }

  /** Carries an encoding failure up the recursion, collecting the path on the way. */
  private static final class PathFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private String path = "";

    PathFailure(String message) {
      super(message, null, false, false);
    }

    PathFailure under(String step) {
      path = step + path;
      return this;
    }
  }
}
