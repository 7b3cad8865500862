package dev.commplan.runtime.mpi.internal;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.runtime.BF16Buffer;
import dev.commplan.runtime.F8E4M3Buffer;
import dev.commplan.runtime.F8E5M2Buffer;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * CommPlan's own reductions, {@code MPI_Op}s made with {@code MPI_Op_create} whose {@code
 * MPI_User_function} is a Java upcall, where MPI's predefined ones do not give NCCL's result.
 *
 * <p>8-bit integer SUM and PROD: Open MPI 4.1's AVX reduction component saturates 8-bit sums instead of
 * wrapping them (open-mpi/ompi#8045, closed as "wontfix": MPI leaves overflow undefined); NCCL wraps.
 * These ops wrap, two's complement, the same for signed and unsigned bytes.
 *
 * <p>16-bit and 8-bit floating point, which MPI has no predefined datatype for: CommPlan sends F16 and
 * BF16 as {@code MPI_UINT16_T}, F8E4M3 and F8E5M2 as {@code MPI_UINT8_T}, and reduces them with its own
 * commutative {@code MPI_Op}s ({@code MPI_Op_create}), whose {@code MPI_User_function} is a Java upcall.
 * Each combination widens both operands exactly to {@code float}, combines them there and rounds to the
 * type (nearest, ties to even; the 8-bit types saturate to their largest finite value, as NCCL's fp8
 * arithmetic does), as NCCL does per hop; so partial results round to the type at each step of MPI's
 * reduction tree.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class UserOps {
  /** The format of the 16 bits. */
  public static final int F16 = 0;
  /** bfloat16. */
  public static final int BF16 = 1;
  /** 8-bit integers, signed or unsigned (SUM and PROD only). */
  public static final int WRAP8 = 2;
  /** 8-bit floating point, E4M3. */
  public static final int F8E4M3 = 3;
  /** 8-bit floating point, E5M2. */
  public static final int F8E5M2 = 4;
  /** Op codes, as indices. */
  public static final int SUM = 0;
  public static final int PROD = 1;
  public static final int MIN = 2;
  public static final int MAX = 3;

  private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
  private static final long[][] OPS = new long[5][4];

  private UserOps() {}

  /**
   * The {@code MPI_Op} for {@code format} and {@code op}, created on first use (MPI must be initialized;
   * the caller holds the MPI lock). Never freed: user ops live until {@code MPI_Finalize}.
   *
   * @return the op handle, or the negated MPI error code of {@code MPI_Op_create} (never a valid pointer)
   */
  public static long op(int format, int op) {
    synchronized (OPS) {
      long handle = OPS[format][op];
      if (handle != 0) {
        return handle;
      }
      try {
        MethodHandle target = MethodHandles.lookup().findStatic(UserOps.class, "combine",
            MethodType.methodType(void.class, int.class, int.class, long.class, long.class, long.class, long.class));
        target = MethodHandles.insertArguments(target, 0, format, op);
        MemorySegment stub = MpiNativeAccess.upcall(target,
            FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
        MemorySegment out = Arena.global().allocate(JAVA_LONG);
        int rc = Mpi.MPI_Op_create(stub.address(), 1, out.address());
        if (rc != Mpi.SUCCESS) {
          return -rc;
        }
        handle = out.get(JAVA_LONG, 0);
        OPS[format][op] = handle;
        return handle;
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
    }
  }

  /**
   * {@code void (MPI_User_function)(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype)}:
   * {@code inoutvec[i] = invec[i] op inoutvec[i]} for {@code *len} 16-bit elements. Runs on whatever
   * thread drives MPI's progress (one inside {@code MPI_Testall}); must not throw.
   */
  static void combine(int format, int op, long in, long inout, long lenPointer, long datatype) {
    int length = MpiNativeAccess.sized(lenPointer, 4).get(JAVA_INT, 0);
    if (format == F8E4M3 || format == F8E5M2) {
      MemorySegment a = MpiNativeAccess.sized(in, length);
      MemorySegment b = MpiNativeAccess.sized(inout, length);
      for (long i = 0; i < length; i++) {
        float x = toFloat(format, a.get(ValueLayout.JAVA_BYTE, i));
        float y = toFloat(format, b.get(ValueLayout.JAVA_BYTE, i));
        b.set(ValueLayout.JAVA_BYTE, i, (byte) toBits(format, combine(op, x, y)));
      }
      return;
    }
    if (format == WRAP8) {
      MemorySegment a = MpiNativeAccess.sized(in, length);
      MemorySegment b = MpiNativeAccess.sized(inout, length);
      for (long i = 0; i < length; i++) {
        byte x = a.get(ValueLayout.JAVA_BYTE, i);
        byte y = b.get(ValueLayout.JAVA_BYTE, i);
        b.set(ValueLayout.JAVA_BYTE, i, (byte) (op == PROD ? x * y : x + y));
      }
      return;
    }
    MemorySegment a = MpiNativeAccess.sized(in, 2L * length);
    MemorySegment b = MpiNativeAccess.sized(inout, 2L * length);
    for (long i = 0, at = 0; i < length; i++, at += 2) {
      float x = toFloat(format, a.get(SHORT, at));
      float y = toFloat(format, b.get(SHORT, at));
      b.set(SHORT, at, toBits(format, combine(op, x, y)));
    }
  }

  private static float combine(int op, float x, float y) {
    return switch (op) {
      case SUM -> x + y;
      case PROD -> x * y;
      case MIN -> Math.min(x, y);
      default -> Math.max(x, y);
    };
  }

  /** The value of the 16 or 8 bits of {@code format}, widened exactly. */
  public static float toFloat(int format, short bits) {
    return switch (format) {
      case F16 -> Float.float16ToFloat(bits);
      case BF16 -> BF16Buffer.fromBits(bits);
      case F8E4M3 -> F8E4M3Buffer.fromBits((byte) bits);
      case F8E5M2 -> F8E5M2Buffer.fromBits((byte) bits);
      default -> throw new IllegalArgumentException("format " + format);
    };
  }

  /** The bits of {@code format} nearest {@code value} (ties to even; the 8-bit types saturate), in the low bits. */
  public static short toBits(int format, float value) {
    return switch (format) {
      case F16 -> Float.floatToFloat16(value);
      case BF16 -> BF16Buffer.toBits(value);
      case F8E4M3 -> F8E4M3Buffer.toBitsSaturated(value);
      case F8E5M2 -> F8E5M2Buffer.toBitsSaturated(value);
      default -> throw new IllegalArgumentException("format " + format);
    };
  }
}
