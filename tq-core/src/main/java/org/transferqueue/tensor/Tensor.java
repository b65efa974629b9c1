package org.transferqueue.tensor;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;

/**
 * An n-dimensional array of one {@link DType}: a shape and a contiguous, row-major, little-endian
 * {@link MemorySegment} of exactly {@link #nbytes()} bytes.
 *
 * <p><b>Ownership.</b> A tensor made by {@link #allocate}, {@link #zeros}, {@link #copyOf} or an
 * {@code of*} factory owns a {@link NativeBuffer} and frees it on {@link #close()}. A tensor made
 * by {@link #wrap}, {@link #row}, {@link #rows} or {@link #reshape} is a view that owns nothing;
 * its {@code close()} does nothing, and it must not be used after the memory it views is freed.
 *
 * <p><b>Element access</b> is by flat (row-major) index and works for every dtype with conversion:
 * integers widen exactly; floating-point values become integers as Java casts do (towards zero,
 * saturating, NaN to 0) and are then narrowed to the element width by two's-complement truncation,
 * as are wider integers; any value stored into a bool becomes 1 if it is not zero (NaN counts as
 * not zero); narrowing to float16, bfloat16 or float32 rounds to nearest even exactly once (see
 * {@link Float16}).
 *
 * <p><b>Equality</b> ({@link #equals}, {@link #contentEquals}) compares dtype, shape and bytes, so
 * a NaN equals itself bit for bit, while {@code 0.0} and {@code -0.0} differ.
 *
 * <p>Not thread-safe for writes; concurrent reads of unchanging data are safe. {@link #close()} is
 * idempotent and thread-safe.
 */
public final class Tensor implements AutoCloseable {
  private static final long HASHED_PREFIX_BYTES = 256;

  private final DType dtype;
  private final long[] shape;
  private final long numel;
  private final MemorySegment segment;
  private final NativeBuffer buffer;
  private final AtomicBoolean closed = new AtomicBoolean();

  private Tensor(
      DType dtype, long[] shape, long numel, MemorySegment segment, NativeBuffer buffer) {
    this.dtype = dtype;
    this.shape = shape;
    this.numel = numel;
    this.segment = segment;
    this.buffer = buffer;
  }

  // ---------------------------------------------------------------- factories

