package org.transferqueue.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;

class Float16Test {
  private static final int F16_INF = 0x7C00;
  private static final int BF16_INF = 0x7F80;

  private static boolean isF16NaN(int bits) {
    return (bits & 0x7FFF) > F16_INF;
  }

  private static boolean isBf16NaN(int bits) {
    return (bits & 0x7FFF) > BF16_INF;
  }

  private static String hex(int bits) {
    return "0x" + Integer.toHexString(bits & 0xFFFF);
  }

  /** Fails naming the case; AssertJ per element would make the exhaustive loops slow. */
  private static void expect(boolean ok, String what, int h, int sign) {
    if (!ok) {
      fail(what + " for " + hex(h) + (sign < 0 ? " negated" : ""));
    }
  }

  @Test
  void shouldRoundTripEveryFloat16PatternThroughFloatAndDouble() {
    for (int h = 0; h <= 0xFFFF; h++) {
      float f = Float16.float16ToFloat((short) h);
      short viaFloat = Float16.floatToFloat16(f);
      short viaDouble = Float16.doubleToFloat16(f);
      if (isF16NaN(h)) {
        expect(Float.isNaN(f), "widened NaN", h, 1);
        expect(isF16NaN(viaFloat) && isF16NaN(viaDouble), "NaN stays NaN", h, 1);
        expect((viaFloat & 0x8000) == (h & 0x8000), "NaN keeps sign", h, 1);
      } else {
        expect((viaFloat & 0xFFFF) == h, "round trip via float", h, 1);
        expect((viaDouble & 0xFFFF) == h, "round trip via double", h, 1);
      }
    }
  }

  @Test
  void shouldRoundTripEveryBfloat16PatternThroughFloatAndDouble() {
    for (int h = 0; h <= 0xFFFF; h++) {
      float f = Float16.bfloat16ToFloat((short) h);
      expect(Float.floatToRawIntBits(f) == h << 16, "widening is the upper half", h, 1);
      short viaFloat = Float16.floatToBfloat16(f);
      short viaDouble = Float16.doubleToBfloat16(f);
      if (isBf16NaN(h)) {
        // A NaN keeps sign and payload and becomes quiet.
        expect((viaFloat & 0xFFFF) == (h | 0x0040), "NaN made quiet", h, 1);
        expect(isBf16NaN(viaDouble), "NaN via double", h, 1);
      } else {
        expect((viaFloat & 0xFFFF) == h, "round trip via float", h, 1);
        expect((viaDouble & 0xFFFF) == h, "round trip via double", h, 1);
      }
    }
  }

  @Test
  void shouldRoundFloat16TiesToEvenAndNeighboursToNearest() {
    for (int h = 0; h < F16_INF; h++) {
      double lo = Float16.float16ToFloat((short) h);
      double hi = h + 1 == F16_INF ? 65536.0 : Float16.float16ToFloat((short) (h + 1));
      checkRounding(h, lo, hi, true);
    }
  }

  @Test
  void shouldRoundBfloat16TiesToEvenAndNeighboursToNearest() {
    for (int h = 0; h < BF16_INF; h++) {
      double lo = Float16.bfloat16ToFloat((short) h);
      double hi = h + 1 == BF16_INF ? 0x1p128 : Float16.bfloat16ToFloat((short) (h + 1));
      checkRounding(h, lo, hi, false);
    }
  }

  /** Checks the midpoint between h and h + 1 and its neighbours, for both signs. */
  private static void checkRounding(int h, double lo, double hi, boolean half) {
    double mid = (lo + hi) / 2;
    int even = (h & 1) == 0 ? h : h + 1;
    for (int sign : new int[] {1, -1}) {
      int signBits = sign < 0 ? 0x8000 : 0;
      float midFloat = (float) (sign * mid);
      expect((double) midFloat == sign * mid, "midpoint exact in float", h, sign);
      expect(round(midFloat, half) == (even | signBits), "tie to even", h, sign);
      expect(
          round(Math.nextUp(Math.abs(midFloat)) * sign, half) == ((h + 1) | signBits),
          "above tie rounds away",
          h,
          sign);
      expect(
          round(Math.nextDown(Math.abs(midFloat)) * sign, half) == (h | signBits),
          "below tie rounds back",
          h,
          sign);
      // A double just above the tie must round up even when (float) of it is the tie itself.
      expect(
          roundDouble(sign * Math.nextUp(mid), half) == ((h + 1) | signBits),
          "double above tie",
          h,
          sign);
      expect(
          roundDouble(sign * Math.nextDown(mid), half) == (h | signBits),
          "double below tie",
          h,
          sign);
      expect(roundDouble(sign * mid, half) == (even | signBits), "double tie", h, sign);
    }
  }

