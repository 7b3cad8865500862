package dev.commplan.annotations;

/**
 * The reduction applied by {@link AllReduce}, {@link Reduce} and {@link ReduceScatter}; each constant has
 * the meaning of the NCCL operation of the same name.
 */
public enum ReduceOp {
  /** {@code ncclSum}: the element-wise sum over ranks (integers wrap, as in C). */
  SUM,
  /** {@code ncclProd}: the element-wise product over ranks. */
  PROD,
  /** {@code ncclMax}: the element-wise maximum over ranks. */
  MAX,
  /** {@code ncclMin}: the element-wise minimum over ranks. */
  MIN,
  /**
   * {@code ncclAvg}: the element-wise sum divided by the number of ranks (integer division for integer
   * types). Needs NCCL 2.10 or newer on the NCCL backend. Not offered on the fp8 types ({@code
   * F8E4M3Buffer}, {@code F8E5M2Buffer}): NCCL multiplies their sum by 1/ranks rounded to fp8, which is
   * not an average, so the processor and every backend reject it ({@code [CommPlan/Fp8Average]}).
   */
  AVG
}
