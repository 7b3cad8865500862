package dev.commplan.model;

/**
 * The stable ids of CommPlan's rules, printed as {@code [CommPlan/Id]} by the processor (compile errors)
 * and by the runtime (the same rule checked when a plan is built or a collective is called), and listed
 * with an example each in docs/dsl.md. {@link #rule()} is the rule's number in the DSL contract's list of
 * compile errors, or 0 for ids the contract does not number.
 */
public enum RuleId {
  /** Rule 1: an AllGather or Gather receive buffer that is not ranks × the send count. */
  GATHER_SIZE("GatherSize", 1),
  /** Rule 2: a ReduceScatter or Scatter send buffer that is not ranks × the receive count. */
  SCATTER_SIZE("ScatterSize", 2),
  /** Rule 3: an AllReduce, Broadcast or Reduce receive buffer of another count than the send buffer. */
  COUNT_MISMATCH("CountMismatch", 3),
  /** Rule 4: {@code into} names no field. */
  UNKNOWN_INTO("UnknownInto", 4),
  /** Rule 4: {@code into} names a field that is not a buffer. */
  INTO_NOT_BUFFER("IntoNotBuffer", 4),
  /** Rule 4: {@code into} names the annotated field itself. */
  INTO_SELF("IntoSelf", 4),
  /** Rule 5: send and receive buffers of different data types. */
  TYPE_MISMATCH("TypeMismatch", 5),
  /** Rule 6: a collective or {@code @Shape} on a field that is not a buffer type. */
  NOT_A_BUFFER("NotABuffer", 6),
  /** Rule 7: a buffer of a collective without {@code @Shape}. */
  MISSING_SHAPE("MissingShape", 7),
  /** Rule 8: a {@code @Shape} entry that does not parse, or a shape with no entries. */
  BAD_SHAPE("BadShape", 8),
  /** Rule 8: a {@code @Shape} name that {@code @CommPlan(dims)} does not declare. */
  UNKNOWN_DIM("UnknownDim", 8),
  /** Rule 8: a constant factor of a shape beyond {@code long}. */
  COUNT_OVERFLOW("CountOverflow", 8),
  /** Rule 9: a root below 0, or not below the plan's fixed ranks (at build: the communicator's size). */
  BAD_ROOT("BadRoot", 9),
  /** Rule 10: an in-place buffer holding one slice per rank whose count does not divide by the ranks. */
  NOT_DIVISIBLE("NotDivisible", 10),
  /** Rule 11: two calls of one step where one writes what the other reads or writes. */
  STEP_RACE("StepRace", 11),
  /** Rule 12: two collectives on one field in one step. */
  DUPLICATE_COLLECTIVE("DuplicateCollective", 12),
  /** Rule 13: a private annotated field. */
  PRIVATE_FIELD("PrivateField", 13),
  /** Rule 13: {@code @CommPlan} on something that is not a plain class. */
  BAD_TARGET("BadTarget", 13),
  /** Rule 14: a reserved, duplicated or invalid dim name. */
  BAD_DIM("BadDim", 14),
  /** Rule 14: a negative {@code @CommPlan(ranks)}. */
  BAD_RANKS("BadRanks", 14),
  /** AllToAll: count(into) = count(send), divisible by ranks. */
  ALL_TO_ALL_SIZE("AllToAllSize", 15),
  /** AllToAll without {@code into}: it has no in-place form. */
  MISSING_INTO("MissingInto", 15),
  /** A Send {@code to} or Recv {@code from} that does not parse as a peer ({@link Peer#parse}). */
  BAD_PEER("BadPeer", 17),
  /** A Send without a matching Recv in its step, or a Recv without a matching Send. */
  UNMATCHED_PEER("UnmatchedPeer", 18),
  /** An {@code over} naming an axis {@code @CommPlan(axes)} does not declare, or {@code over} in a plan without axes. */
  UNKNOWN_AXIS("UnknownAxis", 20),
  /** A reserved ({@code rank}, {@code ranks}), duplicated or invalid axis name, or one that is also a dim. */
  BAD_AXIS("BadAxis", 20),
  /**
   * A negative {@code @CommPlan(bucketBytes)} (at build: a negative {@code PlanBuilder.bucketBytes}), or a
   * bucketed plan that sends more fields than its generated {@code enum Field} can hold.
   */
  BAD_BUCKET("BadBucket", 23),
  /**
   * AVG on an fp8 type (F8E4M3, F8E5M2): NCCL computes it as a sum multiplied by 1/ranks rounded to fp8,
   * not an average, and fails on one rank, so no backend offers it (CommPlan's own rule).
   */
  FP8_AVERAGE("Fp8Average", 0),
  /** An unusable {@code @CommPlan(name)}. */
  BAD_NAME("BadName", 0),
  /** Plan annotations in a class without {@code @CommPlan}. */
  NOT_IN_PLAN("NotInPlan", 0),
  /** A type the processor needs never resolved (another compile error is the cause). */
  UNRESOLVED("Unresolved", 0),
  /** The processor could not write a generated file. */
  WRITE_FAILED("WriteFailed", 0),
  /** A bug in the processor; the message asks for a report. */
  INTERNAL_ERROR("InternalError", 0),
  // Checked only when a plan is built or a collective is called: they need the real buffers.
  /** Two buffers of one collective share memory other than in NCCL's in-place arrangement. */
  OVERLAP("Overlap", 0),
  /** A buffer of another communicator, a closed one, or one of the wrong element count. */
  BAD_BUFFER("BadBuffer", 0);

  private final String id;
  private final int rule;

  RuleId(String id, int rule) {
    this.id = id;
    this.rule = rule;
  }

  /** {@return the id, such as {@code GatherSize}} */
  public String id() {
    return id;
  }

  /** {@return the rule's number in the DSL contract (docs/dsl.md lists them), or 0} */
  public int rule() {
    return rule;
  }

  /** {@return how messages start: {@code [CommPlan/GatherSize]}} */
  public String tag() {
    return "[CommPlan/" + id + "]";
  }
}
