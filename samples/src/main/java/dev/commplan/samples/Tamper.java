package dev.commplan.samples;

/**
 * For the tests of the {@code tp} and {@code 3d} samples: one reduction left out or done wrong on every
 * rank, so that the tests can show that each one is needed and that the sample's check catches its
 * absence. The command line always runs {@link #NONE}.
 */
enum Tamper {
  /** The sample as it is. */
  NONE,
  /** The forward pass's all-reduce over tp is not executed: each rank goes on with its own partial output. */
  TP_FORWARD_NOT_REDUCED,
  /** The backward pass's all-reduce over tp is not executed: each rank goes on with its own part of the input gradient. */
  TP_BACKWARD_NOT_REDUCED,
  /** The gradient average over dp is not executed: each replica steps with its own gradient. */
  DP_NOT_AVERAGED,
  /** The gradients are summed over dp instead of averaged, as {@code op = SUM} would: too large a step. */
  DP_SUMMED
}
