package org.transferqueue.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigDecimal;
import java.nio.ByteOrder;

/**
 * Reads and writes single elements of every {@link DType} in little-endian order, converting
 * between the element type and Java's {@code long}, {@code float} and {@code double}.
 *
 * <p>Conversion rules (documented on {@link Tensor}): integers widen exactly; floating-point values
 * become integers as Java casts them (towards zero, saturating, NaN to 0) and are then narrowed to
 * the element's width by two's-complement truncation; any value becomes a bool as "not zero" (NaN
 * is true); narrowing to float16/bfloat16/float32 rounds to nearest even once.
 */
final class Elements {
  static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
  static final ValueLayout.OfShort SHORT =
      ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfInt INT =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfLong LONG =
      ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfFloat FLOAT =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfDouble DOUBLE =
      ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private Elements() {}

  static long getLong(MemorySegment segment, DType dtype, long index) {
    long offset = index * dtype.byteSize();
    return switch (dtype) {
      case BOOL -> segment.get(BYTE, offset) != 0 ? 1 : 0;
      case UINT8 -> segment.get(BYTE, offset) & 0xFF;
      case INT8 -> segment.get(BYTE, offset);
      case INT16 -> segment.get(SHORT, offset);
      case INT32 -> segment.get(INT, offset);
      case INT64 -> segment.get(LONG, offset);
      case FLOAT16, BFLOAT16, FLOAT32 -> (long) getFloat(segment, dtype, index);
      case FLOAT64 -> (long) segment.get(DOUBLE, offset);
    };
  }

  static double getDouble(MemorySegment segment, DType dtype, long index) {
    return switch (dtype) {
      case FLOAT16, BFLOAT16, FLOAT32 -> getFloat(segment, dtype, index);
      case FLOAT64 -> segment.get(DOUBLE, index * 8);
      default -> getLong(segment, dtype, index);
    };
  }

  static float getFloat(MemorySegment segment, DType dtype, long index) {
    long offset = index * dtype.byteSize();
    return switch (dtype) {
      case FLOAT16 -> Float16.float16ToFloat(segment.get(SHORT, offset));
      case BFLOAT16 -> Float16.bfloat16ToFloat(segment.get(SHORT, offset));
      case FLOAT32 -> segment.get(FLOAT, offset);
      case FLOAT64 -> (float) segment.get(DOUBLE, offset);
      default -> getLong(segment, dtype, index);
    };
  }

  static boolean getBoolean(MemorySegment segment, DType dtype, long index) {
    if (dtype.isFloatingPoint()) {
      return getDouble(segment, dtype, index) != 0.0; // NaN != 0 is true
    }
    return getLong(segment, dtype, index) != 0;
  }

  static void setLong(MemorySegment segment, DType dtype, long index, long value) {
    long offset = index * dtype.byteSize();
    switch (dtype) {
      case BOOL -> segment.set(BYTE, offset, (byte) (value != 0 ? 1 : 0));
      case UINT8, INT8 -> segment.set(BYTE, offset, (byte) value);
      case INT16 -> segment.set(SHORT, offset, (short) value);
      case INT32 -> segment.set(INT, offset, (int) value);
      case INT64 -> segment.set(LONG, offset, value);
      case FLOAT16, BFLOAT16 -> setDouble(segment, dtype, index, roundToOddDouble(value));
      case FLOAT32 -> segment.set(FLOAT, offset, (float) value);
      case FLOAT64 -> segment.set(DOUBLE, offset, (double) value);
    }
  }

  static void setDouble(MemorySegment segment, DType dtype, long index, double value) {
    long offset = index * dtype.byteSize();
    switch (dtype) {
      case BOOL -> segment.set(BYTE, offset, (byte) (value != 0.0 ? 1 : 0));
      case FLOAT16 -> segment.set(SHORT, offset, Float16.doubleToFloat16(value));
      case BFLOAT16 -> segment.set(SHORT, offset, Float16.doubleToBfloat16(value));
      case FLOAT32 -> segment.set(FLOAT, offset, (float) value);
      case FLOAT64 -> segment.set(DOUBLE, offset, value);
      default -> setLong(segment, dtype, index, (long) value);
    }
  }

  static void setFloat(MemorySegment segment, DType dtype, long index, float value) {
    long offset = index * dtype.byteSize();
    switch (dtype) {
      case FLOAT16 -> segment.set(SHORT, offset, Float16.floatToFloat16(value));
      case BFLOAT16 -> segment.set(SHORT, offset, Float16.floatToBfloat16(value));
      default -> setDouble(segment, dtype, index, value);
    }
  }

  /**
   * Converts a long to a double rounding to odd, so that a following round-to-nearest-even to a
   * narrower format rounds only once. Exact for magnitudes below 2^53.
   */
  static double roundToOddDouble(long value) {
    double nearest = value;
    if (Math.abs(nearest) < 0x1p53) {
      return nearest;
    }
    int cmp = new BigDecimal(nearest).compareTo(BigDecimal.valueOf(value));
    if (cmp == 0) {
      return nearest;
    }
    double truncated = (cmp > 0) == (value > 0) ? Math.nextAfter(nearest, 0.0) : nearest;
    return Double.longBitsToDouble(Double.doubleToRawLongBits(truncated) | 1L);
  }
}
