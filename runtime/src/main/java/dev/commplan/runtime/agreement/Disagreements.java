package dev.commplan.runtime.agreement;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * How a disagreement of the ranks' calls or messages is worded: once, here, whichever check or backend found it,
 * so that one mistake reads the same on every backend. Each message names the ranks by number and reads alike on
 * every rank ({@link Finding}); it says where the ranks' calls first differ and what each side did there, and
 * ends with what must agree.
 *
 * <ul>
 *   <li>Calls: {@code world: the ranks disagree about their calls: call 5 was, on rank 0, direct call: broadcast
 *       F32 root 0, count 8; on rank 1, direct call: broadcast F32 root 0, count 16 (differing: count). Every rank
 *       of world must make ...}. Call 5 is the fifth unit of the communicator's agreement check ({@link
 *       CallWindow}): a direct collective, or a plan's execute, step, launch or bucket. The window check, the
 *       host's comparison at the end of an in-process run and a local rendezvous that has the ranks' records all
 *       word it so; a rendezvous without records (the check is off) names the collective by its place on the
 *       group instead ({@code their collective 3 on world was, ...}).
 *   <li>Messages: {@code world: rank 0's sends to rank 1 and rank 1's receives from rank 0 disagree: a message was,
 *       on rank 0, send F32 to rank 1, count 4; on rank 1, recv F32 from rank 0, count 8 (differing: count). Every
 *       send must meet ...}; or, where only the counts or digests of the messages are known (the check of
 *       messages, {@link PairCheck}), how many each side made, or that an earlier one differs.
 * </ul>
 */
final class Disagreements {
  /** Where the messages send the reader, and how the check is turned off (only where the check found it). */
  private static final String DOCS = "(docs/reliability.md, \"Agreement check\"";
  private static final String OFF = "; CommOptions.withAgreementCheck(false) turns the check off";
  /** Where one side has no call at the place the other has one. */
  static final String NUMBER_OF_CALLS = "number of calls";
  static final String NUMBER_OF_MESSAGES = "number of messages";

  private Disagreements() {}

  /**
   * The first call at which the ranks' records differ, or null where they all agree.
   *
   * @param group the communicator's label: {@code world}, {@code axis tp of mesh [dp=2, tp=2]}
   * @param first the number of the records' first call (1 is a communicator's first unit)
   * @param records rank r's records from that call on, {@link CallRecord#LONGS} longs each; null for a rank whose
   *     records are not compared
   * @param lengths how many records of rank r there are
   * @param plans what names the plans in rank r's records
   */
  static Finding firstDifferingCall(String group, long first, long[][] records, int[] lengths, PlanNames[] plans) {
    int ranks = records.length;
    int reference = 0;
    while (reference < ranks && records[reference] == null) {
      reference++;
    }
    int longest = 0;
    for (int r = 0; r < ranks; r++) {
      longest = Math.max(longest, records[r] == null ? 0 : lengths[r]);
    }
    int at = -1;
    for (int i = 0; i < longest && at < 0; i++) {
      for (int r = reference + 1; r < ranks && at < 0; r++) {
        if (records[r] != null && !sameRecord(records, lengths, reference, r, i)) {
          at = i;
        }
      }
    }
    if (at < 0) {
      return null;
    }
    int i = at;
    Finding.Sides sides = new Finding.Sides() {
      @Override
      public boolean differ(int a, int b) {
        return !sameRecord(records, lengths, a, b, i);
      }

      @Override
      public List<String> fields(int a, int b) {
        return i < lengths[a] && i < lengths[b]
            ? CallRecord.differences(records[a], i * CallRecord.LONGS, records[b], i * CallRecord.LONGS)
            : List.of(NUMBER_OF_CALLS);
      }
    };
    List<Integer> differing = differingFrom(reference, records, sides);
    String[] did = new String[ranks];
    for (int r = 0; r < ranks; r++) {
      did[r] = records[r] == null ? null
          : i < lengths[r] ? CallRecord.text(records[r], i * CallRecord.LONGS, plans[r]) : "no call";
    }
    int other = differing.getFirst();
    return new Finding(calls(group, "call " + (first + i), reference, did[reference], other, differing, did[other],
        sides.fields(reference, other), true), did, sides);
  }

  private static boolean sameRecord(long[][] records, int[] lengths, int a, int b, int i) {
    boolean hasA = i < lengths[a];
    boolean hasB = i < lengths[b];
    return hasA == hasB && (!hasA || Arrays.equals(records[a], i * CallRecord.LONGS, (i + 1) * CallRecord.LONGS,
        records[b], i * CallRecord.LONGS, (i + 1) * CallRecord.LONGS));
  }

