package dev.commplan.runtime.mpi;

import dev.commplan.runtime.CommOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a rank that timed out says ({@link MpiFamily#timedOut}), from the notices the other ranks sent (their
 * answers to its own): what it waited for, what each rank that answered was doing, and the ranks of its group
 * that are not in its call: those that did not answer (stalled, gone), and those closing a communicator (at
 * the world's close barrier, or in the comparison of the last calls that a close makes), which have left
 * their calls there.
 */
final class MpiTimeoutReport {
  /** How a rank's answer shows that it waits in an agreement check made between its calls. */
  private static final String IN_CHECK = "agreement check: ";

  private final String text;
  private final List<Integer> missing = new ArrayList<>();

  /**
   * {@code where}'s report: this rank ({@code worldRank} of the world) waited {@code waited} (past {@code
   * timeout}) for {@code pending}, one call a line; {@code notices}, every notice it received, oldest first;
   * {@code graceNanos}, how long it waited for answers.
   */
  MpiTimeoutReport(MpiCommunicator where, int worldRank, String waited, Duration timeout, String pending,
      List<MpiNotice> notices, long graceNanos) {
    Set<Integer> answered = new HashSet<>(); // world ranks that were in calls (waiting, failed)
    Map<Integer, String> left = new HashMap<>(); // world ranks closing a communicator: which
    StringBuilder answers = new StringBuilder();
    for (MpiNotice n : notices) {
      if (n.closing() ? left.putIfAbsent(n.worldRank(), n.group()) != null : !answered.add(n.worldRank())) {
        continue;
      }
      answers.append("\n  ").append(n.who()).append(' ').append(n.closing() ? "is closing " + n.group()
          : n.kind() == MpiNotice.TIMED_OUT ? "timed out too" : "answered").append(": ")
          .append(n.text().replace("\n", " "));
    }
    StringBuilder missingText = new StringBuilder();
    for (int r = 0; r < where.size(); r++) {
      int w = where.worldRank(r);
      if (r != where.rank() && (!answered.contains(w) || left.containsKey(w))) {
        missing.add(r);
        missingText.append(missingText.isEmpty() ? "" : ", ").append("rank ").append(r)
            .append(where.groupLabel().equals("world") ? "" : " (world rank " + w + ")")
            .append(left.containsKey(w) ? ", closing " + left.get(w)
                : ", no answer within " + graceNanos / 1_000_000 + " ms");
      }
    }
    // ranks outside this group that closed a communicator: where every rank of the group is in another call, the
    // one that started the wait is most likely among them
    StringBuilder leftOutside = new StringBuilder();
    Set<Integer> inGroup = new HashSet<>();
    for (int r = 0; r < where.size(); r++) {
      inGroup.add(where.worldRank(r));
    }
    left.entrySet().stream().filter(e -> !inGroup.contains(e.getKey())).sorted(Map.Entry.comparingByKey())
        .forEach(e -> leftOutside.append(leftOutside.isEmpty() ? "" : ", ").append("world rank ").append(e.getKey())
            .append(", closing ").append(e.getValue()));
    String group = where.groupLabel();
    text = where.rankText() + " (world rank " + worldRank + ") waited " + waited + " (the timeout is " + timeout
        + ") for calls that did not complete:" + pending
        + (answers.isEmpty() ? "" : "\nOther ranks, told so:" + answers)
        + (missing.isEmpty() ? "\nEvery rank of " + group + " answered: none stalled, but they did not issue the same"
            + " calls in the same order" + (where.directCalls().checkingAtClose() ? " (this rank is closing " + group
                + " and compares its last calls there; a rank still in another call has not closed it yet, and may"
                + " itself wait for a rank that left its calls" + (leftOutside.isEmpty() ? "" : ": " + leftOutside)
                + ")"
            : answers.indexOf(IN_CHECK) >= 0 ? " (a rank waiting in the agreement check made other calls before it"
                + " than the ranks waiting elsewhere)" : "")
            : "\nNot in this call: " + missingText + " (of " + group + "): stalled, gone, or past it (a rank that"
                + " returns or throws early, skips a call, or issues its calls in another order, leaves the others"
                + " waiting" + (left.isEmpty() ? ")" : "; a rank closing a communicator has left its calls there: a"
                + " close compares the last calls, and one that throws or returns inside try-with-resources closes its"
                + " mesh and its world on the way out)"))
        + ". Every communicator of this family now fails on every rank. To wait longer, pass a timeout to"
        + " MpiBackend.world(Duration) or set -D" + CommOptions.TIMEOUT_PROPERTY + ".";
  }

  /** {@return the exception's message} */
  String text() {
    return text;
  }

  /** {@return the ranks of the group (its own ranks) that are not in the call} */
  List<Integer> missing() {
    return missing;
  }
}
