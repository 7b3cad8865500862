package dev.commplan.processor.validation;

import dev.commplan.model.Peer;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import dev.commplan.processor.shape.Monomial;
import java.util.Optional;

/** The {@code @Shape} a fix suggests for a buffer that lacks one, derived from the other side where possible. */
final class ShapeSuggestions {
  private final PlanContext cx;

  ShapeSuggestions(PlanContext cx) {
    this.cx = cx;
  }

  /** A @Shape for the send field derived from its receive buffer where possible. */
  String sendShape(ParsedCollective c) {
    ParsedField target = c.inPlace() ? null : cx.byName.find(c.into().value()).orElse(null);
    Monomial recv = target == null ? null : cx.counts.get(target.name());
    if (recv == null) {
      return "{\"ranks\", \"hidden\"}";
    }
    PlanContext.GroupSize g = group(c);
    return switch (c.kind().counts()) {
      case SAME, SAME_DIVISIBLE -> target.shape().asWritten();
      case RECV_IS_RANKS_TIMES_SEND -> cx.effective(recv).divide(g.factor())
          .map(cx::braces)
          .orElse("{\"1024\"}");
      case SEND_IS_RANKS_TIMES_RECV -> PlanContext.withSize(g.name(), target.shape());
    };
  }

  /** The group {@code c} runs over; the whole communicator where its {@code over} names no axis (reported). */
  private PlanContext.GroupSize group(ParsedCollective c) {
    return cx.groupOf(c).orElseGet(() -> new PlanContext.GroupSize(Monomial.RANKS, cx.ranksFactor(), "", cx.fixedRanks));
  }

  /**
   * A @Shape for the one buffer of a Send or Recv: the shape of the transfer it would pair with (the
   * counterpart in its step whose peer is its peer's inverse), since rule 18 needs equal counts.
   */
  String peerShape(ParsedField f, ParsedCollective c) {
    Optional<Peer> wanted = parsedPeer(c).map(Peer::inverse);
    for (ParsedField g : cx.plan.fields()) {
      for (ParsedCollective d : g.collectives()) {
        if (g != f && g.shape() != null && wanted.isPresent() && d.kind() == c.kind().counterpart()
            && d.step().value().equals(c.step().value()) && d.axis().equals(c.axis()) && parsedPeer(d).equals(wanted)) {
          return g.shape().asWritten();
        }
      }
    }
    return "{\"1024\"}";
  }

  private static Optional<Peer> parsedPeer(ParsedCollective c) {
    try {
      return Optional.of(Peer.parse(c.peer().value()));
    } catch (IllegalArgumentException e) {
      return Optional.empty(); // reported by rule 17
    }
  }

  /** A @Shape for the receive field of {@code c} derived from the send field where possible. */
  String recvShape(ParsedField send, ParsedCollective c) {
    Monomial count = cx.counts.get(send.name());
    if (count == null) {
      return "{\"ranks\", \"hidden\"}";
    }
    PlanContext.GroupSize g = group(c);
    return switch (c.kind().counts()) {
      case SAME, SAME_DIVISIBLE -> send.shape().asWritten();
      case RECV_IS_RANKS_TIMES_SEND -> PlanContext.withSize(g.name(), send.shape());
      case SEND_IS_RANKS_TIMES_RECV -> cx.effective(count).divide(g.factor())
          .map(cx::braces)
          .orElse("{\"1024\"}");
    };
  }
}
