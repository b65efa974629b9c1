package org.transferqueue.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;

/**
 * Tensors from Java arrays and Java arrays from tensors: the array factories behind {@link
 * Tensor#ofFloats} and its siblings, and the extractors behind {@link Tensor#toFloatArray} and its
 * siblings.
 *
 * <p>Every factory validates the dtype, the value count and (for integers) each value's range
 * before it allocates, then fills through one helper: a bulk {@link MemorySegment#copy} when the
 * array's element type is the dtype's own width, a per-element conversion otherwise (the
 * conversions are those described on {@link Tensor}). The extractors mirror this. They are meant
 * for tests and small values; the data path moves segments, not arrays.
 */
public final class Tensors {
  /** The dtype whose elements are a Java array's own type, copied in bulk, and their layout. */
  private record Width(DType dtype, ValueLayout layout) {}

  private static final Width FLOATS = new Width(DType.FLOAT32, Elements.FLOAT);
  private static final Width DOUBLES = new Width(DType.FLOAT64, Elements.DOUBLE);
  private static final Width LONGS = new Width(DType.INT64, Elements.LONG);
  private static final Width INTS = new Width(DType.INT32, Elements.INT);

  /** For boolean[]: no dtype holds Java booleans, so every element is converted. */
  private static final Width NO_BULK_COPY = new Width(null, Elements.BYTE);

  private Tensors() {}

  /** Writes element {@code index} of the source array into {@code segment} as {@code dtype}. */
  @FunctionalInterface
  private interface ElementWriter {
    void write(MemorySegment segment, DType dtype, int index);
  }

  /** Reads element {@code index} of {@code segment} as {@code dtype} into the target array. */
  @FunctionalInterface
  private interface ElementReader {
    void read(MemorySegment segment, DType dtype, int index);
  }

  /**
   * Creates a floating-point tensor from floats, rounding to float16 or bfloat16 if asked.
   *
   * @param allocator where the memory comes from
   * @param dtype float16, bfloat16, float32 or float64
   * @param values the elements in row-major order, as many as the shape holds
   * @param shape the dimensions; none for a 0-d tensor (then {@code values} has one element)
   * @return a tensor the caller owns and must close
   * @throws TqException with {@code INVALID_ARGUMENT} for a non-floating dtype or a bad shape,
   *     {@code SHAPE_MISMATCH} if the value count differs from the shape's element count
   */
  public static Tensor ofFloats(
      BufferAllocator allocator, DType dtype, float[] values, long... shape) {
    requireFloatingPoint(dtype, "ofFloats");
    checkValueCount(values.length, dtype, shape);
    ElementWriter writer = (segment, type, i) -> Elements.setFloat(segment, type, i, values[i]);
    return fill(allocator, dtype, shape, values, values.length, FLOATS, writer);
  }

  /**
   * Creates a floating-point tensor from doubles, rounding once to the dtype's precision.
   *
   * @param allocator where the memory comes from
   * @param dtype float16, bfloat16, float32 or float64
   * @param values the elements in row-major order, as many as the shape holds
   * @param shape the dimensions
   * @return a tensor the caller owns and must close
   * @throws TqException as {@link #ofFloats}
   */
  public static Tensor ofDoubles(
      BufferAllocator allocator, DType dtype, double[] values, long... shape) {
    requireFloatingPoint(dtype, "ofDoubles");
    checkValueCount(values.length, dtype, shape);
    ElementWriter writer = (segment, type, i) -> Elements.setDouble(segment, type, i, values[i]);
    return fill(allocator, dtype, shape, values, values.length, DOUBLES, writer);
  }

  /**
   * Creates an integer (or bool) tensor from longs, each of which must fit the dtype.
   *
   * @param allocator where the memory comes from
   * @param dtype bool, uint8, int8, int16, int32 or int64
   * @param values the elements in row-major order, as many as the shape holds
   * @param shape the dimensions
   * @return a tensor the caller owns and must close
   * @throws TqException with {@code INVALID_ARGUMENT} for a floating-point dtype, a bad shape or a
   *     value outside the dtype's range (naming value and index), {@code SHAPE_MISMATCH} if the
   *     value count differs from the shape's element count
   */
  public static Tensor ofLongs(
      BufferAllocator allocator, DType dtype, long[] values, long... shape) {
    requireInteger(dtype, "ofLongs");
    checkValueCount(values.length, dtype, shape);
    for (int i = 0; i < values.length; i++) {
      checkRange(dtype, values[i], i);
    }
    ElementWriter writer = (segment, type, i) -> Elements.setLong(segment, type, i, values[i]);
    return fill(allocator, dtype, shape, values, values.length, LONGS, writer);
  }

