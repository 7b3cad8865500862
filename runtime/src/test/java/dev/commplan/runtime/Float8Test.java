package dev.commplan.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.local.LocalCluster;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The two fp8 formats' conversions, checked against an independent reference: every one of the 256 bit
 * patterns decoded from the OCP FP8 definition (sign, exponent, mantissa, bias; E4M3's only NaN
 * S.1111.111 and no infinities; E5M2's IEEE-like infinities and NaNs), and encoding checked against the
 * nearest of all finite values found by search (ties to the even pattern), at every midpoint between
 * neighbours, just either side of it, at the overflow thresholds, and at 100,000 random floats a format.
 */
class Float8Test {
  private record Format(String name, boolean e5m2, int manBits, int bias) {
    float decode(byte b) {
      return e5m2 ? F8E5M2Buffer.fromBits(b) : F8E4M3Buffer.fromBits(b);
    }

    byte encode(float v) {
      return e5m2 ? F8E5M2Buffer.toBits(v) : F8E4M3Buffer.toBits(v);
    }

    byte saturate(float v) {
      return e5m2 ? F8E5M2Buffer.toBitsSaturated(v) : F8E4M3Buffer.toBitsSaturated(v);
    }

    /** The value of a pattern straight from the format's definition, in exact decimal (null: NaN, ±inf: ±1e999). */
    BigDecimal reference(int bits) {
      int sign = bits >>> 7;
      int exponent = (bits >>> manBits) & ((1 << (7 - manBits)) - 1);
      int mantissa = bits & ((1 << manBits) - 1);
      int maxExponent = (1 << (7 - manBits)) - 1;
      if (e5m2 && exponent == maxExponent) {
        return mantissa == 0 ? (sign == 0 ? new BigDecimal("1e999") : new BigDecimal("-1e999")) : null;
      }
      if (!e5m2 && exponent == maxExponent && mantissa == (1 << manBits) - 1) {
        return null;
      }
      // subnormal: 0.m × 2^(1 - bias); normal: 1.m × 2^(e - bias)
      BigDecimal significand = BigDecimal.valueOf(exponent == 0 ? mantissa : (1 << manBits) + mantissa)
          .divide(BigDecimal.valueOf(1 << manBits));
      int e = exponent == 0 ? 1 - bias : exponent - bias;
      BigDecimal scale = e >= 0 ? BigDecimal.valueOf(2).pow(e) : BigDecimal.ONE.divide(BigDecimal.valueOf(2).pow(-e));
      BigDecimal v = significand.multiply(scale);
      return sign == 0 ? v : v.negate();
    }

    boolean isNaN(int bits) {
      return reference(bits) == null;
    }

    boolean isInfinite(int bits) {
      BigDecimal r = reference(bits);
      return r != null && r.abs().compareTo(new BigDecimal("1e998")) > 0;
    }

    int maxFinite() {
      return e5m2 ? 0x7B : 0x7E;
    }
  }

  private static final Format E4M3 = new Format("E4M3", false, 3, 7);
  private static final Format E5M2 = new Format("E5M2", true, 2, 15);
  private static final BigDecimal[] E4M3_VALUES = values(E4M3);
  private static final BigDecimal[] E5M2_VALUES = values(E5M2);

  private static BigDecimal[] values(Format f) {
    BigDecimal[] v = new BigDecimal[f.maxFinite() + 1];
    for (int bits = 0; bits <= f.maxFinite(); bits++) {
      v[bits] = f.reference(bits);
    }
    return v;
  }

  @Test
  void everyPatternDecodesToItsDefinedValueExactly() {
    for (Format f : List.of(E4M3, E5M2)) {
      for (int bits = 0; bits < 256; bits++) {
        float got = f.decode((byte) bits);
        BigDecimal want = f.reference(bits);
        if (want == null) {
          assertTrue(Float.isNaN(got), f.name + " 0x" + Integer.toHexString(bits));
        } else if (f.isInfinite(bits)) {
          assertEquals(bits < 128 ? Float.POSITIVE_INFINITY : Float.NEGATIVE_INFINITY, got, f.name);
        } else {
          assertEquals(0, want.compareTo(new BigDecimal(got)), f.name + " 0x" + Integer.toHexString(bits) + ": " + got);
          if (want.signum() == 0) { // signed zeros keep their sign
            assertEquals(bits >= 128, Float.floatToRawIntBits(got) < 0, f.name + " zero sign");
          }
        }
      }
    }
    // The formats' landmarks (OCP FP8 spec table).
    assertEquals(448f, F8E4M3Buffer.fromBits((byte) 0x7E));
    assertEquals(0x1p-6f, F8E4M3Buffer.fromBits((byte) 0x08));
    assertEquals(0x1p-9f, F8E4M3Buffer.fromBits((byte) 0x01));
    assertTrue(Float.isNaN(F8E4M3Buffer.fromBits((byte) 0xFF)));
    assertEquals(57344f, F8E5M2Buffer.fromBits((byte) 0x7B));
    assertEquals(Float.POSITIVE_INFINITY, F8E5M2Buffer.fromBits((byte) 0x7C));
    assertEquals(0x1p-14f, F8E5M2Buffer.fromBits((byte) 0x04));
    assertEquals(0x1p-16f, F8E5M2Buffer.fromBits((byte) 0x01));
    assertTrue(Float.isNaN(F8E5M2Buffer.fromBits((byte) 0x7D)));
  }

  @Test
  void everyPatternRoundTripsAndNaNBecomesTheCanonicalOne() {
    for (Format f : List.of(E4M3, E5M2)) {
      for (int bits = 0; bits < 256; bits++) {
        byte b = (byte) bits;
        float v = f.decode(b);
        if (f.isNaN(bits)) {
          assertEquals((byte) 0x7F, f.encode(v), f.name);
          assertEquals((byte) 0x7F, f.saturate(v), f.name);
        } else {
          assertEquals(b, f.encode(v), f.name + " 0x" + Integer.toHexString(bits));
          if (!f.isInfinite(bits)) {
            assertEquals(b, f.saturate(v), f.name + " saturated 0x" + Integer.toHexString(bits));
          }
        }
      }
      assertEquals((byte) 0x7F, f.encode(Float.NaN));
      assertEquals((byte) 0x80, f.encode(-0f));
      assertEquals((byte) 0x00, f.encode(0f));
    }
  }

  @Test
  void encodingIsTheNearestValueTiesToEven() {
    SplittableRandom random = new SplittableRandom(8);
    for (Format f : List.of(E4M3, E5M2)) {
      List<Float> probes = new ArrayList<>();
      List<Integer> finite = finitePatternsAscending(f);
      for (int i = 0; i + 1 < finite.size(); i++) {
        float a = f.decode((byte) (int) finite.get(i));
        float b = f.decode((byte) (int) finite.get(i + 1));
        float mid = (a + b) / 2; // exact: both are fp8 values, so their mean fits a float
        probes.add(mid);
        probes.add(Math.nextUp(mid));
        probes.add(Math.nextDown(mid));
        probes.add(a);
      }
      for (int i = 0; i < 100_000; i++) {
        probes.add((float) (random.nextDouble(-1, 1) * Math.scalb(1.0, random.nextInt(-24, 18))));
      }
      probes.add(Float.MIN_VALUE);
      probes.add(-Float.MIN_VALUE);
      probes.add(Float.MIN_NORMAL);
      for (float v : probes) {
        byte want = nearest(f, v);
        assertEquals(want, f.encode(v), f.name + " " + v + " (" + Float.toHexString(v) + ")");
      }
    }
  }

  @Test
  void overflowIsNaNForE4M3AndInfinityForE5M2OrSaturates() {
    // E4M3: 448 is the largest; 464 is the midpoint to the next step and ties to even (448); above, NaN.
    assertEquals((byte) 0x7E, F8E4M3Buffer.toBits(464f));
    assertEquals((byte) 0x7F, F8E4M3Buffer.toBits(Math.nextUp(464f)));
    assertEquals((byte) 0xFF, F8E4M3Buffer.toBits(-1e6f)); // NaN, sign kept as CUDA does
    assertTrue(Float.isNaN(F8E4M3Buffer.fromBits(F8E4M3Buffer.toBits(Float.POSITIVE_INFINITY))));
    assertEquals((byte) 0x7E, F8E4M3Buffer.toBitsSaturated(1e6f));
    assertEquals((byte) 0xFE, F8E4M3Buffer.toBitsSaturated(Float.NEGATIVE_INFINITY));
    assertEquals((byte) 0x7F, F8E4M3Buffer.toBitsSaturated(Float.NaN));
    // E5M2: 57344 is the largest; 61440 ties to even, which is the infinity pattern.
    assertEquals((byte) 0x7B, F8E5M2Buffer.toBits(Math.nextDown(61440f)));
    assertEquals((byte) 0x7C, F8E5M2Buffer.toBits(61440f));
    assertEquals((byte) 0xFC, F8E5M2Buffer.toBits(Float.NEGATIVE_INFINITY));
    assertEquals((byte) 0x7B, F8E5M2Buffer.toBitsSaturated(Float.POSITIVE_INFINITY));
    assertEquals((byte) 0xFB, F8E5M2Buffer.toBitsSaturated(-1e9f));
    // Below half the smallest subnormal: zero (with the sign); exactly half ties to even, zero.
    assertEquals((byte) 0x00, F8E4M3Buffer.toBits(0x1p-10f));
    assertEquals((byte) 0x01, F8E4M3Buffer.toBits(Math.nextUp(0x1p-10f)));
    assertEquals((byte) 0x80, F8E5M2Buffer.toBits(-0x1p-17f));
    assertEquals((byte) 0x02, F8E5M2Buffer.toBits(0x1.8p-16f)); // 1.5 subnormal steps: ties to even, 2
  }

  @Test
  void buffersSpeakFloatAndBits() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        try (F8E4M3Buffer a = F8E4M3Buffer.allocate(comm, 5); F8E5M2Buffer b = F8E5M2Buffer.allocate(comm, 3)) {
          assertEquals(DataType.F8E4M3, a.dataType());
          assertEquals(5, a.byteSize());
          a.copyFrom(new float[] {1f, 0.3f, -448f, 500f, 0x1p-9f});
          assertArrayEquals(new float[] {1f, 0.3125f, -448f, Float.NaN, 0x1p-9f}, a.toArray());
          assertEquals((byte) 0x7F, a.getBits(3));
          a.setBits(3, (byte) 0x38); // 1.0
          assertEquals(1f, a.get(3));
          a.set(0, 2.2f);
          assertEquals(2.25f, a.get(0));
          byte[] bits = new byte[5];
          a.copyToBits(bits);
          assertArrayEquals(a.toBitsArray(), bits);
          float[] part = new float[2];
          a.copyTo(1, part, 0, 2);
          assertArrayEquals(new float[] {0.3125f, -448f}, part);
          b.fill(3f);
          assertArrayEquals(new float[] {3f, 3f, 3f}, b.toArray());
          b.copyFromBits(new byte[] {0x7C, (byte) 0xFC, 0x3C});
          assertArrayEquals(new float[] {Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 1f}, b.toArray());
          assertThrows(IllegalArgumentException.class, () -> b.copyFrom(new float[2]));
          assertThrows(IndexOutOfBoundsException.class, () -> b.get(3));
          Buffer view = Buffer.view(DataType.F8E5M2, b.memory(), 1, 2);
          assertTrue(view instanceof F8E5M2Buffer);
          assertEquals(Float.NEGATIVE_INFINITY, ((F8E5M2Buffer) view).get(0));
          assertTrue(Buffer.allocate(DataType.F8E4M3, comm, 2) instanceof F8E4M3Buffer);
        }
      });
    }
    assertTrue(DataType.F8E4M3.isFloatingPoint());
    assertTrue(DataType.F8E5M2.isFloat8());
    assertFalse(DataType.F16.isFloat8());
    assertEquals(1, DataType.F8E5M2.byteSize());
  }

  /** The finite patterns ordered by value (negative zero left out: it equals zero). */
  private static List<Integer> finitePatternsAscending(Format f) {
    List<Integer> finite = new ArrayList<>();
    for (int bits = 0; bits < 256; bits++) {
      if (!f.isNaN(bits) && !f.isInfinite(bits) && bits != 0x80) {
        finite.add(bits);
      }
    }
    finite.sort((x, y) -> Float.compare(f.decode((byte) (int) x), f.decode((byte) (int) y)));
    return finite;
  }

  /**
   * The reference encoding: overflow first (IEEE: beyond max + half an ulp, or exactly there when max's
   * pattern is odd), else the nearest finite value by exhaustive search, ties to the even pattern.
   */
  private static byte nearest(Format f, float v) {
    BigDecimal x = new BigDecimal(v);
    BigDecimal max = f.reference(f.maxFinite());
    BigDecimal ulpAtMax = max.subtract(f.reference(f.maxFinite() - 1));
    BigDecimal threshold = max.add(ulpAtMax.divide(BigDecimal.valueOf(2)));
    int sign = Float.floatToRawIntBits(v) < 0 ? 0x80 : 0;
    int cmp = x.abs().compareTo(threshold);
    boolean maxIsEven = (f.maxFinite() & 1) == 0;
    if (cmp > 0 || cmp == 0 && !maxIsEven) {
      return (byte) (sign | (f.e5m2 ? 0x7C : 0x7F));
    }
    // The two finite non-negative values around |v| (the patterns 0..max ascend with their values).
    BigDecimal[] values = f.e5m2 ? E5M2_VALUES : E4M3_VALUES;
    int lo = 0;
    int hi = f.maxFinite();
    while (lo < hi) { // the last pattern whose value is <= |v|
      int mid = (lo + hi + 1) >>> 1;
      if (values[mid].compareTo(x.abs()) <= 0) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    int below = lo;
    int best = below;
    if (below < f.maxFinite()) {
      int c = values[below + 1].subtract(x.abs()).compareTo(x.abs().subtract(values[below]));
      if (c < 0 || c == 0 && (below & 1) == 1) {
        best = below + 1;
      }
    }
    return (byte) (sign | best);
  }
}
