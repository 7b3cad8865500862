package dev.commplan.runtime.nccl.binding;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.nccl.NcclVersion;
import java.util.Locale;

/**
 * Which data types and ops the loaded NCCL supports: {@code ncclAvg} and {@code ncclBfloat16} need NCCL
 * {@link NcclVersion#AVG_AND_BF16} or newer, the fp8 types {@link NcclVersion#FP8}.
 */
public final class NcclTypeSupport {
  private NcclTypeSupport() {}

  /**
   * Throws {@link #unsupported}'s exception: on an older NCCL a plan ({@code forPlan}) fails to build with a
   * {@link PlanBuildException}, a direct call with a {@link BackendUnavailableException}, naming both versions.
   */
  public static void require(NcclVersion version, DataType type, ReduceOp op, boolean forPlan) {
    RuntimeException e = unsupported(version, type, op, forPlan);
    if (e != null) {
      throw e;
    }
  }

  /** What {@link #require} throws on NCCL {@code version}, or null when it supports {@code type} and {@code op}. */
  public static RuntimeException unsupported(NcclVersion version, DataType type, ReduceOp op, boolean forPlan) {
    if (type.isFloat8() && !version.atLeast(NcclVersion.FP8)) {
      String message = "DataType." + type + " (ncclFloat8" + type.name().substring(2).toLowerCase(Locale.ROOT)
          + ") needs NCCL " + NcclVersion.FP8 + " or newer, and this process loaded NCCL " + version
          + "; use F16 or BF16, or a newer NCCL (point -D" + NcclEnvironment.NCCL_PROPERTY
          + " at it)";
      return forPlan ? new PlanBuildException(message) : new BackendUnavailableException(message);
    }
    if (version.atLeast(NcclVersion.AVG_AND_BF16)) {
      return null;
    }
    if (op == ReduceOp.AVG) {
      return new BackendUnavailableException("ReduceOp.AVG (ncclAvg) needs NCCL " + NcclVersion.AVG_AND_BF16
          + " or newer, and this process loaded NCCL " + version + "; use SUM and divide, or a newer NCCL");
    }
    if (type == DataType.BF16) {
      return new BackendUnavailableException("DataType.BF16 (ncclBfloat16) needs NCCL "
          + NcclVersion.AVG_AND_BF16 + " or newer, and this process loaded NCCL " + version);
    }
    return null;
  }
}
