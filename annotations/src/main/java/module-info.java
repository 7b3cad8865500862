/** The DSL: {@code @CommPlan}, the collective annotations, {@code @Shape}, {@code ReduceOp}. */
module dev.commplan.annotations {
  exports dev.commplan.annotations;
}
