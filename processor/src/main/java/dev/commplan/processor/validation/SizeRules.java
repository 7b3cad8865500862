package dev.commplan.processor.validation;

import dev.commplan.model.InPlace;
import dev.commplan.processor.diag.Message;
import dev.commplan.processor.shape.ShapeText;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import dev.commplan.processor.shape.Monomial;
import java.math.BigInteger;
import java.util.List;
import java.util.Optional;

/**
 * Rules 1, 2, 3, 10 and 15: the counts of a collective's two sides, compared as monomials by the
 * collective's count rule, and an in-place buffer that holds one slice per rank divisible by the ranks
 * where that is decidable at compile time.
 */
final class SizeRules {
  private final PlanContext cx;

  SizeRules(PlanContext cx) {
    this.cx = cx;
  }

  /**
   * Compares the counts of {@code f} and {@code target} where both shapes are valid, with the size of the
   * group {@code c} runs over where the rule says ranks (rule 21).
   */
  void checkSizes(ParsedField f, ParsedField target, ParsedCollective c) {
    Monomial sendCount = cx.counts.get(f.name());
    Monomial recvCount = cx.counts.get(target.name());
    Optional<PlanContext.GroupSize> group = cx.groupOf(c);
    if (!f.isBuffer() || sendCount == null || recvCount == null || group.isEmpty()) {
      return;
    }
    PlanContext.GroupSize g = group.get();
    Monomial send = cx.effective(sendCount);
    Monomial recv = cx.effective(recvCount);
    String into = target.name();
    Monomial size = g.factor();
    switch (c.kind().counts()) {
      case RECV_IS_RANKS_TIMES_SEND -> {
        Monomial required = size.times(send);
        if (!required.equals(recv)) {
          cx.report.add(Message.GATHER_SIZE, f.element(), c.mirror(), c.into().source(), c.describe(), into, into,
              g.name(), f.name(), cx.format(required), g.suffix(), into, target.shape().asWritten(), cx.format(recv),
              sizedForTheWorld(g, cx.ranksFactor().times(send), recv), into, PlanContext.withSize(g.name(), f.shape()),
              cx.alternative(f.name(), recv.divide(size)));
        }
      }
      case SEND_IS_RANKS_TIMES_RECV -> {
        Monomial required = size.times(recv);
        if (!required.equals(send)) {
          cx.report.add(Message.SCATTER_SIZE, f.element(), c.mirror(), c.into().source(), c.describe(), into,
              f.name(), g.name(), into, cx.format(required), g.suffix(), f.name(), f.shape().asWritten(),
              cx.format(send), sizedForTheWorld(g, cx.ranksFactor().times(recv), send), f.name(),
              PlanContext.withSize(g.name(), target.shape()), cx.alternative(into, send.divide(size)));
        }
      }
      case SAME -> {
        if (!send.equals(recv)) {
          cx.report.add(Message.COUNT_MISMATCH, f.element(), c.mirror(), c.into().source(), c.describe(),
              c.kind().intoVerb(), into, into, f.name(), cx.format(send), f.shape().asWritten(), into,
              target.shape().asWritten(), cx.format(recv), into, f.shape().asWritten());
        }
      }
      case SAME_DIVISIBLE -> {
        if (!send.equals(recv)) {
          cx.report.add(Message.ALL_TO_ALL_SIZE, f.element(), c.mirror(), c.into().source(), c.describe(), into,
              into, f.name(), cx.format(send), f.shape().asWritten(), into, target.shape().asWritten(),
              cx.format(recv), into, f.shape().asWritten());
        } else {
          provablyNotDivisible(send, g.fixed()).ifPresent(perRank -> cx.report.add(
              Message.ALL_TO_ALL_NOT_DIVISIBLE, f.element(), c.mirror(), c.into().source(), c.describe(), into,
              f.name(), g.fixed(), f.name(), cx.format(send), f.shape().asWritten(), f.name(), into,
              ShapeText.braces(List.of(Monomial.RANKS, perRank.toString())), perRank));
        }
      }
    }
  }

  /**
   * Over an axis, where the count given is what the whole communicator would need: says that ranks is
   * the whole communicator's size, not the axis's. Otherwise "".
   */
  private String sizedForTheWorld(PlanContext.GroupSize g, Monomial forTheWorld, Monomial given) {
    if (g.axis().isEmpty() || !forTheWorld.equals(given)) {
      return "";
    }
    return ", sized by ranks, the whole communicator's size, not by " + g.name() + ", the size of axis \""
        + g.axis() + "\" that this collective runs over";
  }

  /**
   * Rule 10: an in-place buffer holding one slice per rank divides by the ranks, where decidable (fixed
   * ranks; over an axis, whose size the mesh gives, the plan checks it when built).
   */
  void checkInPlaceDivisible(ParsedField f, ParsedCollective c) {
    if (!c.kind().inPlace().sliced()) {
      return;
    }
    Monomial count = cx.counts.get(f.name());
    Optional<PlanContext.GroupSize> group = cx.groupOf(c);
    if (count == null || !f.isBuffer() || group.isEmpty()) {
      return;
    }
    int fixed = group.get().fixed();
    // without fixed ranks (or with dims in the count) the plan checks it when built
    Monomial eff = cx.effective(count);
    provablyNotDivisible(eff, fixed).ifPresent(perRank -> cx.report.add(Message.NOT_DIVISIBLE, f.element(),
        c.mirror(), null, c.describe(), f.name(),
        c.kind().inPlace() == InPlace.SEND_IS_RANK_SLICE_OF_RECV ? "holds the whole gathered result"
            : "holds the whole input",
        f.name(), fixed, f.name(), cx.format(eff), f.shape().asWritten(), f.name(),
        ShapeText.braces(List.of(Monomial.RANKS, perRank.toString())), perRank));
  }

  /**
   * Where a count is provably not divisible by {@code ranks} (known, and a constant count), the elements
   * per rank a divisible one would have (rounded up); otherwise empty, and the plan checks it when built.
   */
  private static Optional<BigInteger> provablyNotDivisible(Monomial count, int ranks) {
    if (ranks == 0 || !count.isConstant()) {
      return Optional.empty();
    }
    BigInteger n = BigInteger.valueOf(ranks);
    if (count.constant().mod(n).signum() == 0) {
      return Optional.empty();
    }
    return Optional.of(count.constant().add(n).subtract(BigInteger.ONE).divide(n));
  }
}
