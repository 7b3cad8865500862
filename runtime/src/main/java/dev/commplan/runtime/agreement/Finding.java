package dev.commplan.runtime.agreement;

import dev.commplan.runtime.DisagreementException;
import java.util.ArrayList;
import java.util.List;

/**
 * A disagreement as this package words it ({@link Disagreements}): one message, the same on every rank and on
 * every backend, whichever check or backend found it (it names the ranks by their numbers, never "this
 * rank"), and what each rank that took part did at the first difference, from which each rank's {@link
 * DisagreementException} says, through its accessors, what it did, what the first rank that differs from it did,
 * the ranks that differ from it, and the fields in which it differs from that rank.
 */
final class Finding {
  /** How two ranks' sides compare: whether they differ, and in which fields. */
  interface Sides {
    /** {@return whether ranks {@code a} and {@code b} differ (anywhere in what was compared)} */
    boolean differ(int a, int b);

    /** {@return the fields in which ranks {@code a} and {@code b} differ at the first difference} */
    List<String> fields(int a, int b);
  }

  private final String message;
  /** What each rank did at the first difference; null for a rank that took no part. */
  private final String[] did;
  private final Sides sides;

  Finding(String message, String[] did, Sides sides) {
    this.message = message;
    this.did = did;
    this.sides = sides;
  }

  String message() {
    return message;
  }

  /** {@return rank {@code rank}'s exception: the message, and its own view of the difference} */
  DisagreementException of(int rank) {
    List<Integer> differing = new ArrayList<>();
    for (int r = 0; r < did.length; r++) {
      if (r != rank && did[r] != null && sides.differ(rank, r)) {
        differing.add(r);
      }
    }
    if (differing.isEmpty()) { // a rank that took no part, or one that agrees with every other: the reference's view
      return new DisagreementException(message, did[rank] == null ? "" : did[rank], "", List.of(), List.of());
    }
    int other = differing.getFirst();
    return new DisagreementException(message, did[rank], did[other], differing, sides.fields(rank, other));
  }

  /** {@return one exception per rank that took part (index: the rank), each its own view} */
  List<DisagreementException> byRank() {
    List<DisagreementException> out = new ArrayList<>(did.length);
    for (int r = 0; r < did.length; r++) {
      out.add(did[r] == null ? null : of(r));
    }
    return out;
  }
}
