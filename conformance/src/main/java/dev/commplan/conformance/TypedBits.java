package dev.commplan.conformance;

import dev.commplan.runtime.BF16Buffer;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F16Buffer;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.F64Buffer;
import dev.commplan.runtime.F8E4M3Buffer;
import dev.commplan.runtime.F8E5M2Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.I64Buffer;
import dev.commplan.runtime.I8Buffer;
import dev.commplan.runtime.U32Buffer;
import dev.commplan.runtime.U64Buffer;
import dev.commplan.runtime.U8Buffer;

/**
 * Every buffer's contents as bit patterns in a {@code long[]} (the low {@code 8 ×
 * byteSize} bits of each element), so that one piece of test code handles every data type and
 * "bitwise equal" is just array equality.
 */
public final class TypedBits {
  private TypedBits() {}

  /**
   * The mask of the type's bits within a long.
   *
   * @param type a data type
   * @return {@code 8 × byteSize} low bits set
   */
  public static long mask(DataType type) {
    return type.byteSize() == 8 ? -1L : (1L << (8 * type.byteSize())) - 1;
  }

  /**
   * Writes {@code bits} (one element each) to the whole of {@code buffer}, from the host.
   *
   * @param buffer the buffer, of any type
   * @param bits one bit pattern per element, in its low bits
   */
  public static void write(Buffer buffer, long[] bits) {
    switch (buffer) {
      case F16Buffer b -> b.copyFromBits(shorts(bits));
      case BF16Buffer b -> b.copyFromBits(shorts(bits));
      case F32Buffer b -> {
        float[] values = new float[bits.length];
        for (int i = 0; i < bits.length; i++) {
          values[i] = Float.intBitsToFloat((int) bits[i]);
        }
        b.copyFrom(values);
      }
      case F64Buffer b -> {
        double[] values = new double[bits.length];
        for (int i = 0; i < bits.length; i++) {
          values[i] = Double.longBitsToDouble(bits[i]);
        }
        b.copyFrom(values);
      }
      case I8Buffer b -> b.copyFrom(bytes(bits));
      case U8Buffer b -> b.copyFrom(bytes(bits));
      case I32Buffer b -> b.copyFrom(ints(bits));
      case U32Buffer b -> b.copyFrom(ints(bits));
      case I64Buffer b -> b.copyFrom(bits.clone());
      case U64Buffer b -> b.copyFrom(bits.clone());
      case F8E4M3Buffer b -> b.copyFromBits(bytes(bits));
      case F8E5M2Buffer b -> b.copyFromBits(bytes(bits));
    }
  }

  /**
   * Reads the whole of {@code buffer} as bit patterns, from the host.
   *
   * @param buffer the buffer, of any type
   * @return one bit pattern per element, in its low bits (zero-extended)
   */
  public static long[] read(Buffer buffer) {
    long mask = mask(buffer.dataType());
    long[] out = new long[Math.toIntExact(buffer.length())];
    switch (buffer) {
      case F16Buffer b -> widen(b.toBitsArray(), out, mask);
      case BF16Buffer b -> widen(b.toBitsArray(), out, mask);
      case F32Buffer b -> {
        float[] values = b.toArray();
        for (int i = 0; i < out.length; i++) {
          out[i] = Float.floatToRawIntBits(values[i]) & mask;
        }
      }
      case F64Buffer b -> {
        double[] values = b.toArray();
        for (int i = 0; i < out.length; i++) {
          out[i] = Double.doubleToRawLongBits(values[i]);
        }
      }
      case I8Buffer b -> widen(b.toArray(), out, mask);
      case U8Buffer b -> widen(b.toArray(), out, mask);
      case I32Buffer b -> widen(b.toArray(), out, mask);
      case U32Buffer b -> widen(b.toArray(), out, mask);
      case I64Buffer b -> System.arraycopy(b.toArray(), 0, out, 0, out.length);
      case U64Buffer b -> System.arraycopy(b.toArray(), 0, out, 0, out.length);
      case F8E4M3Buffer b -> widen(b.toBitsArray(), out, mask);
      case F8E5M2Buffer b -> widen(b.toBitsArray(), out, mask);
    }
    return out;
  }

  /**
   * The value of a floating-point type's bit pattern, exactly.
   *
   * @param type a floating-point type
   * @param bits a bit pattern of the type
   * @return its value
   */
  public static double toDouble(DataType type, long bits) {
    return switch (type) {
      case F16 -> Float.float16ToFloat((short) bits);
      case BF16 -> BF16Buffer.fromBits((short) bits);
      case F32 -> Float.intBitsToFloat((int) bits);
      case F64 -> Double.longBitsToDouble(bits);
      case F8E4M3 -> F8E4M3Buffer.fromBits((byte) bits);
      case F8E5M2 -> F8E5M2Buffer.fromBits((byte) bits);
      default -> throw new IllegalArgumentException(type + " is not a floating-point type");
    };
  }

  /**
   * The bit pattern of the value of {@code type} nearest {@code value} (via float for the 16- and 8-bit types).
   *
   * @param type a floating-point type
   * @param value any value
   * @return the bit pattern, in the low bits
   */
  public static long fromDouble(DataType type, double value) {
    return switch (type) {
      case F16 -> Float.floatToFloat16((float) value) & 0xFFFFL;
      case BF16 -> BF16Buffer.toBits((float) value) & 0xFFFFL;
      case F32 -> Float.floatToRawIntBits((float) value) & 0xFFFF_FFFFL;
      case F64 -> Double.doubleToRawLongBits(value);
      case F8E4M3 -> F8E4M3Buffer.toBits((float) value) & 0xFFL;
      case F8E5M2 -> F8E5M2Buffer.toBits((float) value) & 0xFFL;
      default -> throw new IllegalArgumentException(type + " is not a floating-point type");
    };
  }

  private static short[] shorts(long[] bits) {
    short[] out = new short[bits.length];
    for (int i = 0; i < bits.length; i++) {
      out[i] = (short) bits[i];
    }
    return out;
  }

  private static byte[] bytes(long[] bits) {
    byte[] out = new byte[bits.length];
    for (int i = 0; i < bits.length; i++) {
      out[i] = (byte) bits[i];
    }
    return out;
  }

  private static int[] ints(long[] bits) {
    int[] out = new int[bits.length];
    for (int i = 0; i < bits.length; i++) {
      out[i] = (int) bits[i];
    }
    return out;
  }

  private static void widen(short[] in, long[] out, long mask) {
    for (int i = 0; i < in.length; i++) {
      out[i] = in[i] & mask;
    }
  }

  private static void widen(byte[] in, long[] out, long mask) {
    for (int i = 0; i < in.length; i++) {
      out[i] = in[i] & mask;
    }
  }

  private static void widen(int[] in, long[] out, long mask) {
    for (int i = 0; i < in.length; i++) {
      out[i] = in[i] & mask;
    }
  }
}
