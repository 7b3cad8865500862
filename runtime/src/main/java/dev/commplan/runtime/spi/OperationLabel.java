package dev.commplan.runtime.spi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What one enqueued operation is, for timeout messages, the {@link FlightRecorder} and the flight records on
 * disk (docs/flight-records.md): the plan, step and fields, its text, made once, and the calls it issued, each
 * with its arguments ({@link Call}). Backends make one per call or step when they compile a schedule, so that
 * recording an operation at execute time stores a reference and builds nothing.
 *
 * @param planName the plan's name, or null for a collective called directly on a communicator
 * @param step the step's number (the annotations' {@code step}), or -1 outside a plan
 * @param bucket the bucket of a bucketed plan's round ({@code Step.bucket()}), or -1
 * @param collective the text of the calls with their arguments: {@code all-reduce F32 SUM, count 16}
 * @param fields the plan fields the calls cover; empty outside a plan
 * @param calls the calls the operation issued together, each with its arguments; empty for work of this rank
 *     alone (a host task, a wait for an event), and for a label made without them (see {@link #kind()})
 */
public record OperationLabel(String planName, int step, int bucket, String collective, List<String> fields,
    List<Call> calls) {
  private static final String AGREEMENT_CHECK = "agreement check: ";

  /**
   * What an operation is to the other ranks, as the flight records on disk name it: which operations every
   * member of the group issues in the same order, and so numbers in the group's sequence.
   */
  public enum Kind {
    /** An operation of the whole group: a plan's step or bucket, a direct collective, a split. */
    COLLECTIVE,
    /** One of the agreement check's own calls. */
    CHECK,
    /** Sends and receives only: this rank and its peers, not the whole group. */
    P2P,
    /** Work of this rank alone on a stream: a host task, a wait for an event. */
    LOCAL;

    /** {@return whether every member of the group issues it in the same order: it takes the group's next number} */
    public boolean sequenced() {
      return this == COLLECTIVE || this == CHECK;
    }
  }

  /**
   * One call of an operation, with its arguments as it was made.
   *
   * @param collective the collective's label ({@link Collective#label()}: {@code all-reduce}, {@code send}), or
   *     another operation's name ({@code split})
   * @param type the data type, or null where there is none (a split)
   * @param op the reduction, or null for a collective without one
   * @param count the element count as the call was made (for an all-gather, each rank's part), or -1 where there
   *     is none
   * @param root the root, a rank of the call's group, or -1 for a collective without one
   * @param peer the peer of a send or receive, a rank of the call's group, or -1 for everything else
   * @param over the mesh axis the call runs over where that is not the group of the operation it belongs to
   *     (a plan built on a mesh's world runs some calls over {@code tp}), or null
   * @param fields the plan's fields the call covers; empty outside a plan
   */
  public record Call(String collective, DataType type, ReduceOp op, long count, int root, int peer, String over,
      List<String> fields) {
    /**
     * Checks the call and copies {@code fields}.
     *
     * @param collective the collective's label, not null
     * @param type the data type, or null
     * @param op the reduction, or null
     * @param count the element count, or -1
     * @param root the root, or -1
     * @param peer the peer, or -1
     * @param over the mesh axis, or null
     * @param fields the plan's fields the call covers
     */
    public Call {
      Objects.requireNonNull(collective, "collective");
      over = over == null || over.isEmpty() ? null : over;
      fields = List.copyOf(fields);
    }

    /**
     * A call of {@code collective} as a backend issues it: {@code rootOrPeer} is the root of a rooted collective,
     * the peer of a send or receive (and ignored otherwise).
     *
     * @param collective the collective
     * @param type its data type
     * @param op its reduction, or null
     * @param count its count
     * @param rootOrPeer its root or peer, or -1
     * @param over the mesh axis it runs over where that is not the operation's group, or null or empty
     * @param fields the plan's fields it covers
     * @return the call
     */
    public static Call of(Collective collective, DataType type, ReduceOp op, long count, int rootOrPeer, String over,
        List<String> fields) {
      return new Call(collective.label(), type, collective.hasOp() ? op : null, count,
          collective.hasRoot() ? rootOrPeer : -1, collective.pointToPoint() ? rootOrPeer : -1, over, fields);
    }

    /** {@return whether it is a send or a receive} */
    public boolean pointToPoint() {
      return collective.equals(Collective.SEND.label()) || collective.equals(Collective.RECV.label());
    }

    /**
     * {@return the call in the runtime's words: {@code all-reduce F32 SUM, count 16}, {@code broadcast over tp F32
     * root 0, count 4}, {@code send F32 to rank 1, count 4}}
     */
    public String describe() {
      StringBuilder s = new StringBuilder(collective);
      if (over != null) {
        s.append(" over ").append(over);
      }
      if (type != null) {
        s.append(' ').append(type);
      }
      if (op != null) {
        s.append(' ').append(op);
      }
      if (root >= 0) {
        s.append(" root ").append(root);
      }
      if (peer >= 0) {
        s.append(collective.equals(Collective.SEND.label()) ? " to rank " : " from rank ").append(peer);
      }
      return count >= 0 ? s.append(", count ").append(count).toString() : s.toString();
    }
  }

  /**
   * Checks the label and copies {@code fields} and {@code calls}.
   *
   * @param planName the plan's name, or null for a collective called directly on a communicator
   * @param step the step's number, or -1 outside a plan
   * @param bucket the bucket of a bucketed plan's round, or -1
   * @param collective the text of the calls with their arguments; not null
   * @param fields the plan fields the calls cover; empty outside a plan
   * @param calls the calls, each with its arguments; empty for work of this rank alone
   */
  public OperationLabel {
    Objects.requireNonNull(collective, "collective");
    fields = List.copyOf(fields);
    calls = List.copyOf(calls);
  }

  /**
   * A label without its calls, for a backend that does not say what it issued: the flight records on disk
   * write it as work of this rank alone ({@link Kind#LOCAL}), which no other rank's record is aligned with.
   *
   * @param planName the plan's name, or null for a collective called directly on a communicator
   * @param step the step's number, or -1 outside a plan
   * @param bucket the bucket of a bucketed plan's round, or -1
   * @param collective the collective with its arguments; not null
   * @param fields the plan fields the call covers; empty outside a plan
   */
  public OperationLabel(String planName, int step, int bucket, String collective, List<String> fields) {
    this(planName, step, bucket, collective, fields, List.of());
  }

  /**
   * A label without its calls, outside any bucket (see {@link #OperationLabel(String, int, int, String, List)}).
   *
   * @param planName the plan's name, or null for a collective called directly on a communicator
   * @param step the step's number, or -1 outside a plan
   * @param collective the collective with its arguments; not null
   * @param fields the plan fields the call covers; empty outside a plan
   */
  public OperationLabel(String planName, int step, String collective, List<String> fields) {
    this(planName, step, -1, collective, fields);
  }

  /**
   * The label of a plan's step (or of one call of it) that issues {@code calls}: its text is their {@link
   * Call#describe()}s joined by {@code " + "}, its fields theirs, each once, in call order.
   *
   * @param planName the plan's name
   * @param step the step's number
   * @param bucket the bucket of a bucketed plan's round, or -1
   * @param calls the calls, at least one
   * @return the label
   */
  public static OperationLabel ofCalls(String planName, int step, int bucket, List<Call> calls) {
    Set<String> fields = new LinkedHashSet<>();
    for (Call c : calls) {
      fields.addAll(c.fields());
    }
    return new OperationLabel(planName, step, bucket, describe(calls), new ArrayList<>(fields), calls);
  }

  /**
   * A collective called directly on a communicator, not through a plan, known by its text only (see {@link
   * #OperationLabel(String, int, int, String, List)}).
   *
   * @param collective the collective with its arguments: {@code all-reduce F32 SUM, count 16}
   * @return the label, outside any plan
   */
  public static OperationLabel direct(String collective) {
    return new OperationLabel(null, -1, collective, List.of());
  }

  /**
   * Work of this rank alone, outside any plan: a host task, a wait for an event.
   *
   * @param what what it is: {@code host task}
   * @return the label, without calls ({@link Kind#LOCAL})
   */
  public static OperationLabel local(String what) {
    return direct(what);
  }

  /**
   * A collective called directly on a communicator, not through a plan.
   *
   * @param call the call with its arguments
   * @return the label, outside any plan: {@code all-reduce F32 SUM, count 16 (called directly)}
   */
  public static OperationLabel direct(Call call) {
    return new OperationLabel(null, -1, -1, call.describe(), List.of(), List.of(call));
  }

  /**
   * One of the agreement check's own calls (docs/reliability.md, "Agreement check"), known by its text only.
   *
   * @param collective the collective with its arguments: {@code all-gather U64, count 4}
   * @return the label: {@code agreement check: all-gather U64, count 4}
   */
  public static OperationLabel agreementCheck(String collective) {
    return new OperationLabel(null, -1, AGREEMENT_CHECK + collective, List.of());
  }

  /**
   * One of the agreement check's own calls, made through the communicator's direct-call path.
   *
   * @param call the call with its arguments
   * @return the label: {@code agreement check: all-gather U64, count 4}
   */
  public static OperationLabel agreementCheck(Call call) {
    return new OperationLabel(null, -1, -1, AGREEMENT_CHECK + call.describe(), List.of(), List.of(call));
  }

  private static String describe(List<Call> calls) {
    StringBuilder s = new StringBuilder();
    for (Call c : calls) {
      s.append(s.isEmpty() ? "" : " + ").append(c.describe());
    }
    return s.toString();
  }

  /** {@return whether the operation is one of the agreement check's own calls ({@link #agreementCheck})} */
  public boolean isAgreementCheck() {
    return planName == null && collective.startsWith(AGREEMENT_CHECK);
  }

  /** {@return whether the operation belongs to a plan} */
  public boolean inPlan() {
    return planName != null;
  }

  /**
   * {@return what the operation is to the other ranks} The agreement check's calls are {@link Kind#CHECK};
   * an operation of sends and receives only is {@link Kind#P2P}; one without calls (a host task, an event's
   * wait, and a label made without its calls) is {@link Kind#LOCAL}; any other, {@link Kind#COLLECTIVE}.
   * Allocates nothing: the recorders ask it at every enqueue.
   */
  public Kind kind() {
    int n = calls.size();
    if (n == 0) {
      return Kind.LOCAL;
    }
    if (isAgreementCheck()) {
      return Kind.CHECK;
    }
    for (int i = 0; i < n; i++) {
      if (!calls.get(i).pointToPoint()) {
        return Kind.COLLECTIVE;
      }
    }
    return Kind.P2P;
  }

  /**
   * {@code plan p.Grads, step 0, all-reduce F32 SUM, count 16, fields [w, b]} ({@code plan p.Grads, step 0,
   * bucket 2, ...} in a bucket), or {@code all-reduce F32
   * SUM, count 16 (called directly)} outside a plan, {@code agreement check: all-gather U64, count 4} for the
   * agreement check's calls.
   */
  @Override
  public String toString() {
    return planName == null
        ? isAgreementCheck() ? collective : collective + " (called directly)"
        : "plan " + planName + ", step " + step + (bucket >= 0 ? ", bucket " + bucket : "") + ", " + collective
            + ", fields " + fields;
  }
}
