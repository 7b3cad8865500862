package dev.commplan.model;

import java.util.Locale;

/**
 * The collectives of the DSL, each once, with everything the processor, the runtime's plans and its
 * backends need to know about it: the annotation, the NCCL function, whether it takes an op or a root,
 * its count rule and what in place means. Adding a collective starts here (CONTRIBUTING.md's recipe lists
 * the other files it touches).
 */
public enum Collective {
  /**
   * Every rank's send buffer reduced element-wise with a {@code ReduceOp}; every rank receives the result.
   */
  ALL_REDUCE("AllReduce", "ncclAllReduce", Operand.OP, CountRule.SAME, InPlace.SAME_BUFFER, "reduces into", true),
  /** {@code root}'s send buffer copied into every rank's receive buffer. */
  BROADCAST("Broadcast", "ncclBroadcast", Operand.ROOT, CountRule.SAME, InPlace.SAME_BUFFER, "broadcasts into", true),
  /** Every rank's send buffer concatenated in rank order into every rank's receive buffer. */
  ALL_GATHER("AllGather", "ncclAllGather", Operand.NONE, CountRule.RECV_IS_RANKS_TIMES_SEND,
      InPlace.SEND_IS_RANK_SLICE_OF_RECV, "gathers into", false),
  /** The element-wise reduction of every rank's send buffer, split in rank order; rank i receives slice i. */
  REDUCE_SCATTER("ReduceScatter", "ncclReduceScatter", Operand.OP, CountRule.SEND_IS_RANKS_TIMES_RECV,
      InPlace.RECV_IS_RANK_SLICE_OF_SEND, "scatters into", false),
  /** The reduction lands on {@code root} only; the other ranks' receive buffers are left untouched. */
  REDUCE("Reduce", "ncclReduce", Operand.OP_AND_ROOT, CountRule.SAME, InPlace.SAME_BUFFER, "reduces into", true),
  /** {@code root}'s receive buffer gets every rank's send buffer, rank i's at slice i; the others' are untouched. */
  GATHER("Gather", "ncclGather", Operand.ROOT, CountRule.RECV_IS_RANKS_TIMES_SEND, InPlace.SEND_IS_RANK_SLICE_OF_RECV,
      "gathers into", false),
  /** {@code root}'s send buffer holds one slice per rank; rank i receives slice i. */
  SCATTER("Scatter", "ncclScatter", Operand.ROOT, CountRule.SEND_IS_RANKS_TIMES_RECV,
      InPlace.RECV_IS_RANK_SLICE_OF_SEND, "scatters into", false),
  /** Slice j of the send buffer goes to rank j; slice i of the receive buffer comes from rank i. Out of place only. */
  ALL_TO_ALL("AllToAll", "ncclAlltoAll", Operand.NONE, CountRule.SAME_DIVISIBLE, InPlace.NOT_ALLOWED,
      "exchanges into", false),
  /** Point-to-point: this rank's one buffer goes to a peer, which receives it with {@link #RECV}. */
  SEND("Send", "ncclSend", Operand.PEER, CountRule.SAME, InPlace.ONE_BUFFER, "sends", false),
  /** Point-to-point: this rank's one buffer is filled from a peer, which sends it with {@link #SEND}. */
  RECV("Recv", "ncclRecv", Operand.PEER, CountRule.SAME, InPlace.ONE_BUFFER, "receives", false);

  /** What a collective takes besides its buffers. */
  public enum Operand {
    /** Buffers only: AllGather, AllToAll. */
    NONE,
    /** A {@code ReduceOp}. */
    OP,
    /** A root rank. */
    ROOT,
    /** A {@code ReduceOp} and a root rank: Reduce. */
    OP_AND_ROOT,
    /** A peer ({@link Peer}): Send, Recv. */
    PEER
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

  /** {@return the annotation's simple name, such as {@code AllGather}} */
  public String annotation() {
    return annotation;
  }

