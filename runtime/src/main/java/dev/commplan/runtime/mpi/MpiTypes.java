package dev.commplan.runtime.mpi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.mpi.internal.Mpi;
import dev.commplan.runtime.mpi.internal.UserOps;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * How CommPlan's data types and reductions travel through MPI ({@link MpiCallTable} says why): the MPI
 * datatype a type moves as, the {@code MPI_Op} of a reduction (predefined, or {@link UserOps}' for the
 * 16- and 8-bit floats and for wrapping 8-bit integer sums and products), and AVG's division once the
 * sum is complete.
 */
final class MpiTypes {
  private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
  private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
  private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED;

  private MpiTypes() {}

  /** The MPI datatype a call moves {@code type} as (see the class comment for signed SUM/PROD/AVG). */
  static long mpiType(DataType type, ReduceOp op) {
    boolean wraps = op == ReduceOp.SUM || op == ReduceOp.PROD || op == ReduceOp.AVG;
    return switch (type) {
      case F16, BF16 -> Mpi.Handles.UINT16;
      case F8E4M3, F8E5M2 -> Mpi.Handles.UINT8;
      case F32 -> Mpi.Handles.FLOAT;
      case F64 -> Mpi.Handles.DOUBLE;
      case I8 -> wraps ? Mpi.Handles.UINT8 : Mpi.Handles.INT8;
      case U8 -> Mpi.Handles.UINT8;
      case I32 -> wraps ? Mpi.Handles.UINT32 : Mpi.Handles.INT32;
      case U32 -> Mpi.Handles.UINT32;
      case I64 -> wraps ? Mpi.Handles.UINT64 : Mpi.Handles.INT64;
      case U64 -> Mpi.Handles.UINT64;
    };
  }

  /** The MPI op for {@code op} on {@code type}: predefined, or CommPlan's for 16- and 8-bit floats; AVG is SUM. */
  static long mpiOp(DataType type, ReduceOp op, String where) {
    boolean bytes = (type == DataType.I8 || type == DataType.U8) && op != ReduceOp.MIN && op != ReduceOp.MAX;
    if (type == DataType.F16 || type == DataType.BF16 || type.isFloat8() || bytes) {
      int index = switch (op) {
        case SUM, AVG -> UserOps.SUM;
        case PROD -> UserOps.PROD;
        case MIN -> UserOps.MIN;
        case MAX -> UserOps.MAX;
      };
      long handle;
      MpiRuntime.LOCK.lock();
      try {
        int format = switch (type) {
          case F16 -> UserOps.F16;
          case BF16 -> UserOps.BF16;
          case F8E4M3 -> UserOps.F8E4M3;
          case F8E5M2 -> UserOps.F8E5M2;
          default -> UserOps.WRAP8;
        };
        handle = UserOps.op(format, index);
      } finally {
        MpiRuntime.LOCK.unlock();
      }
      if (handle < 0) {
        throw MpiRuntime.error("MPI_Op_create", (int) -handle, "creating the " + type + " " + op + " reduction for " + where);
      }
      return handle;
    }
    return switch (op) {
      case SUM, AVG -> Mpi.Handles.OP_SUM;
      case PROD -> Mpi.Handles.OP_PROD;
      case MIN -> Mpi.Handles.OP_MIN;
      case MAX -> Mpi.Handles.OP_MAX;
    };
  }

  /** Divides {@code n} elements of {@code type} at {@code offset} of {@code at} by {@code ranks}, as NCCL's AVG. */
  static void divide(DataType type, MemorySegment at, long offset, long n, int ranks) {
    switch (type) {
      case F8E4M3, F8E5M2 -> {
        int format = type == DataType.F8E4M3 ? UserOps.F8E4M3 : UserOps.F8E5M2;
        for (long i = 0, p = offset; i < n; i++, p++) {
          byte bits = at.get(ValueLayout.JAVA_BYTE, p);
          at.set(ValueLayout.JAVA_BYTE, p, (byte) UserOps.toBits(format, UserOps.toFloat(format, bits) / ranks));
        }
      }
      case F16, BF16 -> {
        int format = type == DataType.F16 ? UserOps.F16 : UserOps.BF16;
        for (long i = 0, p = offset; i < n; i++, p += 2) {
          at.set(SHORT, p, UserOps.toBits(format, UserOps.toFloat(format, at.get(SHORT, p)) / ranks));
        }
      }
      case F32 -> {
        for (long i = 0, p = offset; i < n; i++, p += 4) {
          at.set(FLOAT, p, at.get(FLOAT, p) / ranks);
        }
      }
      case F64 -> {
        for (long i = 0, p = offset; i < n; i++, p += 8) {
          at.set(DOUBLE, p, at.get(DOUBLE, p) / ranks);
        }
      }
      case I8 -> {
        for (long i = 0, p = offset; i < n; i++, p++) {
          at.set(ValueLayout.JAVA_BYTE, p, (byte) (at.get(ValueLayout.JAVA_BYTE, p) / ranks));
        }
      }
      case U8 -> {
        for (long i = 0, p = offset; i < n; i++, p++) {
          at.set(ValueLayout.JAVA_BYTE, p, (byte) (Byte.toUnsignedInt(at.get(ValueLayout.JAVA_BYTE, p)) / ranks));
        }
      }
      case I32 -> {
        for (long i = 0, p = offset; i < n; i++, p += 4) {
          at.set(INT, p, at.get(INT, p) / ranks);
        }
      }
      case U32 -> {
        for (long i = 0, p = offset; i < n; i++, p += 4) {
          at.set(INT, p, Integer.divideUnsigned(at.get(INT, p), ranks));
        }
      }
      case I64 -> {
        for (long i = 0, p = offset; i < n; i++, p += 8) {
          at.set(LONG, p, at.get(LONG, p) / ranks);
        }
      }
      case U64 -> {
        for (long i = 0, p = offset; i < n; i++, p += 8) {
          at.set(LONG, p, Long.divideUnsigned(at.get(LONG, p), ranks));
        }
      }
    }
  }

  /** The non-blocking MPI function that starts {@code collective}. */
  static String startFunction(Collective collective) {
    return switch (collective) {
      case ALL_REDUCE -> "MPI_Iallreduce";
      case ALL_GATHER -> "MPI_Iallgather";
      case REDUCE_SCATTER -> "MPI_Ireduce_scatter_block";
      case BROADCAST -> "MPI_Ibcast";
      case REDUCE -> "MPI_Ireduce";
      case GATHER -> "MPI_Igather";
      case SCATTER -> "MPI_Iscatter";
      case ALL_TO_ALL -> "MPI_Ialltoall";
      case SEND -> "MPI_Isend";
      case RECV -> "MPI_Irecv";
    };
  }
}
