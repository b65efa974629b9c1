package org.transferqueue.tensor;

/**
 * Conversions between {@code float}/{@code double} and the two 16-bit floating-point formats, IEEE
 * 754 half precision ({@code float16}) and brain floating point ({@code bfloat16}).
 *
 * <p>Every narrowing conversion rounds to nearest, ties to even, exactly as IEEE 754 prescribes:
 * values beyond the largest finite value become infinity, NaN stays NaN (with its sign; a bfloat16
 * NaN is made quiet so that its payload cannot vanish), and conversions from {@code double} round
 * once (not twice through {@code float}). Widening conversions are exact.
 *
 * <p>Stateless and thread-safe.
 */
public final class Float16 {
  private static final int BF16_QUIET_BIT = 0x0040;

  private Float16() {}

  /**
   * Widens a float16 bit pattern to the float of the same value.
   *
   * @param bits the half-precision bits
   * @return the exact value; NaN for NaN patterns
   */
  public static float float16ToFloat(short bits) {
    return Float.float16ToFloat(bits);
  }

  /**
   * Rounds a float to the nearest float16, ties to even.
   *
   * @param value any float
   * @return the half-precision bits
   */
  public static short floatToFloat16(float value) {
    return Float.floatToFloat16(value);
  }

  /**
   * Rounds a double to the nearest float16, ties to even, with a single rounding.
   *
   * @param value any double
   * @return the half-precision bits
   */
  public static short doubleToFloat16(double value) {
    return Float.floatToFloat16(roundToOddFloat(value));
  }

  /**
   * Widens a bfloat16 bit pattern to the float of the same value.
   *
   * @param bits the bfloat16 bits (the upper half of a float32)
   * @return the exact value; NaN for NaN patterns
   */
  public static float bfloat16ToFloat(short bits) {
    return Float.intBitsToFloat((bits & 0xFFFF) << 16);
  }

  /**
   * Rounds a float to the nearest bfloat16, ties to even.
   *
   * @param value any float
   * @return the bfloat16 bits; a NaN keeps its sign and becomes a quiet NaN
   */
  public static short floatToBfloat16(float value) {
    int bits = Float.floatToRawIntBits(value);
    if ((bits & 0x7FFF_FFFF) > 0x7F80_0000) {
      return (short) ((bits >>> 16) | BF16_QUIET_BIT);
    }
    // Adding 0x7FFF plus the lowest kept bit rounds to nearest with ties to even; a carry out of
    // the significand correctly bumps the exponent, up to infinity.
    int rounded = bits + 0x7FFF + ((bits >>> 16) & 1);
    return (short) (rounded >>> 16);
  }

  /**
   * Rounds a double to the nearest bfloat16, ties to even, with a single rounding.
   *
   * @param value any double
   * @return the bfloat16 bits
   */
  public static short doubleToBfloat16(double value) {
    return floatToBfloat16(roundToOddFloat(value));
  }

  /**
   * Narrows a double to float rounding to odd: an inexact result keeps its lowest significand bit
   * set. Rounding to odd first and then to nearest-even at a precision at least two bits narrower
   * gives the correctly rounded result, which a plain {@code (float)} cast would not (double
   * rounding).
   */
  static float roundToOddFloat(double value) {
    float nearest = (float) value;
    if (Double.isNaN(value) || (double) nearest == value) {
      return nearest;
    }
    if (Float.isInfinite(nearest)) {
      // Beyond the float range: the largest finite float is odd and rounds on to infinity.
      return Math.copySign(Float.MAX_VALUE, nearest);
    }
    float truncated =
        Math.abs((double) nearest) > Math.abs(value) ? Math.nextAfter(nearest, 0.0) : nearest;
    int bits = Float.floatToRawIntBits(truncated);
    if ((bits & 0x7FFF_FFFF) == 0) {
      // Below the smallest subnormal: the odd neighbour towards the value is that subnormal.
      return Math.copySign(Float.MIN_VALUE, (float) Math.signum(value));
    }
    return Float.intBitsToFloat(bits | 1);
  }
}
