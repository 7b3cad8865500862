package dev.commplan.processor.validation;

import dev.commplan.model.Collective;
import dev.commplan.model.Peer;
import dev.commplan.model.PeerPairing;
import dev.commplan.processor.diag.Message;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import dev.commplan.processor.shape.Monomial;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Rules 17, 18 and 22: a Send's {@code to} and a Recv's {@code from} parse as peers, and in each step every
 * Send pairs one to one with a Recv over the same axis, of the same data type and count, from its inverse
 * peer.
 */
final class PeerRules {
  private final PlanContext cx;
  /** Every Send and Recv whose peer parsed, in declaration order, for rule 18. */
  private final List<Transfer> transfers = new ArrayList<>();
  /** Steps with a Send or Recv that rule 18 cannot check (its peer, shape or type is wrong, and reported). */
  private final Set<Integer> uncheckedSteps = new HashSet<>();

  PeerRules(PlanContext cx) {
    this.cx = cx;
  }

  /**
   * A Send or Recv whose peer parsed, on a buffer field with a valid shape.
   *
   * @param count its count, with {@code ranks} replaced where the plan fixes it
   */
  private record Transfer(ParsedField f, ParsedCollective c, Peer peer, Monomial count) {
    int step() {
      return c.step().value();
    }

    /** The axis it runs over, or {@code ""}: a transfer pairs only within its group (rule 22). */
    String axis() {
      return c.axis();
    }

    /** Whether {@code other} could be its partner: the same group, data type and count. */
    boolean pairsWith(Transfer other) {
      return axis().equals(other.axis()) && sameData(other);
    }

    boolean sameData(Transfer other) {
      return f.bufferType() == other.f.bufferType() && count.equals(other.count);
    }
  }

  /** Rule 17: the peer parses ({@link Peer#parse}); a parsed one is kept for rule 18. */
  void checkPeer(ParsedField f, ParsedCollective c) {
    Peer peer;
    try {
      peer = Peer.parse(c.peer().value());
    } catch (IllegalArgumentException e) {
      cx.report.add(Message.BAD_PEER, f.element(), c.mirror(), c.peer().source(), c.describe(),
          c.kind().peerAttribute(), c.peer().value(), e.getMessage());
      uncheckedSteps.add(c.step().value());
      return;
    }
    Monomial count = cx.counts.get(f.name());
    if (!f.isBuffer() || count == null || cx.groupOf(c).isEmpty()) {
      uncheckedSteps.add(c.step().value()); // NotABuffer, MissingShape, a bad shape or UnknownAxis says why
      return;
    }
    transfers.add(new Transfer(f, c, peer, cx.effective(count)));
  }

  /**
   * Rules 18 and 22 ({@link PeerPairing}, the runtime's rule too): in each step every Send is matched one
   * to one by a Recv over the same axis (or both over the whole communicator), of the same data type and
   * count, from its inverse peer. Counts are compared as
   * CountMismatch compares them, as monomials. A step where some transfer could not be checked (its
   * error is reported) is left alone: what it lacks could be that one.
   */
  void checkPairs() {
    List<Transfer> sends = transfers.stream().filter(t -> t.c().kind() == Collective.SEND).toList();
    List<Transfer> recvs = transfers.stream().filter(t -> t.c().kind() == Collective.RECV).toList();
    PeerPairing<Transfer> pairing = PeerPairing.of(sends, recvs, Transfer::step, Transfer::peer, Transfer::pairsWith);
    for (Transfer alone : pairing.unmatched()) {
      if (uncheckedSteps.contains(alone.step())) {
        continue;
      }
      ParsedCollective c = alone.c();
      Collective needed = c.kind().counterpart();
      String type = alone.f().bufferType().bufferSimpleName();
      String count = cx.format(alone.count());
      String wanted = "@" + needed.annotation() + "(" + needed.peerAttribute() + " = \"" + alone.peer().inverse()
          + "\"" + (alone.step() != 0 ? ", step = " + alone.step() : "")
          + (alone.axis().isEmpty() ? "" : ", over = \"" + alone.axis() + "\"") + ")";
      cx.report.add(Message.UNMATCHED_PEER, alone.f().element(), c.mirror(), c.peer().source(), c.describe(), type,
          count, c.kind().peerAttribute(), c.peer().value(), wanted, type, count, alone.step(),
          nearMiss(alone, pairing), c.kind() == Collective.SEND ? "send" : "receive",
          c.kind() == Collective.SEND ? "receive" : "send", wanted, type, alone.f().shape().asWritten(),
          c.kind().annotation());
    }
  }

  /**
   * Why the nearest candidate does not pair with {@code alone}, as " (...)", or "" if there is none: one
   * of its step with the right peer but other data, one already paired, one of another step, or one of
   * its data from another peer.
   */
  private String nearMiss(Transfer alone, PeerPairing<Transfer> pairing) {
    Collective other = alone.c().kind().counterpart();
    Peer wanted = alone.peer().inverse();
    Map<Transfer, Transfer> partner = new IdentityHashMap<>();
    for (PeerPairing.Pair<Transfer> p : pairing.pairs()) {
      partner.put(p.send(), p.recv());
      partner.put(p.recv(), p.send());
    }
    List<Transfer> candidates = transfers.stream().filter(t -> t.c().kind() == other).toList();
    for (Transfer t : candidates) {
      if (t.step() == alone.step() && t.peer().equals(wanted) && t.sameData(alone) && !t.axis().equals(alone.axis())
          && !partner.containsKey(t)) {
        return " (" + t.c().describe() + " would, but runs over " + group(t) + ", not over " + group(alone)
            + ": a transfer pairs only with one over the same axis)";
      }
    }
    candidates = candidates.stream().filter(t -> t.axis().equals(alone.axis())).toList();
    for (Transfer t : candidates) {
      if (t.step() == alone.step() && t.peer().equals(wanted) && !t.sameData(alone)) {
        return " (" + t.c().describe() + " has " + t.c().kind().peerAttribute() + " = \"" + t.c().peer().value()
            + "\" but is " + t.f().bufferType().bufferSimpleName() + " with count " + cx.format(t.count()) + ")";
      }
    }
    for (Transfer t : candidates) {
      if (t.step() == alone.step() && t.peer().equals(wanted) && partner.containsKey(t)) {
        return " (" + t.c().describe() + " would, but pairs with " + partner.get(t).c().describe() + " already)";
      }
    }
    for (Transfer t : candidates) {
      if (t.step() != alone.step() && t.peer().equals(wanted) && t.sameData(alone)) {
        return " (" + t.c().describe() + " would, but is in step " + t.step() + ")";
      }
    }
    for (Transfer t : candidates) {
      if (t.step() == alone.step() && t.sameData(alone) && !partner.containsKey(t)) {
        return " (" + t.c().describe() + " has " + t.c().kind().peerAttribute() + " = \"" + t.c().peer().value()
            + "\", which pairs with " + alone.c().kind().peerAttribute() + " = \"" + t.peer().inverse() + "\")";
      }
    }
    return "";
  }

  /** {@code axis "tp"} or {@code the whole communicator}, for messages. */
  private static String group(Transfer t) {
    return t.axis().isEmpty() ? "the whole communicator" : "axis \"" + t.axis() + "\"";
  }
}
