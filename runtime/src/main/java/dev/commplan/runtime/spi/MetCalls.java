package dev.commplan.runtime.spi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.agreement.Agreement;
import dev.commplan.runtime.agreement.MeetingChecks;
import dev.commplan.runtime.agreement.MetCall;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a backend whose ranks meet in one process (a rendezvous for its collectives, mailboxes for its sends and
 * receives, as the local backend's) hands the agreement check where they meet: the ranks' calls. The check
 * decides whether they agree and, where they do not, words the {@link DisagreementException} each rank throws,
 * the same message the agreement check gives for the same mistake on every backend (docs/reliability.md,
 * "Agreement check"): it names the first call at which the ranks' records differ, or, where there are none (the
 * check is off), the calls met there. A backend finds the calls; it never compares or words them itself.
 */
public final class MetCalls {
  private MetCalls() {}

  /**
   * One rank's side of a call where the ranks meet, made once per call a backend enqueues (a compiled schedule's
   * calls once, at compile), so that comparing the calls where the ranks meet allocates nothing where they agree.
   */
  public static final class Call {
    private final Communicator comm;
    private final OperationLabel label;
    /** The call as the agreement check compares it. */
    private final MetCall met;

    /**
     * One rank's side of a call.
     *
     * @param comm the rank's communicator of the group they meet in (its rank, size and label name the ranks; its
     *     agreement check has the rank's records)
     * @param collective the collective; a send or receive included
     * @param type its data type
     * @param op its op, or null
     * @param rootOrPeer its root, a send's or receive's peer, or -1
     * @param count its count
     * @param label what made it: a plan's step, a direct call, or one of the agreement check's own calls
     */
    public Call(Communicator comm, Collective collective, DataType type, ReduceOp op, int rootOrPeer, long count,
        OperationLabel label) {
      this.comm = Objects.requireNonNull(comm, "comm");
      this.label = Objects.requireNonNull(label, "label");
      this.met = new MetCall(collective, type, op, rootOrPeer, count, label.planName(), label.step(), label.bucket(),
          label.fields(), label.isAgreementCheck());
    }

    /** {@return the rank's communicator of the group they meet in} */
    public Communicator comm() {
      return comm;
    }

    /** {@return what made the call} */
    public OperationLabel label() {
      return label;
    }

    @Override
    public String toString() {
      return "MetCalls.Call[" + comm + ": " + label + "]";
    }
  }

  /**
   * Whether the ranks' calls where they met for one collective agree.
   *
   * @param calls rank r's call at index r, one for every rank of the group (read, not kept)
   * @param sequence the collective's number on the group, from 0 (named only where the ranks have no records)
   * @return null where they agree, else rank r's exception at index r, all with the same message
   */
  public static List<DisagreementException> compareCollective(Call[] calls, long sequence) {
    for (int r = 1; r < calls.length; r++) {
      if (!calls[r].met.agreesWith(calls[0].met)) {
        return disagreement(calls, sequence);
      }
    }
    return null;
  }

  private static List<DisagreementException> disagreement(Call[] calls, long sequence) {
    List<Agreement> checks = new ArrayList<>(calls.length);
    List<MetCall> met = new ArrayList<>(calls.length);
    for (Call call : calls) {
      checks.add(Agreement.of(call.comm()));
      met.add(call.met);
    }
    return MeetingChecks.compareCollective(calls[0].comm().groupLabel(), checks, met, sequence);
  }

  /**
   * What a library's report that a message was longer than a call's count (MPI's {@code MPI_ERR_TRUNCATE}) says
   * about the ranks, as the agreement check words it, for a backend that learns it before any check compared the
   * calls and without the other side's call: its send was longer than a receive, or the ranks passed a collective
   * different counts; and what must agree. The backend's exception gives the library's words, then this.
   *
   * @param comm the communicator of the call
   * @param collective the call's collective; a receive included
   * @return {@code so the ranks passed it different counts (differing: count). Every rank of world must ...}
   */
  public static String truncationReading(Communicator comm, Collective collective) {
    return MeetingChecks.truncationReading(comm.groupLabel(), collective == Collective.RECV);
  }

  /**
   * Whether a send and the receive it met agree (the same data type and count).
   *
   * @param send the send, on its rank's communicator
   * @param receive the receive, on its rank's communicator of the same group
   * @return null where they agree, else the sender's exception at the sender's rank and the receiver's at the
   *     receiver's, with the same message (null for the other ranks)
   */
  public static List<DisagreementException> compareTransfer(Call send, Call receive) {
    if (send.met.pairsWith(receive.met)) {
      return null;
    }
    Communicator from = send.comm();
    Communicator to = receive.comm();
    return MeetingChecks.compareTransfer(from.groupLabel(), from.size(), from.rank(), send.met, to.rank(), receive.met,
        Agreement.of(from), Agreement.of(to));
  }
}
