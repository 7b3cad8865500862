package dev.commplan.model;

import java.util.Locale;

/**
 * The collectives of the DSL, each once, with everything the processor, the runtime's plans and its
 * backends need to know about it: the annotation, the NCCL function, whether it takes an op or a root,
 * its count rule and what in place means. Adding a collective starts here (docs/architecture.md lists
 * the other files it touches).
 */
public enum Collective {
  ALL_REDUCE("AllReduce", "ncclAllReduce", Operand.OP, CountRule.SAME, InPlace.SAME_BUFFER, "reduces into", true),
  BROADCAST("Broadcast", "ncclBroadcast", Operand.ROOT, CountRule.SAME, InPlace.SAME_BUFFER, "broadcasts into", true),
  ALL_GATHER("AllGather", "ncclAllGather", Operand.NONE, CountRule.RECV_IS_RANKS_TIMES_SEND,
      InPlace.SEND_IS_RANK_SLICE_OF_RECV, "gathers into", false),
  REDUCE_SCATTER("ReduceScatter", "ncclReduceScatter", Operand.OP, CountRule.SEND_IS_RANKS_TIMES_RECV,
      InPlace.RECV_IS_RANK_SLICE_OF_SEND, "scatters into", false);

  /** What a collective takes besides its buffers. */
  public enum Operand {
    NONE,
    /** A {@code ReduceOp}. */
    OP,
    /** A root rank. */
    ROOT
  }

  private final String annotation;
  private final String ncclFunction;
  private final Operand operand;
  private final CountRule counts;
  private final InPlace inPlace;
  private final String intoVerb;
  private final boolean elementwise;
  private final String label;
  private final String methodName;

  Collective(String annotation, String ncclFunction, Operand operand, CountRule counts, InPlace inPlace,
      String intoVerb, boolean elementwise) {
    this.annotation = annotation;
    this.ncclFunction = ncclFunction;
    this.operand = operand;
    this.counts = counts;
    this.inPlace = inPlace;
    this.intoVerb = intoVerb;
    this.elementwise = elementwise;
    this.label = annotation.replaceAll("(?<=[a-z])(?=[A-Z])", "-").toLowerCase(Locale.ROOT);
    this.methodName = Character.toLowerCase(annotation.charAt(0)) + annotation.substring(1);
  }

  /** The annotation's simple name, such as {@code AllGather}. */
  public String annotation() {
    return annotation;
  }

  /** The annotation's qualified name, such as {@code dev.commplan.annotations.AllGather}. */
  public String annotationName() {
    return "dev.commplan.annotations." + annotation;
  }

  /** Lower case and hyphenated, for messages and descriptions: {@code all-gather}. */
  public String label() {
    return label;
  }

  /** The name of the methods that issue or declare it ({@code Communicator}, {@code PlanBuilder}): {@code allGather}. */
  public String methodName() {
    return methodName;
  }

  /** The NCCL function, such as {@code ncclAllGather}. */
  public String ncclFunction() {
    return ncclFunction;
  }

  /** What it takes besides its buffers. */
  public Operand operand() {
    return operand;
  }

  /** Whether it takes a {@code ReduceOp}. */
  public boolean hasOp() {
    return operand == Operand.OP;
  }

  /** Whether it takes a root rank. */
  public boolean hasRoot() {
    return operand == Operand.ROOT;
  }

  /** How the receive count follows from the send count. */
  public CountRule counts() {
    return counts;
  }

  /** What in place means for it. */
  public InPlace inPlace() {
    return inPlace;
  }

  /** How messages say "send ... into recv": {@code gathers into}. */
  public String intoVerb() {
    return intoVerb;
  }

  /**
   * Whether one call over a concatenation means the same as separate calls over the parts, so that
   * adjacent buffers may be coalesced into one call (AllReduce, Broadcast; not AllGather or
   * ReduceScatter, whose concatenated result is rank-major).
   */
  public boolean elementwise() {
    return elementwise;
  }

  /** The collective whose annotation has this qualified name, or null. */
  public static Collective forAnnotation(String qualifiedName) {
    for (Collective c : values()) {
      if (c.annotationName().equals(qualifiedName)) {
        return c;
      }
    }
    return null;
  }
}