  /** {@return the annotation's qualified name, such as {@code dev.commplan.annotations.AllGather}} */
  public String annotationName() {
    return "dev.commplan.annotations." + annotation;
  }

  /** {@return the label, lower case and hyphenated, for messages and descriptions: {@code all-gather}} */
  public String label() {
    return label;
  }

  /**
   * {@return the name of the methods that issue or declare it ({@code Communicator}, {@code PlanBuilder}): {@code allGather}}
   */
  public String methodName() {
    return methodName;
  }

  /** {@return the NCCL function, such as {@code ncclAllGather}} */
  public String ncclFunction() {
    return ncclFunction;
  }

  /** {@return what it takes besides its buffers} */
  public Operand operand() {
    return operand;
  }

  /** {@return whether it takes a {@code ReduceOp}} */
  public boolean hasOp() {
    return operand == Operand.OP || operand == Operand.OP_AND_ROOT;
  }

  /** {@return whether it takes a root rank} */
  public boolean hasRoot() {
    return operand == Operand.ROOT || operand == Operand.OP_AND_ROOT;
  }

  /** {@return whether it takes a peer: point-to-point (Send, Recv)} */
  public boolean hasPeer() {
    return operand == Operand.PEER;
  }

  /**
   * {@return whether it is point-to-point (Send, Recv): one buffer, one peer, no collective meeting of all ranks}
   */
  public boolean pointToPoint() {
    return operand == Operand.PEER;
  }

  /** {@return the other side of a point-to-point transfer (Send for Recv, Recv for Send), or null} */
  public Collective counterpart() {
    return switch (this) {
      case SEND -> RECV;
      case RECV -> SEND;
      default -> null;
    };
  }

  /**
   * {@return the annotation attribute that names the peer: {@code to} (Send), {@code from} (Recv), or null}
   */
  public String peerAttribute() {
    return switch (this) {
      case SEND -> "to";
      case RECV -> "from";
      default -> null;
    };
  }

  /** {@return whether it reads its send side (every one but Recv, which only writes)} */
  public boolean readsSend() {
    return this != RECV;
  }

  /**
   * Whether it writes its receive side (every one but Send, which only reads). Reduce and Gather write it
   * on the root only ({@link #writesRecvOnRootOnly()}), but write it: the race rule (rule 19) counts it.
   *
   * @return false for Send only
   */
  public boolean writesRecv() {
    return this != SEND;
  }

  /**
   * Whether the receive side is written on the root only (Reduce, Gather): the other ranks' receive
   * buffers are left untouched. It is still a write for the race rule (rule 19): every rank runs the same
   * plan, so a field one rank's call writes is written.
   *
   * @return true for Reduce and Gather
   */
  public boolean writesRecvOnRootOnly() {
    return this == REDUCE || this == GATHER;
  }

  /** {@return how the receive count follows from the send count} */
  public CountRule counts() {
    return counts;
  }

  /** {@return what in place means for it} */
  public InPlace inPlace() {
    return inPlace;
  }

  /** {@return how messages say "send ... into recv": {@code gathers into}} */
  public String intoVerb() {
    return intoVerb;
  }

  /**
   * Whether one call over a concatenation means the same as separate calls over the parts, so that
   * adjacent buffers may be coalesced into one call (AllReduce, Broadcast, Reduce; not AllGather,
   * ReduceScatter, Gather, Scatter or AllToAll, whose concatenated buffers are rank-major, nor Send and
   * Recv, whose peers may differ).
   *
   * @return true if adjacent buffers may share one call
   */
  public boolean elementwise() {
    return elementwise;
  }

  /**
   * The collective whose annotation has this qualified name, or null.
   *
   * @param qualifiedName an annotation type's qualified name, as the processor sees it
   * @return the collective, or null when the name is not a collective's annotation
   */
  public static Collective forAnnotation(String qualifiedName) {
    for (Collective c : values()) {
      if (c.annotationName().equals(qualifiedName)) {
        return c;
      }
    }
    return null;
  }
}