  /**
   * Wraps existing memory as a tensor without taking ownership.
   *
   * @param dtype the element type
   * @param segment contiguous row-major little-endian bytes, exactly {@code nbytes} long
   * @param shape the dimensions; none for a 0-d (scalar) tensor
   * @return a view that owns nothing and is valid as long as {@code segment} is
   * @throws TqException with {@code INVALID_ARGUMENT} for a negative or overflowing shape, {@code
   *     SHAPE_MISMATCH} if the segment's size differs from the shape's byte count
   */
  public static Tensor wrap(DType dtype, MemorySegment segment, long... shape) {
    Objects.requireNonNull(dtype, "dtype");
    Objects.requireNonNull(segment, "segment");
    long[] dims = shape.clone();
    long numel = TensorUtils.numel(dims);
    long nbytes = TensorUtils.nbytes(dtype, dims);
    if (segment.byteSize() != nbytes) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "segment of "
              + segment.byteSize()
              + " bytes does not hold a "
              + dtype
              + " tensor of shape "
              + Arrays.toString(dims)
              + " (nbytes="
              + nbytes
              + ")");
    }
    return new Tensor(dtype, dims, numel, segment, null);
  }

  /**
   * Allocates a tensor whose contents are unspecified (a pooled block keeps its old bytes).
   *
   * @param allocator where the memory comes from
   * @param dtype the element type
   * @param shape the dimensions; none for a 0-d tensor
   * @return a tensor the caller owns and must close
   * @throws TqException with {@code INVALID_ARGUMENT} for a negative or overflowing shape, {@code
   *     OUT_OF_MEMORY} if the allocator's limit would be exceeded
   */
  public static Tensor allocate(BufferAllocator allocator, DType dtype, long... shape) {
    Objects.requireNonNull(allocator, "allocator");
    Objects.requireNonNull(dtype, "dtype");
    long[] dims = shape.clone();
    long numel = TensorUtils.numel(dims);
    NativeBuffer buffer = allocator.allocate(TensorUtils.nbytes(dtype, dims));
    return new Tensor(dtype, dims, numel, buffer.segment(), buffer);
  }

  /**
   * Allocates a tensor filled with zeros.
   *
   * @param allocator where the memory comes from
   * @param dtype the element type
   * @param shape the dimensions
   * @return a zeroed tensor the caller owns and must close
   * @throws TqException as {@link #allocate}
   */
  public static Tensor zeros(BufferAllocator allocator, DType dtype, long... shape) {
    Tensor tensor = allocate(allocator, dtype, shape);
    tensor.segment.fill((byte) 0);
    return tensor;
  }

  /**
   * Copies a tensor into new memory.
   *
   * @param allocator where the copy's memory comes from
   * @param source the tensor to copy (not closed)
   * @return an independent copy the caller owns and must close
   */
  public static Tensor copyOf(BufferAllocator allocator, Tensor source) {
    MemorySegment from = source.segment();
    Tensor copy = allocate(allocator, source.dtype, source.shape);
    MemorySegment.copy(from, 0, copy.segment, 0, copy.nbytes());
    return copy;
  }

  /**
   * Creates a floating-point tensor from floats; see {@link Tensors#ofFloats}.
   *
   * @param allocator where the memory comes from
   * @param dtype float16, bfloat16, float32 or float64
   * @param values the elements in row-major order, as many as the shape holds
   * @param shape the dimensions; none for a 0-d tensor
   * @return a tensor the caller owns and must close
   */
  public static Tensor ofFloats(
      BufferAllocator allocator, DType dtype, float[] values, long... shape) {
    return Tensors.ofFloats(allocator, dtype, values, shape);
  }

  /**
   * Creates a floating-point tensor from doubles; see {@link Tensors#ofDoubles}.
   *
   * @param allocator where the memory comes from
   * @param dtype float16, bfloat16, float32 or float64
   * @param values the elements in row-major order, as many as the shape holds
   * @param shape the dimensions
   * @return a tensor the caller owns and must close
   */
  public static Tensor ofDoubles(
      BufferAllocator allocator, DType dtype, double[] values, long... shape) {
    return Tensors.ofDoubles(allocator, dtype, values, shape);
  }

  /**
   * Creates an integer (or bool) tensor from longs; see {@link Tensors#ofLongs}.
   *
   * @param allocator where the memory comes from
   * @param dtype bool, uint8, int8, int16, int32 or int64
   * @param values the elements in row-major order, each within the dtype's range
   * @param shape the dimensions
   * @return a tensor the caller owns and must close
   */
  public static Tensor ofLongs(
      BufferAllocator allocator, DType dtype, long[] values, long... shape) {
    return Tensors.ofLongs(allocator, dtype, values, shape);
  }

  /**
   * Creates an integer (or bool) tensor from ints; see {@link Tensors#ofInts}.
   *
   * @param allocator where the memory comes from
   * @param dtype bool, uint8, int8, int16, int32 or int64
   * @param values the elements in row-major order, each within the dtype's range
   * @param shape the dimensions
   * @return a tensor the caller owns and must close
   */
  public static Tensor ofInts(BufferAllocator allocator, DType dtype, int[] values, long... shape) {
    return Tensors.ofInts(allocator, dtype, values, shape);
  }

  /**
   * Creates a tensor from its raw little-endian bytes; see {@link Tensors#ofBytes}.
   *
   * @param allocator where the memory comes from
   * @param dtype any dtype; for bool every byte must be 0 or 1
   * @param bytes exactly {@code nbytes} bytes
   * @param shape the dimensions
   * @return a tensor the caller owns and must close
   */
  public static Tensor ofBytes(
      BufferAllocator allocator, DType dtype, byte[] bytes, long... shape) {
    return Tensors.ofBytes(allocator, dtype, bytes, shape);
  }

  /**
   * Creates a bool tensor; see {@link Tensors#ofBooleans}.
   *
   * @param allocator where the memory comes from
   * @param values the elements in row-major order
   * @param shape the dimensions
   * @return a tensor the caller owns and must close
   */
  public static Tensor ofBooleans(BufferAllocator allocator, boolean[] values, long... shape) {
    return Tensors.ofBooleans(allocator, values, shape);
  }

  // ---------------------------------------------------------------- properties

  /**
   * The element type.
   *
   * @return the dtype
   */
  public DType dtype() {
    return dtype;
  }

  /**
   * The dimensions.
   *
   * @return a copy of the shape; empty for a 0-d tensor
   */
  public long[] shape() {
    return shape.clone();
  }

  /**
   * One dimension.
   *
   * @param dim 0 to {@code rank() - 1}
   * @return the size of that dimension
   * @throws IndexOutOfBoundsException for a dimension outside the rank
   */
  public long shape(int dim) {
    return shape[Objects.checkIndex(dim, shape.length)];
  }

  /**
   * The number of dimensions.
   *
   * @return 0 for a scalar tensor
   */
  public int rank() {
    return shape.length;
  }

  /**
   * The number of elements, the product of the shape (1 for a 0-d tensor).
   *
   * @return the element count
   */
  public long numel() {
    return numel;
  }

  /**
   * The size of the data: {@code numel() * dtype().byteSize()}.
   *
   * @return the byte count
   */
  public long nbytes() {
    return numel * dtype.byteSize();
  }

  /**
   * The data: contiguous, row-major, little-endian, exactly {@link #nbytes()} bytes.
   *
   * @return the segment, valid until this tensor (or the memory it views) is closed
   * @throws TqException with {@code CLOSED} if this tensor was closed
   */
  public MemorySegment segment() {
    if (closed.get()) {
      throw new TqException(ErrorCode.CLOSED, "tensor was closed: " + this);
    }
    return segment;
  }

  /**
   * Whether this tensor owns its memory (and frees it on close).
   *
   * @return false for views and wrapped segments
   */
  public boolean ownsMemory() {
    return buffer != null;
  }

  // ---------------------------------------------------------------- views

  /**
   * A zero-copy view of one row: the sub-tensor at index {@code i} of dimension 0.
   *
   * @param i the row, 0 to {@code shape(0) - 1}
   * @return a view of shape {@code shape[1:]} that owns nothing
   * @throws TqException with {@code INVALID_ARGUMENT} for a 0-d tensor
   * @throws IndexOutOfBoundsException for a row outside dimension 0
   */
  public Tensor row(long i) {
    requireRank1("row");
    Objects.checkIndex(i, shape[0]);
    long[] rowShape = Arrays.copyOfRange(shape, 1, shape.length);
    long rowNumel = TensorUtils.numel(rowShape);
    long rowBytes = rowNumel * dtype.byteSize();
    return new Tensor(dtype, rowShape, rowNumel, segment().asSlice(i * rowBytes, rowBytes), null);
  }

  /**
   * A zero-copy view of rows {@code from} (inclusive) to {@code to} (exclusive) of dimension 0.
   *
   * @param from the first row
   * @param to one past the last row
   * @return a view of shape {@code [to - from, shape[1:]...]} that owns nothing
   * @throws TqException with {@code INVALID_ARGUMENT} for a 0-d tensor
   * @throws IndexOutOfBoundsException unless {@code 0 <= from <= to <= shape(0)}
   */
  public Tensor rows(long from, long to) {
    requireRank1("rows");
    Objects.checkFromToIndex(from, to, shape[0]);
    long[] viewShape = shape.clone();
    viewShape[0] = to - from;
    long rowBytes = shape[0] == 0 ? 0 : nbytes() / shape[0];
    long viewNumel = TensorUtils.numel(viewShape);
    return new Tensor(
        dtype,
        viewShape,
        viewNumel,
        segment().asSlice(from * rowBytes, (to - from) * rowBytes),
        null);
  }

  /**
   * A zero-copy view of the same elements under another shape.
   *
   * @param newShape dimensions with the same element count
   * @return a view that owns nothing
   * @throws TqException with {@code SHAPE_MISMATCH} if the element counts differ
   */
  public Tensor reshape(long... newShape) {
    long[] dims = newShape.clone();
    long newNumel = TensorUtils.numel(dims);
    if (newNumel != numel) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "cannot reshape "
              + Arrays.toString(shape)
              + " (numel="
              + numel
              + ") to "
              + Arrays.toString(dims)
              + " (numel="
              + newNumel
              + ")");
    }
    return new Tensor(dtype, dims, numel, segment(), null);
  }

  // ---------------------------------------------------------------- element access

  /**
   * Reads an element as a float.
   *
   * @param index the flat row-major index
   * @return the element, converted as described in the class comment
   * @throws IndexOutOfBoundsException for an index outside {@code [0, numel())}
   */
  public float getFloat(long index) {
    return Elements.getFloat(segment(), dtype, Objects.checkIndex(index, numel));
  }

  /**
   * Writes an element from a float.
   *
   * @param index the flat row-major index
   * @param value the value, converted as described in the class comment
   * @throws IndexOutOfBoundsException for an index outside {@code [0, numel())}
   */
  public void setFloat(long index, float value) {
    Elements.setFloat(segment(), dtype, Objects.checkIndex(index, numel), value);
  }

  /**
   * Reads an element as a double.
   *
   * @param index the flat row-major index
   * @return the element, converted as described in the class comment
   * @throws IndexOutOfBoundsException for an index outside {@code [0, numel())}
   */
  public double getDouble(long index) {
    return Elements.getDouble(segment(), dtype, Objects.checkIndex(index, numel));
  }

  /**
   * Writes an element from a double.
   *
   * @param index the flat row-major index
   * @param value the value, converted as described in the class comment
   * @throws IndexOutOfBoundsException for an index outside {@code [0, numel())}
   */
  public void setDouble(long index, double value) {
    Elements.setDouble(segment(), dtype, Objects.checkIndex(index, numel), value);
  }

  /**
   * Reads an element as a long.
   *
   * @param index the flat row-major index
   * @return the element, converted as described in the class comment (uint8 reads as 0 to 255)
   * @throws IndexOutOfBoundsException for an index outside {@code [0, numel())}
   */
  public long getLong(long index) {
    return Elements.getLong(segment(), dtype, Objects.checkIndex(index, numel));
  }

  /**
   * Writes an element from a long.
   *
   * @param index the flat row-major index
   * @param value the value, converted as described in the class comment
   * @throws IndexOutOfBoundsException for an index outside {@code [0, numel())}
   */
  public void setLong(long index, long value) {
    Elements.setLong(segment(), dtype, Objects.checkIndex(index, numel), value);
  }

  /**
   * Reads an element as a boolean: true if it is not zero (NaN is true).
   *
   * @param index the flat row-major index
   * @return the truth value of the element
   * @throws IndexOutOfBoundsException for an index outside {@code [0, numel())}
   */
  public boolean getBoolean(long index) {
    return Elements.getBoolean(segment(), dtype, Objects.checkIndex(index, numel));
  }

  /**
   * Writes an element from a boolean (1 or 0 in the dtype).
   *
   * @param index the flat row-major index
   * @param value the value
   * @throws IndexOutOfBoundsException for an index outside {@code [0, numel())}
   */
  public void setBoolean(long index, boolean value) {
    Elements.setLong(segment(), dtype, Objects.checkIndex(index, numel), value ? 1 : 0);
  }

  /**
   * Copies all elements to a float array, converting; see {@link Tensors#toFloats}.
   *
   * @return the elements in row-major order
   */
  public float[] toFloatArray() {
    return Tensors.toFloats(this);
  }

  /**
   * Copies all elements to a double array, converting; see {@link Tensors#toDoubles}.
   *
   * @return the elements in row-major order
   */
  public double[] toDoubleArray() {
    return Tensors.toDoubles(this);
  }

  /**
   * Copies all elements to a long array, converting; see {@link Tensors#toLongs}.
   *
   * @return the elements in row-major order
   */
  public long[] toLongArray() {
    return Tensors.toLongs(this);
  }

  /**
   * Copies the raw little-endian bytes to a heap array; see {@link Tensors#toBytes}.
   *
   * @return a copy of {@link #segment()}
   */
  public byte[] toByteArray() {
    return Tensors.toBytes(this);
  }

  // ---------------------------------------------------------------- equality and lifetime

  /**
   * Whether another tensor has the same dtype, shape and bytes.
   *
   * @param other the tensor to compare with
   * @return true if both hold bit-identical data of the same type and shape
   */
  public boolean contentEquals(Tensor other) {
    if (other == this) {
      return true;
    }
    return other != null
        && dtype == other.dtype
        && Arrays.equals(shape, other.shape)
        && MemorySegment.mismatch(segment(), 0, nbytes(), other.segment(), 0, nbytes()) == -1;
  }

  /**
   * Same as {@link #contentEquals} for another tensor. This is content equality on a closeable,
   * mutable resource, kept so that tests can compare tensors with ordinary assertions; do not use
   * tensors as map keys or set members (the hash reads memory and changes when the data does).
   */
  @Override
  public boolean equals(Object obj) {
    return obj instanceof Tensor other && contentEquals(other);
  }

  /**
   * A hash of dtype, shape and the first 256 bytes of data, consistent with {@link #equals}; for
   * tests only (see there).
   *
   * @throws TqException with {@code CLOSED} if this tensor was closed
   */
  @Override
  public int hashCode() {
    int hash = 31 * dtype.code() + Arrays.hashCode(shape);
    MemorySegment data = segment();
    long prefix = Math.min(nbytes(), HASHED_PREFIX_BYTES);
    for (long i = 0; i < prefix; i++) {
      hash = 31 * hash + data.get(Elements.BYTE, i);
    }
    return hash;
  }

  /**
   * Frees the owned memory, if any. Idempotent; views and wrapped segments free nothing. The tensor
   * must not be used afterwards.
   */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true) && buffer != null) {
      buffer.close();
    }
  }

  @Override
  public String toString() {
    return "Tensor[dtype="
        + dtype
        + ", shape="
        + Arrays.toString(shape)
        + ", nbytes="
        + nbytes()
        + (buffer != null ? ", owned" : ", view")
        + (closed.get() ? ", closed" : "")
        + "]";
  }

  // ---------------------------------------------------------------- validation helpers

  private void requireRank1(String operation) {
    if (shape.length == 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, operation + " needs rank >= 1, tensor is 0-d: " + this);
    }
  }
}
