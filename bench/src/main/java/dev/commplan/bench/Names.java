package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.bench.Args.UsageException;
import dev.commplan.runtime.DataType;
import java.util.Locale;

/** nccl-tests' names for data types and reductions, so that our tables read like theirs. */
final class Names {
  private Names() {}

  /** nccl-tests' type column: {@code float}, {@code half}, {@code bfloat16}, {@code int8}, ... */
  static String of(DataType type) {
    return switch (type) {
      case F16 -> "half";
      case BF16 -> "bfloat16";
      case F32 -> "float";
      case F64 -> "double";
      case I8 -> "int8";
      case U8 -> "uint8";
      case I32 -> "int32";
      case U32 -> "uint32";
      case I64 -> "int64";
      case U64 -> "uint64";
      case F8E4M3 -> "f8e4m3";
      case F8E5M2 -> "f8e5m2";
    };
  }

  /** nccl-tests' redop column: {@code sum}, {@code prod}, {@code max}, {@code min}, {@code avg}. */
  static String of(ReduceOp op) {
    return op.name().toLowerCase(Locale.ROOT);
  }

  /** Accepts nccl-tests' names ({@code float}) and ours ({@code f32}, {@code F32}). */
  static DataType dataType(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    for (DataType t : DataType.values()) {
      if (n.equals(of(t)) || n.equals(t.name().toLowerCase(Locale.ROOT))) {
        return t;
      }
    }
    switch (n) {
      case "float32", "fp32" -> { return DataType.F32; }
      case "float16", "fp16" -> { return DataType.F16; }
      case "bf16" -> { return DataType.BF16; }
      case "float64", "fp64" -> { return DataType.F64; }
      default -> throw new UsageException(
          "--type is one of float, half, bfloat16, double, int8, uint8, int32, uint32, int64, uint64, f8e4m3,"
              + " f8e5m2"
              + " (or f32, f16, bf16, ...), not '" + name + "'");
    }
  }

  static ReduceOp op(String name) {
    try {
      return ReduceOp.valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new UsageException("--op is one of sum, prod, max, min, avg, not '" + name + "'");
    }
  }

  /** {@code 8 B}, {@code 64 KiB}, {@code 474.7 MiB}: for progress lines and headings. */
  static String bytes(long n) {
    String[] units = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (u < units.length - 1 && n >= 1L << (10 * (u + 1))) {
      u++;
    }
    double v = n / (double) (1L << (10 * u));
    return (v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.1f", v)) + " " + units[u];
  }

  /** Seconds with at most three significant digits and no trailing zeros: {@code 0.1}, {@code 5}, {@code 280}. */
  static String seconds(double s) {
    return new java.math.BigDecimal(s).round(new java.math.MathContext(3)).stripTrailingZeros().toPlainString();
  }
}
