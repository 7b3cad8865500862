package dev.commplan.runtime.plan;

import dev.commplan.model.Peer;
import dev.commplan.model.PeerPairing;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * How a plan's sends and receives pair up (rule 18, {@link PeerPairing}, which the processor uses too):
 * within each step, each send, in declaration order, takes the first receive of that step not yet taken,
 * in declaration order, over the same group (rule 22: the same mesh axis), with the same data type and
 * count whose peer is the send's {@linkplain
 * Peer#inverse() inverse}. What is left over is unmatched ({@link
 * PeerRules#checkPairs} reports it).
 *
 * <p>The pairing also fixes the order the transfers are issued in ({@link #issueOrder}): NCCL and MPI
 * match the transfers between two ranks in the order they were issued, so every rank issues its sends in
 * declaration order and its receives in the order of the sends they pair with. On the channel from rank a
 * to rank b, a's sends to b and b's receives from a are then the same pairs in the same order, whichever
 * peer expressions lead there.
 */
final class PointToPointPairs {
  record Pair(Declarations.Call send, Declarations.Call recv) {}

  private final List<Pair> pairs;
  private final List<Declarations.Call> unmatched;

  private PointToPointPairs(List<Pair> pairs, List<Declarations.Call> unmatched) {
    this.pairs = pairs;
    this.unmatched = unmatched;
  }

  /** Pairs the sends and receives among {@code calls} (any order; steps are kept apart): {@link PeerPairing}. */
  static PointToPointPairs of(Declarations declarations, List<Declarations.Call> calls) {
    List<Declarations.Call> sends = new ArrayList<>();
    List<Declarations.Call> recvs = new ArrayList<>();
    for (Declarations.Call c : calls) {
      switch (c.collective()) {
        case SEND -> sends.add(c);
        case RECV -> recvs.add(c);
        default -> { }
      }
    }
    Comparator<Declarations.Call> declared = Comparator.comparingInt(Declarations.Call::order);
    sends.sort(declared);
    recvs.sort(declared);
    // The rule itself is the model's, the processor's too; here data is a declared type and count.
    PeerPairing<Declarations.Call> pairing = PeerPairing.of(sends, recvs, Declarations.Call::step,
        Declarations.Call::peer, (send, recv) -> {
          Declarations.Field field = declarations.field(send.send());
          Declarations.Field into = declarations.field(recv.recv());
          return send.group() == recv.group() && into.type() == field.type() && into.count() == field.count();
        });
    List<Pair> pairs = new ArrayList<>();
    for (PeerPairing.Pair<Declarations.Call> p : pairing.pairs()) {
      pairs.add(new Pair(p.send(), p.recv()));
    }
    List<Declarations.Call> unmatched = new ArrayList<>(pairing.unmatched());
    unmatched.sort(declared);
    return new PointToPointPairs(pairs, unmatched);
  }

  /** The pairs, in the declaration order of their sends. */
  List<Pair> pairs() {
    return pairs;
  }

  /** Sends and receives without a partner, in declaration order. */
  List<Declarations.Call> unmatched() {
    return unmatched;
  }

  /**
   * The sends and receives among {@code stepCalls} (one step's, already checked to pair up) in the order
   * to issue them: every send in declaration order, then every receive in the order of its send.
   */
  static List<Declarations.Call> issueOrder(Declarations declarations, List<Declarations.Call> stepCalls) {
    List<Pair> pairs = of(declarations, stepCalls).pairs();
    List<Declarations.Call> order = new ArrayList<>(2 * pairs.size());
    for (Pair p : pairs) {
      order.add(p.send());
    }
    for (Pair p : pairs) {
      order.add(p.recv());
    }
    return order;
  }
}