  private static List<Integer> differingFrom(int reference, Object[] sides, Finding.Sides compare) {
    List<Integer> out = new ArrayList<>();
    for (int r = 0; r < sides.length; r++) {
      if (r != reference && sides[r] != null && compare.differ(reference, r)) {
        out.add(r);
      }
    }
    return out;
  }

  /**
   * Where the ranks met for a collective without records to name their calls by (an in-process backend's
   * rendezvous, where the check is off): the first rank whose call differs from the lowest rank's, or null where
   * they all agree.
   *
   * @param sequence the collective's number on the group, from 0
   */
  static Finding differingCollective(String group, long sequence, MetCall[] calls) {
    Finding.Sides sides = new Finding.Sides() {
      @Override
      public boolean differ(int a, int b) {
        return !calls[a].differences(calls[b]).isEmpty();
      }

      @Override
      public List<String> fields(int a, int b) {
        return calls[a].differences(calls[b]);
      }
    };
    List<Integer> differing = differingFrom(0, calls, sides);
    if (differing.isEmpty()) {
      return null;
    }
    String[] did = new String[calls.length];
    for (int r = 0; r < calls.length; r++) {
      did[r] = calls[r].text();
    }
    int other = differing.getFirst();
    return new Finding(calls(group, "their collective " + (sequence + 1) + " on " + group, 0, did[0], other,
        differing, did[other], sides.fields(0, other), false), did, sides);
  }

  /**
   * {@code world: the ranks disagree about their calls: call 5 was, on rank 0, ...; on rank 2, ... (differing:
   * count). Every ...}
   */
  private static String calls(String group, String which, int reference, String theirs, int other,
      List<Integer> differing, String others, List<String> fields, boolean byTheCheck) {
    return group + ": the ranks disagree about their calls: " + which + " was, on rank " + reference + ", " + theirs
        + "; on " + ranks(other, differing) + ", " + others + " (differing: " + String.join(", ", fields) + ")"
        + callsFix(group, byTheCheck);
  }

  /** {@code rank 2}, or {@code rank 1 (the first of the differing ranks [1, 2])}. */
  private static String ranks(int first, List<Integer> differing) {
    return "rank " + first + (differing.size() == 1 ? "" : " (the first of the differing ranks " + differing + ")");
  }

  /**
   * The ranks' windows do not cover the same calls (a check met another check, or a call that is not one): each
   * rank as {@code describe} says it ({@code compared its calls 4 to 7 (its last: ...)}), the lowest rank against
   * the first that differs from it.
   *
   * @param did what each rank compared, or did instead of the check
   * @param differ whether two ranks' windows differ
   */
  static Finding numberOfCalls(String group, String[] did, Finding.Sides differ) {
    List<Integer> differing = differingFrom(0, did, differ);
    int other = differing.getFirst();
    String message = group + ": the ranks disagree about the number of their calls: rank 0 " + did[0] + "; "
        + ranks(other, differing) + " " + did[other] + " (differing: " + NUMBER_OF_CALLS + ")" + callsFix(group, true);
    return new Finding(message, did, differ);
  }

  /**
   * The digests of the ranks' calls {@code first} to {@code last} differ although the records read back agree:
   * memory written while the check was in flight.
   */
  static Finding digestsOnly(String group, int ranks, long first, long last) {
    String[] did = new String[ranks];
    Arrays.fill(did, "");
    return new Finding(group + ": the ranks disagree about their calls: the digests of calls " + first + " to " + last
        + " differ although the records read back agree (memory written while the check was in flight?)"
        + callsFix(group, true), did, new Finding.Sides() {
          @Override
          public boolean differ(int a, int b) {
            return false;
          }

          @Override
          public List<String> fields(int a, int b) {
            return List.of();
          }
        });
  }

  /**
   * The end of every message about calls that differ: what must agree, and where to read more.
   *
   * @param byTheCheck whether the agreement check found it (its message says how to turn it off)
   */
  static String callsFix(String group, boolean byTheCheck) {
    return ". Every rank of " + group + " must make the same collective calls and plan executes, with the same"
        + " collective, data type, count, op and root, and the same plan (#2: the second plan of that name built on "
        + group + "), in the same order " + DOCS + (byTheCheck ? OFF : "") + ")";
  }

  /**
   * Where the ranks of a rendezvous (the TCP rendezvous of one rank per process, {@code bootstrap}) call its
   * operations, whether the operation rank {@code rank} is in ({@code kind} number {@code op}) and the one rank
   * {@code other} sent ({@code theirKind} number {@code theirOp}) agree; null where they do.
   */
  static String differingOperations(int rank, String kind, int op, int other, String theirKind, int theirOp) {
    if (op == theirOp && kind.equals(theirKind)) {
      return null;
    }
    return "the ranks call different rendezvous operations: rank " + rank + " is in " + kind + " #" + op + ", rank "
        + other + " in " + theirKind + " #" + theirOp + "; every rank must call the same operations in the same order";
  }

