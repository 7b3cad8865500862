package dev.commplan.processor.validation;

import dev.commplan.model.InPlace;
import dev.commplan.processor.diag.Message;
import dev.commplan.processor.model.ShapeText;
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

  /** Compares the counts of {@code f} and {@code target} where both shapes are valid. */
  void checkSizes(ParsedField f, ParsedField target, ParsedCollective c) {
    Monomial sendCount = cx.counts.get(f.name());
    Monomial recvCount = cx.counts.get(target.name());
    if (!f.isBuffer() || sendCount == null || recvCount == null) {
      return;
    }
    Monomial send = cx.effective(sendCount);
    Monomial recv = cx.effective(recvCount);
    String into = target.name();
    String suffix = cx.fixedRanks > 0 ? " with @CommPlan(ranks = " + cx.fixedRanks + ")" : "";
    Monomial ranks = cx.ranksFactor();
    switch (c.kind().counts()) {
      case RECV_IS_RANKS_TIMES_SEND -> {
        Monomial required = ranks.times(send);
        if (!required.equals(recv)) {
          cx.report.add(Message.GATHER_SIZE, f.element(), c.mirror(), c.into().source(), c.describe(), into, into,
              f.name(), cx.format(required), suffix, into, target.shape().asWritten(), cx.format(recv), into,
              PlanContext.withRanks(f.shape()), cx.alternative(f.name(), recv.divide(ranks)));
        }
      }
      case SEND_IS_RANKS_TIMES_RECV -> {
        Monomial required = ranks.times(recv);
        if (!required.equals(send)) {
          cx.report.add(Message.SCATTER_SIZE, f.element(), c.mirror(), c.into().source(), c.describe(), into,
              f.name(), into, cx.format(required), suffix, f.name(), f.shape().asWritten(), cx.format(send), f.name(),
              PlanContext.withRanks(target.shape()), cx.alternative(into, send.divide(ranks)));
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
          provablyNotDivisible(send).ifPresent(perRank -> cx.report.add(Message.ALL_TO_ALL_NOT_DIVISIBLE,
              f.element(), c.mirror(), c.into().source(), c.describe(), into, f.name(), cx.fixedRanks, f.name(),
              cx.format(send), f.shape().asWritten(), f.name(), into,
              ShapeText.braces(List.of(Monomial.RANKS, perRank.toString())), perRank));
        }
      }
    }
  }

  /** Rule 10: an in-place buffer holding one slice per rank divides by the ranks, where decidable. */
  void checkInPlaceDivisible(ParsedField f, ParsedCollective c) {
    if (!c.kind().inPlace().sliced()) {
      return;
    }
    Monomial count = cx.counts.get(f.name());
    if (count == null || !f.isBuffer()) {
      return;
    }
    // without fixed ranks (or with dims in the count) the plan checks it when built
    Monomial eff = cx.effective(count);
    provablyNotDivisible(eff).ifPresent(perRank -> cx.report.add(Message.NOT_DIVISIBLE, f.element(), c.mirror(),
        null, c.describe(), f.name(),
        c.kind().inPlace() == InPlace.SEND_IS_RANK_SLICE_OF_RECV ? "holds the whole gathered result"
            : "holds the whole input",
        f.name(), cx.fixedRanks, f.name(), cx.format(eff), f.shape().asWritten(), f.name(),
        ShapeText.braces(List.of(Monomial.RANKS, perRank.toString())), perRank));
  }

  /**
   * Where a count is provably not divisible by the ranks (fixed ranks and a constant count), the
   * elements per rank a divisible one would have (rounded up); otherwise empty, and the plan checks it
   * when built.
   */
  private Optional<BigInteger> provablyNotDivisible(Monomial count) {
    if (cx.fixedRanks == 0 || !count.isConstant()) {
      return Optional.empty();
    }
    BigInteger n = BigInteger.valueOf(cx.fixedRanks);
    if (count.constant().mod(n).signum() == 0) {
      return Optional.empty();
    }
    return Optional.of(count.constant().add(n).subtract(BigInteger.ONE).divide(n));
  }
}
