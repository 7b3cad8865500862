package dev.commplan.runtime.nccl.binding;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.nccl.NcclVersion;

/**
 * NCCL's enum values ({@code ncclDataType_t}, {@code ncclRedOp_t}) for CommPlan's data types and reductions:
 * what a call passes to {@link NcclDispatch}. {@link NcclTypeSupport} says which of them the loaded NCCL has.
 */
public final class NcclEnums {
  private NcclEnums() {}

  /**
   * {@code ncclDataType_t} for {@code type} (values from nccl.h, {@code src/nccl.h.in} of NVIDIA/nccl;
   * {@code ncclFloat8e4m3 = 10} and {@code ncclFloat8e5m2 = 11} since NCCL 2.24.3, {@link NcclVersion#FP8}).
   */
  public static int dataType(DataType type) {
    return switch (type) {
      case I8 -> 0; // ncclInt8
      case U8 -> 1; // ncclUint8
      case I32 -> 2; // ncclInt32
      case U32 -> 3; // ncclUint32
      case I64 -> 4; // ncclInt64
      case U64 -> 5; // ncclUint64
      case F16 -> 6; // ncclFloat16
      case F32 -> 7; // ncclFloat32
      case F64 -> 8; // ncclFloat64
      case BF16 -> 9; // ncclBfloat16
      case F8E4M3 -> 10; // ncclFloat8e4m3
      case F8E5M2 -> 11; // ncclFloat8e5m2
    };
  }

  /** {@code ncclRedOp_t} for {@code op} (values from nccl.h). */
  public static int op(ReduceOp op) {
    return switch (op) {
      case SUM -> 0; // ncclSum
      case PROD -> 1; // ncclProd
      case MAX -> 2; // ncclMax
      case MIN -> 3; // ncclMin
      case AVG -> 4; // ncclAvg
    };
  }
}
