package dev.commplan.conformance;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;

/**
 * The expected result of a reduction over ranks, computed independently of the backends: integers with
 * {@link BigInteger} and then wrapped to the type, floating-point values exactly with {@link
 * BigDecimal} and compared within a tolerance (see {@link #tolerance}).
 */
public final class CollectiveReference {
  private CollectiveReference() {}

  /**
   * The integer value of {@code bits} in {@code type}: signed or unsigned as the type says.
   *
   * @param type an integer type
   * @param bits a bit pattern of the type (its low bits)
   * @return its value
   */
  public static BigInteger integerValue(DataType type, long bits) {
    int width = 8 * type.byteSize();
    BigInteger unsigned = new BigInteger(Long.toUnsignedString(bits & TypedBits.mask(type)));
    if (!type.isUnsigned() && unsigned.testBit(width - 1)) {
      return unsigned.subtract(BigInteger.ONE.shiftLeft(width));
    }
    return unsigned;
  }

  /**
   * {@code value} modulo 2^width, as the type's bit pattern (two's-complement wrapping).
   *
   * @param type an integer type
   * @param value any integer
   * @return the bit pattern the type holds for it
   */
  public static long wrap(DataType type, BigInteger value) {
    return value.longValue() & TypedBits.mask(type);
  }

  /**
   * The integer reduction of {@code inputs} as every backend computes it (NCCL's meaning: wrapping as the
   * type does, AVG the wrapped sum divided, truncating toward zero), as a bit pattern of the type.
   *
   * @param type an integer type
   * @param op the reduction
   * @param inputs every rank's bit pattern, in rank order
   * @return the result's bit pattern
   */
  public static long reduceIntegers(DataType type, ReduceOp op, long[] inputs) {
    BigInteger result = integerValue(type, inputs[0]);
    for (int r = 1; r < inputs.length; r++) {
      BigInteger x = integerValue(type, inputs[r]);
      result = switch (op) {
        case SUM, AVG -> result.add(x);
        case PROD -> result.multiply(x);
        case MAX -> result.max(x);
        case MIN -> result.min(x);
      };
    }
    if (op == ReduceOp.AVG) {
      // NCCL's SumPostDiv: the sum as the type holds it (wrapped), then divided, truncating toward zero.
      BigInteger wrappedSum = integerValue(type, wrap(type, result));
      result = wrappedSum.divide(BigInteger.valueOf(inputs.length));
    }
    return wrap(type, result);
  }

  /**
   * The exact real value of the floating-point reduction of {@code inputs} (values of the type).
   *
   * @param op the reduction
   * @param inputs every rank's value, in rank order
   * @return the exact result, rounded once to a double
   */
  public static double exactFloat(ReduceOp op, double[] inputs) {
    if (op == ReduceOp.MAX || op == ReduceOp.MIN) {
      double result = inputs[0];
      for (double x : inputs) {
        result = op == ReduceOp.MAX ? Math.max(result, x) : Math.min(result, x);
      }
      return result;
    }
    BigDecimal result = new BigDecimal(inputs[0]);
    for (int r = 1; r < inputs.length; r++) {
      BigDecimal x = new BigDecimal(inputs[r]);
      result = op == ReduceOp.PROD ? result.multiply(x) : result.add(x);
    }
    if (op == ReduceOp.AVG) {
      result = result.divide(BigDecimal.valueOf(inputs.length), MathContext.DECIMAL128);
    }
    return result.doubleValue();
  }

  /**
   * The unit roundoff of the local backend's accumulators: F16, BF16, the fp8 types and F32 accumulate in
   * float (2^-24), F64 in double (2^-53).
   *
   * @param type a floating-point type
   * @return the unit roundoff
   */
  public static double floatAccumulation(DataType type) {
    return type == DataType.F64 ? 0x1p-53 : 0x1p-24;
  }

  /**
   * The unit roundoff of the type itself (2^-11 F16, 2^-8 BF16, 2^-24 F32, 2^-53 F64, 2^-4 F8E4M3, 2^-3
   * F8E5M2): what a backend
   * accumulates in when partial results travel between devices in the buffer's own type, as NCCL's ring
   * and tree algorithms do.
   *
   * @param type a floating-point type
   * @return the unit roundoff
   */
  public static double typeAccumulation(DataType type) {
    return switch (type) {
      case F16 -> 0x1p-11;
      case BF16 -> 0x1p-8;
      case F32 -> 0x1p-24;
      case F8E4M3 -> 0x1p-4;
      case F8E5M2 -> 0x1p-3;
      default -> 0x1p-53;
    };
  }

  /**
   * How far a backend's result may be from {@link #exactFloat}, given the unit roundoff {@code u} of
   * the precision it accumulates in, with why:
   *
   * <ul>
   *   <li>MAX and MIN are exact (no arithmetic), so 0.
   *   <li>SUM of n values is within (n-1)·u·Σ|x| of the exact sum, the classic bound for recursive
   *       summation in any order (so NCCL's order passes too); (n+1)·u·Σ|x| is used for slack.
   *   <li>AVG: the sum's bound divided by n, plus one more rounding for the division, u·|e| (NCCL's
   *       pre-multiplying each value by 1/n instead stays within the same bound).
   *   <li>PROD of n values is within about (n-1)·u·|e|; (n+1)·u·|e| is used.
   *   <li>The 16- and 8-bit types are rounded once more to the type at the end: half an ulp, 2^-11·|e|
   *       for F16, 2^-8·|e| for BF16, 2^-4·|e| for F8E4M3 and 2^-3·|e| for F8E5M2, plus the smallest
   *       subnormal of the type for results near zero.
   * </ul>
   *
   * @param type the floating-point type
   * @param op the reduction
   * @param inputs every rank's value
   * @param exact the exact result ({@link #exactFloat})
   * @param u the unit roundoff of the backend's accumulation ({@link #floatAccumulation}, {@link
   *     #typeAccumulation})
   * @return the largest distance from {@code exact} a right result may have
   */
  public static double tolerance(DataType type, ReduceOp op, double[] inputs, double exact, double u) {
    if (op == ReduceOp.MAX || op == ReduceOp.MIN) {
      return 0;
    }
    int n = inputs.length;
    double magnitude = 0;
    for (double x : inputs) {
      magnitude += Math.abs(x);
    }
    double accumulation = switch (op) {
      case SUM -> (n + 1) * u * magnitude;
      case AVG -> (n + 1) * u * magnitude / n + u * Math.abs(exact);
      case PROD -> (n + 1) * u * Math.abs(exact);
      default -> throw new AssertionError(op);
    };
    double finalRounding = switch (type) {
      case F16 -> 0x1p-11 * Math.abs(exact) + 0x1p-24;
      case BF16 -> 0x1p-8 * Math.abs(exact) + 0x1p-133;
      case F8E4M3 -> 0x1p-4 * Math.abs(exact) + 0x1p-9;
      case F8E5M2 -> 0x1p-3 * Math.abs(exact) + 0x1p-16;
      default -> 0;
    };
    return accumulation + finalRounding;
  }
}