  /**
   * Creates an integer (or bool) tensor from ints, each of which must fit the dtype.
   *
   * @param allocator where the memory comes from
   * @param dtype bool, uint8, int8, int16, int32 or int64
   * @param values the elements in row-major order
   * @param shape the dimensions
   * @return a tensor the caller owns and must close
   * @throws TqException as {@link #ofLongs}
   */
  public static Tensor ofInts(BufferAllocator allocator, DType dtype, int[] values, long... shape) {
    requireInteger(dtype, "ofInts");
    checkValueCount(values.length, dtype, shape);
    for (int i = 0; i < values.length; i++) {
      checkRange(dtype, values[i], i);
    }
    ElementWriter writer = (segment, type, i) -> Elements.setLong(segment, type, i, values[i]);
    return fill(allocator, dtype, shape, values, values.length, INTS, writer);
  }

  /**
   * Creates a tensor of any dtype from its raw little-endian bytes (for int8 and uint8 these are
   * the elements themselves).
   *
   * @param allocator where the memory comes from
   * @param dtype any dtype; for bool every byte must be 0 or 1
   * @param bytes exactly {@code nbytes} bytes
   * @param shape the dimensions
   * @return a tensor the caller owns and must close
   * @throws TqException with {@code SHAPE_MISMATCH} if the byte count differs from the shape's
   *     {@code nbytes}, {@code INVALID_ARGUMENT} for a bool byte other than 0 or 1 or a bad shape
   */
  public static Tensor ofBytes(
      BufferAllocator allocator, DType dtype, byte[] bytes, long... shape) {
    Objects.requireNonNull(dtype, "dtype");
    long nbytes = TensorUtils.nbytes(dtype, shape);
    if (bytes.length != nbytes) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          bytes.length
              + " bytes given for a "
              + dtype
              + " tensor of shape "
              + Arrays.toString(shape)
              + " (nbytes="
              + nbytes
              + ")");
    }
    if (dtype == DType.BOOL) {
      for (int i = 0; i < bytes.length; i++) {
        checkRange(dtype, bytes[i], i);
      }
    }
    return fill(
        allocator, dtype, shape, bytes, bytes.length, new Width(dtype, Elements.BYTE), null);
  }

  /**
   * Creates a bool tensor.
   *
   * @param allocator where the memory comes from
   * @param values the elements in row-major order
   * @param shape the dimensions
   * @return a tensor the caller owns and must close
   * @throws TqException with {@code SHAPE_MISMATCH} if the value count differs from the shape's
   *     element count
   */
  public static Tensor ofBooleans(BufferAllocator allocator, boolean[] values, long... shape) {
    checkValueCount(values.length, DType.BOOL, shape);
    ElementWriter writer =
        (segment, type, i) -> segment.set(Elements.BYTE, i, (byte) (values[i] ? 1 : 0));
    return fill(allocator, DType.BOOL, shape, values, values.length, NO_BULK_COPY, writer);
  }

  /**
   * Copies all elements to a float array, converting.
   *
   * @param tensor the tensor to read (not closed)
   * @return the elements in row-major order
   * @throws TqException with {@code INVALID_ARGUMENT} if there are too many elements for an array,
   *     {@code CLOSED} if the tensor was closed
   */
  public static float[] toFloats(Tensor tensor) {
    float[] out = new float[arrayLength(tensor)];
    ElementReader reader = (segment, type, i) -> out[i] = Elements.getFloat(segment, type, i);
    extract(tensor, out, out.length, FLOATS, reader);
    return out;
  }

  /**
   * Copies all elements to a double array, converting.
   *
   * @param tensor the tensor to read (not closed)
   * @return the elements in row-major order
   * @throws TqException as {@link #toFloats}
   */
  public static double[] toDoubles(Tensor tensor) {
    double[] out = new double[arrayLength(tensor)];
    ElementReader reader = (segment, type, i) -> out[i] = Elements.getDouble(segment, type, i);
    extract(tensor, out, out.length, DOUBLES, reader);
    return out;
  }

  /**
   * Copies all elements to a long array, converting (uint8 reads as 0 to 255).
   *
   * @param tensor the tensor to read (not closed)
   * @return the elements in row-major order
   * @throws TqException as {@link #toFloats}
   */
  public static long[] toLongs(Tensor tensor) {
    long[] out = new long[arrayLength(tensor)];
    ElementReader reader = (segment, type, i) -> out[i] = Elements.getLong(segment, type, i);
    extract(tensor, out, out.length, LONGS, reader);
    return out;
  }

  /**
   * Copies the raw little-endian bytes to a heap array.
   *
   * @param tensor the tensor to read (not closed)
   * @return a copy of {@link Tensor#segment()}
   * @throws TqException with {@code INVALID_ARGUMENT} if there are too many bytes for an array,
   *     {@code CLOSED} if the tensor was closed
   */
  public static byte[] toBytes(Tensor tensor) {
    if (tensor.nbytes() > Integer.MAX_VALUE - 8) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "nbytes=" + tensor.nbytes() + " is too large for a byte[]");
    }
    return tensor.segment().toArray(Elements.BYTE);
  }

  // ---------------------------------------------------------------- the two helpers

  /**
   * Allocates a tensor and fills it from {@code array}: one bulk copy if {@code dtype} is the
   * array's own element width, else {@code writer} per element.
   */
  private static Tensor fill(
      BufferAllocator allocator,
      DType dtype,
      long[] shape,
      Object array,
      int count,
      Width width,
      ElementWriter writer) {
    Tensor tensor = Tensor.allocate(allocator, dtype, shape);
    MemorySegment segment = tensor.segment();
    if (dtype == width.dtype()) {
      MemorySegment.copy(array, 0, segment, width.layout(), 0, count);
    } else {
      for (int i = 0; i < count; i++) {
        writer.write(segment, dtype, i);
      }
    }
    return tensor;
  }

  /** The mirror of {@link #fill}: one bulk copy at the native width, else {@code reader}. */
  private static void extract(
      Tensor tensor, Object array, int count, Width width, ElementReader reader) {
    MemorySegment segment = tensor.segment();
    DType dtype = tensor.dtype();
    if (dtype == width.dtype()) {
      MemorySegment.copy(segment, width.layout(), 0, array, 0, count);
    } else {
      for (int i = 0; i < count; i++) {
        reader.read(segment, dtype, i);
      }
    }
  }

  // ---------------------------------------------------------------- validation

  private static int arrayLength(Tensor tensor) {
    long numel = tensor.numel();
    if (numel > Integer.MAX_VALUE - 8) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "numel=" + numel + " is too large for a Java array");
    }
    tensor.segment();
    return (int) numel;
  }

  private static void requireFloatingPoint(DType dtype, String factory) {
    Objects.requireNonNull(dtype, "dtype");
    if (!dtype.isFloatingPoint()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          factory
              + " needs a floating-point dtype (float16, bfloat16, float32, float64), got "
              + dtype);
    }
  }

  private static void requireInteger(DType dtype, String factory) {
    Objects.requireNonNull(dtype, "dtype");
    if (dtype.isFloatingPoint()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, factory + " needs an integer or bool dtype, got " + dtype);
    }
  }

  private static void checkValueCount(int count, DType dtype, long[] shape) {
    long numel = TensorUtils.numel(shape);
    if (count != numel) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          count
              + " values given for a "
              + dtype
              + " tensor of shape "
              + Arrays.toString(shape)
              + " (numel="
              + numel
              + ")");
    }
  }

  private static void checkRange(DType dtype, long value, int index) {
    long min = dtype.minValue();
    long max = dtype.maxValue();
    if (value < min || value > max) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "value "
              + value
              + " at index "
              + index
              + " is outside the "
              + dtype
              + " range ["
              + min
              + ", "
              + max
              + "]");
    }
  }
}
