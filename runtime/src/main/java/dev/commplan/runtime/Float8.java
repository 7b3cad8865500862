package dev.commplan.runtime;

/**
 * The conversions of the two 8-bit floating-point formats of OCP's FP8 specification, as CUDA's {@code
 * cuda_fp8.h} does them ({@code __nv_cvt_float_to_fp8}, {@code __nv_cvt_fp8_to_halfraw}): from {@code
 * float}, round to nearest, ties to even, once (subnormals included); to {@code float}, exactly.
 *
 * <ul>
 *   <li>E4M3: bias 7, no infinities; {@code S.1111.111} is NaN; largest finite 448, smallest subnormal
 *       2^-9. Beyond 448 (from 464 on, which ties to even to 448) a value overflows: to NaN, or with
 *       saturation to ±448.
 *   <li>E5M2: bias 15, IEEE-like: {@code S.11111.00} is infinity, {@code S.11111.xx} NaN; largest finite
 *       57344, smallest subnormal 2^-16. An overflow (from 61440 on) gives ±infinity, or with saturation
 *       ±57344.
 * </ul>
 *
 * <p>NaN converts to {@code 0x7F} (CUDA's canonical NaN from a {@code float}, a NaN in both formats);
 * signed zeros keep their sign. Saturation is CUDA's {@code __NV_SATFINITE}, which NCCL's fp8 reductions
 * use (the {@code __nv_fp8_e4m3} constructors): infinities saturate too, NaN stays NaN.
 */
final class Float8 {
  private Float8() {}

  static final int E4M3_MANTISSA = 3;
  static final int E4M3_BIAS = 7;
  static final int E5M2_MANTISSA = 2;
  static final int E5M2_BIAS = 15;

  /** The pattern nearest {@code value}; overflow gives NaN (E4M3) or infinity (E5M2), or the largest finite with {@code saturate}. */
  static byte encode(float value, boolean e5m2, boolean saturate) {
    int manBits = e5m2 ? E5M2_MANTISSA : E4M3_MANTISSA;
    int bias = e5m2 ? E5M2_BIAS : E4M3_BIAS;
    int maxFinite = e5m2 ? 0x7B : 0x7E;
    int overflow = e5m2 ? 0x7C : 0x7F; // infinity, or E4M3's NaN
    if (Float.isNaN(value)) {
      return 0x7F;
    }
    int sign = (Float.floatToRawIntBits(value) >>> 24) & 0x80;
    float a = Math.abs(value);
    if (Float.isInfinite(a)) {
      return (byte) (sign | (saturate ? maxFinite : overflow));
    }
    int minNormalExponent = 1 - bias;
    int e = Math.getExponent(a); // -127 for zero and float subnormals
    int ulpExponent = Math.max(e, minNormalExponent) - manBits;
    // a in units of the target's ulp at its exponent: exact (a power-of-two scaling of a float, in a double)
    double q = Math.scalb((double) a, -ulpExponent);
    long significand = (long) Math.rint(q); // round half to even
    long bits = e < minNormalExponent
        ? significand // subnormal; 2^manBits here is the smallest normal, encoded the same way
        : ((long) (e + bias) << manBits) + (significand - (1L << manBits)); // a carry bumps the exponent
    if (bits > maxFinite) {
      return (byte) (sign | (saturate ? maxFinite : overflow));
    }
    return (byte) (sign | bits);
  }

  /** The value of {@code bits}, exactly. */
  static float decode(byte bits, boolean e5m2) {
    int manBits = e5m2 ? E5M2_MANTISSA : E4M3_MANTISSA;
    int bias = e5m2 ? E5M2_BIAS : E4M3_BIAS;
    int u = bits & 0xFF;
    int magnitude = u & 0x7F;
    int exponent = magnitude >>> manBits;
    int mantissa = magnitude & ((1 << manBits) - 1);
    float v;
    if (e5m2 && exponent == 0x1F) {
      v = mantissa == 0 ? Float.POSITIVE_INFINITY : Float.NaN;
    } else if (!e5m2 && magnitude == 0x7F) {
      v = Float.NaN;
    } else if (exponent == 0) {
      v = Math.scalb((float) mantissa, 1 - bias - manBits);
    } else {
      v = Math.scalb((float) ((1 << manBits) | mantissa), exponent - bias - manBits);
    }
    return (u & 0x80) != 0 ? -v : v;
  }
}