  /**
   * What a message longer than a call's count (MPI's {@code MPI_ERR_TRUNCATE}) says about the ranks, for a backend
   * whose library found it where no check compared the calls yet (the other side's call unknown): a receive's send
   * was longer, or the ranks passed a collective different counts; and what must agree.
   *
   * @param receive whether the call was a receive (else a collective)
   */
  static String truncated(String group, boolean receive) {
    return receive
        ? "its send had more elements than this receive (differing: count). Every send must meet a receive of the same"
            + " data type and count, in the same order " + DOCS + ")"
        : "so the ranks passed it different counts (differing: count)" + callsFix(group, false);
  }

  /**
   * A send and the receive it met differ ({@code send} on rank {@code sender}, {@code receive} on rank {@code
   * receiver}), or null where they agree.
   *
   * @param byTheCheck whether the agreement check is on for both (its message says how to turn it off)
   */
  static Finding differingMessage(String group, int ranks, int sender, MetCall send, int receiver, MetCall receive,
      boolean byTheCheck) {
    List<String> fields = send.messageDifferences(receive);
    if (fields.isEmpty()) {
      return null;
    }
    return message(group, ranks, sender, send.text(), receiver, receive.text(), fields, byTheCheck);
  }

  /**
   * The last messages between two ranks differ, as the agreement check's records of them say ({@code
   * sendText}, {@code receiveText}: {@code send F32 to rank 1, count 4}).
   */
  static Finding message(String group, int ranks, int sender, String sendText, int receiver, String receiveText,
      List<String> fields, boolean byTheCheck) {
    return messages(group, ranks, sender, sendText, receiver, receiveText, "a message was, on rank " + sender + ", "
        + sendText + "; on rank " + receiver + ", " + receiveText, fields, byTheCheck);
  }

  /** The two ranks made different numbers of messages to each other: how many each, and its last. */
  static Finding numberOfMessages(String group, int ranks, int sender, long sent, String lastSent, int receiver,
      long received, String lastReceived) {
    return messages(group, ranks, sender, lastSent, receiver, lastReceived, "rank " + sender + " had sent " + sent
        + " messages to rank " + receiver + " (its last: " + lastSent + ") where rank " + receiver + " had received "
        + received + " from it (its last: " + lastReceived + ")", List.of(NUMBER_OF_MESSAGES), true);
  }

  /**
   * Where the receiver received the sender's check after its receive {@code received}, the sender sent something
   * that is not the check: a different number of messages.
   */
  static Finding notTheCheck(String group, int ranks, int sender, int receiver, long received, String lastReceived) {
    String theirs = "something that is not its agreement check (a different number of messages to rank " + receiver
        + ")";
    return messages(group, ranks, sender, theirs, receiver, lastReceived, "where rank " + receiver + " received rank "
        + sender + "'s agreement check after its receive " + received + " (" + lastReceived + "), rank " + sender
        + " sent " + theirs, List.of(NUMBER_OF_MESSAGES), true);
  }

  /** The last of {@code count} messages agree on both sides, but the digests of all of them do not. */
  static Finding earlierMessage(String group, int ranks, int sender, String lastSent, int receiver, String lastReceived,
      long count) {
    return messages(group, ranks, sender, lastSent, receiver, lastReceived, "one of the first " + count + " messages"
        + " differs, though the last agree (on rank " + sender + ", " + lastSent + "; on rank " + receiver + ", "
        + lastReceived + ")", List.of("an earlier message's data type or count"), true);
  }

  private static Finding messages(String group, int ranks, int sender, String sendText, int receiver,
      String receiveText, String what, List<String> fields, boolean byTheCheck) {
    String message = group + ": rank " + sender + "'s sends to rank " + receiver + " and rank " + receiver
        + "'s receives from rank " + sender + " disagree: " + what + " (differing: " + String.join(", ", fields)
        + "). Every send must meet a receive of the same data type and count, in the same order " + DOCS
        + (byTheCheck ? OFF : "") + ")";
    String[] did = new String[ranks];
    did[sender] = sendText;
    did[receiver] = receiveText;
    return new Finding(message, did, new Finding.Sides() {
      @Override
      public boolean differ(int a, int b) {
        return true;
      }

      @Override
      public List<String> fields(int a, int b) {
        return fields;
      }
    });
  }
}
