package dev.commplan.model;

/**
 * The stable ids of CommPlan's rules, printed as {@code [CommPlan/Id]} by the processor (compile errors)
 * and by the runtime (the same rule checked when a plan is built or a collective is called), and listed
 * with an example each in docs/dsl.md. {@link #rule()} is the rule's number in the DSL contract's list of
 * compile errors, or 0 for ids the contract does not number.
 */
public enum RuleId {
  GATHER_SIZE("GatherSize", 1),
  SCATTER_SIZE("ScatterSize", 2),
  COUNT_MISMATCH("CountMismatch", 3),
  UNKNOWN_INTO("UnknownInto", 4),
  INTO_NOT_BUFFER("IntoNotBuffer", 4),
  INTO_SELF("IntoSelf", 4),
  TYPE_MISMATCH("TypeMismatch", 5),
  NOT_A_BUFFER("NotABuffer", 6),
  MISSING_SHAPE("MissingShape", 7),
  BAD_SHAPE("BadShape", 8),
  UNKNOWN_DIM("UnknownDim", 8),
  COUNT_OVERFLOW("CountOverflow", 8),
  BAD_ROOT("BadRoot", 9),
  NOT_DIVISIBLE("NotDivisible", 10),
  STEP_RACE("StepRace", 11),
  DUPLICATE_COLLECTIVE("DuplicateCollective", 12),
  PRIVATE_FIELD("PrivateField", 13),
  BAD_TARGET("BadTarget", 13),
  BAD_DIM("BadDim", 14),
  BAD_RANKS("BadRanks", 14),
  /** AllToAll: count(into) = count(send), divisible by ranks. */
  ALL_TO_ALL_SIZE("AllToAllSize", 15),
  /** AllToAll without {@code into}: it has no in-place form. */
  MISSING_INTO("MissingInto", 15),
  /** A Send {@code to} or Recv {@code from} that does not parse as a peer ({@link Peer#parse}). */
  BAD_PEER("BadPeer", 17),
  /** A Send without a matching Recv in its step, or a Recv without a matching Send. */
  UNMATCHED_PEER("UnmatchedPeer", 18),
  BAD_NAME("BadName", 0),
  NOT_IN_PLAN("NotInPlan", 0),
  UNRESOLVED("Unresolved", 0),
  WRITE_FAILED("WriteFailed", 0),
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

  /** The id, such as {@code GatherSize}. */
  public String id() {
    return id;
  }

  /** The rule's number in the DSL contract (docs/dsl.md lists them), or 0. */
  public int rule() {
    return rule;
  }

  /** How messages start: {@code [CommPlan/GatherSize]}. */
  public String tag() {
    return "[CommPlan/" + id + "]";
  }
}