  private static int round(float value, boolean half) {
    return (half ? Float16.floatToFloat16(value) : Float16.floatToBfloat16(value)) & 0xFFFF;
  }

  private static int roundDouble(double value, boolean half) {
    return (half ? Float16.doubleToFloat16(value) : Float16.doubleToBfloat16(value)) & 0xFFFF;
  }

  @Test
  void shouldOverflowToInfinityAndKeepNaN() {
    assertThat(Float16.floatToBfloat16(Float.MAX_VALUE) & 0xFFFF).isEqualTo(BF16_INF);
    assertThat(Float16.floatToBfloat16(-Float.MAX_VALUE) & 0xFFFF).isEqualTo(0xFF80);
    assertThat(Float16.doubleToBfloat16(1e300) & 0xFFFF).isEqualTo(BF16_INF);
    assertThat(Float16.floatToBfloat16(Float.POSITIVE_INFINITY) & 0xFFFF).isEqualTo(BF16_INF);
    assertThat(Float16.floatToFloat16(65520f) & 0xFFFF).isEqualTo(F16_INF);
    assertThat(Float16.floatToFloat16(65519.996f) & 0xFFFF).isEqualTo(0x7BFF);
    assertThat(Float16.doubleToFloat16(65519.99999) & 0xFFFF).isEqualTo(0x7BFF);
    assertThat(Float16.doubleToFloat16(1e300) & 0xFFFF).isEqualTo(F16_INF);
    // A NaN whose payload lies only in the low 16 bits must not truncate to infinity.
    float lowPayloadNaN = Float.intBitsToFloat(0x7F80_0001);
    assertThat(isBf16NaN(Float16.floatToBfloat16(lowPayloadNaN))).isTrue();
    assertThat(Float16.floatToBfloat16(Float.intBitsToFloat(0xFFC0_0000)) & 0xFFFF)
        .isEqualTo(0xFFC0);
    assertThat(isBf16NaN(Float16.doubleToBfloat16(Double.NaN))).isTrue();
    assertThat(isF16NaN(Float16.doubleToFloat16(Double.NaN))).isTrue();
  }

  @Test
  void shouldRoundTinyDoublesOnceNotTwice() {
    // 1 + 2^-11 + 2^-40: (float) gives the float16 tie 1 + 2^-11, which would round to 1.0.
    assertThat(Float16.doubleToFloat16(1 + 0x1p-11 + 0x1p-40) & 0xFFFF).isEqualTo(0x3C01);
    assertThat(Float16.doubleToBfloat16(1 + 0x1p-8 + 0x1p-40) & 0xFFFF).isEqualTo(0x3F81);
    assertThat(Float16.doubleToFloat16(1e-50) & 0xFFFF).isZero();
    assertThat(Float16.doubleToFloat16(-1e-50) & 0xFFFF).isEqualTo(0x8000);
    assertThat(Float16.doubleToBfloat16(1e-50) & 0xFFFF).isZero();
    // Half of the smallest float16 subnormal is a tie to 0; anything above rounds up.
    assertThat(Float16.doubleToFloat16(0x1p-25) & 0xFFFF).isZero();
    assertThat(Float16.doubleToFloat16(0x1p-25 + 0x1p-70) & 0xFFFF).isEqualTo(1);
  }

  @Test
  void shouldRoundLongsOnceWhenNarrowing() {
    assertThat(Elements.roundToOddDouble(3)).isEqualTo(3.0);
    // 2^62 + 2^54 + 1 is a bfloat16-far value; (double) would round to a tie below 2^62 + 2^54.
    long value = (1L << 62) + (1L << 54) + 1;
    assertThat(Float16.doubleToBfloat16(Elements.roundToOddDouble(value)) & 0xFFFF)
        .isEqualTo(Float16.floatToBfloat16((float) 0x1.02p62) & 0xFFFF);
    assertThat(Elements.roundToOddDouble(Long.MAX_VALUE)).isLessThan(0x1p63);
    assertThat(Elements.roundToOddDouble(Long.MIN_VALUE)).isEqualTo(-0x1p63);
  }
}
