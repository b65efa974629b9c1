package org.transferqueue.codec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Encodes object values (null, Boolean, integers, Double, String, byte[], List, Map, and tensors
 * nested inside them) into msgpack frames as described in {@link ValueDescriptor}.
 *
 * <p>Only the structure goes into the heap main frame; tensor bytes stay in the tensors and become
 * aux frames. Stateless and thread-safe: each call has its own packer and aux-frame list, so
 * concurrent encodes never mix buffers.
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

  /** Small first buffer: most values are short, and the default 8 KiB dominates their cost. */
  private static final MessagePack.PackerConfig CONFIG =
      new MessagePack.PackerConfig().withBufferSize(256);

  private final MessageBufferPacker packer = CONFIG.newBufferPacker();
  private final List<Tensor> tensors = new ArrayList<>();

  private ValueEncoder() {}

  /**
   * Encodes one value.
   *
   * @param value the value; tensors inside it are borrowed by the result, not copied
   * @return the main frame and the aux tensors
   * @throws TqException with {@code INVALID_ARGUMENT} naming the type and the path (such as {@code
   *     $["a"][2]}) of a value that cannot be encoded: an unsupported type, an integer outside
   *     [-2^63, 2^64 - 1], nesting deeper than {@link ValueDescriptor#MAX_DEPTH} (a cycle)
   */
  public static EncodedValue encode(Object value) {
    ValueEncoder encoder = new ValueEncoder();
    try {
      encoder.write(value, 0);
      encoder.packer.close();
    } catch (PathFailure failure) {
      String path =
          failure.path.length() <= MAX_PATH_CHARS
              ? failure.path
              : failure.path.substring(0, MAX_PATH_CHARS) + "...";
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, failure.getMessage().replace("{path}", "$" + path));
    } catch (IOException e) {
      throw new UncheckedIOException("in-memory msgpack packer failed", e);
    }
    return new EncodedValue(encoder.packer.toByteArray(), encoder.tensors);
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

  private void write(Object value, int depth) throws IOException {
    switch (value) {
      case null -> packer.packNil();
      case Boolean b -> packer.packBoolean(b);
      case Long l -> packer.packLong(l);
      case Integer i -> packer.packLong(i);
      case Short s -> packer.packLong(s);
      case Byte b -> packer.packLong(b);
      case BigInteger big -> writeBigInteger(big);
      case Double d -> packer.packDouble(d);
      case Float f -> packer.packDouble(f);
      case String s -> {
        // String.getBytes has an intrinsic ASCII fast path; the packer's own encoding of strings
        // longer than 512 chars goes through a CharsetEncoder loop that dominated profiles of
        // columns of long strings. Same bytes: a string header, then the UTF-8 (malformed
        // surrogates replaced by '?' in both).
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        packer.packRawStringHeader(utf8.length);
        packer.addPayload(utf8);
      }
      case byte[] bytes -> {
        packer.packBinaryHeader(bytes.length);
        packer.writePayload(bytes);
      }
      case Tensor tensor -> writeTensor(tensor);
      case OpaqueValue opaque -> {
        byte[] payload = opaque.payload();
        packer.packExtensionTypeHeader((byte) opaque.extensionType(), payload.length);
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

  private void writeBigInteger(BigInteger value) throws IOException {
    if (value.compareTo(MIN_INT) < 0 || value.compareTo(MAX_UINT) > 0) {
      throw new PathFailure(
          "integer " + value + " at {path} is outside the encodable range [-2^63, 2^64 - 1]");
    }
    packer.packBigInteger(value);
  }

  private void writeTensor(Tensor tensor) throws IOException {
    tensors.add(tensor);
    long[] shape = tensor.shape();
    MessageBufferPacker payload = CONFIG.newBufferPacker();
    payload.packArrayHeader(3);
    payload.packString(tensor.dtype().torchName());
    payload.packArrayHeader(shape.length);
    for (long dim : shape) {
      payload.packLong(dim);
    }
    payload.packInt(tensors.size());
    payload.close();
    byte[] bytes = payload.toByteArray();
    packer.packExtensionTypeHeader(ValueDescriptor.EXT_TENSOR, bytes.length);
    packer.writePayload(bytes);
  }

  private void writeCollection(Collection<?> list, int depth) throws IOException {
    checkDepth(depth);
    packer.packArrayHeader(list.size());
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

  private void writeMap(Map<?, ?> map, int depth) throws IOException {
    checkDepth(depth);
    packer.packMapHeader(map.size());
    for (Map.Entry<?, ?> entry : map.entrySet()) {
      Object key = entry.getKey();
      String step = key instanceof String s ? "[\"" + s + "\"]" : "[" + key + "]";
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
