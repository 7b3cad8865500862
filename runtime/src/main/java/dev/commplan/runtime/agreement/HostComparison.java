package dev.commplan.runtime.agreement;

import dev.commplan.runtime.DisagreementException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The agreement check's comparisons on the host, for the ranks of a group that all live in this process (an
 * in-process cluster: the local backend), whose checks can be read directly: no exchange, and the same
 * wording as the checks that exchange ({@link Disagreements}).
 *
 * <ul>
 *   <li>{@link #unchecked}: once every rank's task has returned, the calls since each rank's last comparison and
 *       the messages since each pair's last, which no check compared; a program whose last calls disagree would
 *       otherwise end without a word.
 *   <li>{@link #collective}: where the ranks met for a collective (the local backend's rendezvous), whether their
 *       calls there agree. Where they do not, the ranks' records are compared, read from each rank's {@link
 *       CallWindow} as its thread published them: the first call at which they differ is named as the window
 *       check names it, so that the same mistake reads the same here as on a backend that compares windows. Only
 *       where the records cannot name it (the check is off, or the difference is in no record: the check's own
 *       calls, a plan over a mesh axis, whose units are its world's) are the calls met there named instead.
 *   <li>{@link #transfer}: a send and the receive it met (the local backend's mailboxes).
 * </ul>
 */
final class HostComparison {
  /**
   * How long a meeting's comparison waits for the ranks' records: a rank's thread records a unit right after
   * its work is enqueued, so the work may meet the other ranks' before its record is published.
   */
  static final long RECORDS_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private HostComparison() {}

  /**
   * The calls and messages no check compared, across the ranks of one group, each rank's check at index r;
   * call only while no rank uses its communicator.
   *
   * @return the first difference, as rank 0 sees it (calls) or as the sender does (messages); null where they agree
   */
  static DisagreementException unchecked(Agreement[] ranks) {
    Finding calls = uncheckedCalls(ranks);
    if (calls != null) {
      return calls.of(0);
    }
    for (Agreement sender : ranks) {
      for (Agreement receiver : ranks) {
        Finding messages = sender.pairs().againstReceiver(receiver.pairs());
        if (messages != null) {
          return messages.of(sender.rank());
        }
      }
    }
    return null;
  }

  private static Finding uncheckedCalls(Agreement[] ranks) {
    int n = ranks.length;
    long[][] records = new long[n][];
    int[] lengths = new int[n];
    PlanNames[] plans = new PlanNames[n];
    boolean sameStart = true;
    for (int r = 0; r < n; r++) {
      CallWindow window = ranks[r].window();
      lengths[r] = window.length();
      records[r] = new long[lengths[r] * CallRecord.LONGS];
      window.copyWindow(records[r], 0);
      plans[r] = ranks[r].plans();
      sameStart &= window.units() - window.length() == ranks[0].window().units() - ranks[0].window().length();
    }
    CallWindow first = ranks[0].window();
    if (sameStart) {
      return Disagreements.firstDifferingCall(ranks[0].group(), first.units() - first.length() + 1, records, lengths,
          plans);
    }
    // cannot happen when every rank returned normally: a check would have been left unpaired
    String[] did = new String[n];
    for (int r = 0; r < n; r++) {
      did[r] = "made " + ranks[r].window().units() + " collective calls and plan executes (its last: "
          + (lengths[r] == 0 ? "none since its last check" : CallRecord.text(records[r], (lengths[r] - 1)
              * CallRecord.LONGS, plans[r])) + ")";
    }
    return Disagreements.numberOfCalls(ranks[0].group(), did, new Finding.Sides() {
      @Override
      public boolean differ(int a, int b) {
        return ranks[a].window().units() != ranks[b].window().units();
      }

      @Override
      public List<String> fields(int a, int b) {
        return List.of(Disagreements.NUMBER_OF_CALLS);
      }
    });
  }

  /**
   * Whether the ranks' calls where they met for a collective agree; where they do not, every rank's exception,
   * naming the first call at which their records differ (or, without records that differ, the calls met here).
   *
   * @param group the group's label: {@code world}
   * @param checks rank r's agreement check of the group's communicator, or null where it has none
   * @param calls rank r's call here
   * @param sequence the collective's number on the group, from 0
   * @return rank r's exception at index r, or null where the calls agree
   */
  static List<DisagreementException> collective(String group, Agreement[] checks, MetCall[] calls, long sequence) {
    Finding byCalls = Disagreements.differingCollective(group, sequence, calls);
    if (byCalls == null) {
      return null;
    }
    Finding byRecords = differingRecords(group, checks);
    for (Agreement check : checks) {
      if (check != null) {
        check.found(); // the ranks are told here: nothing compares their records again
      }
    }
    return (byRecords != null ? byRecords : byCalls).byRank();
  }

  /**
   * The first call at which the ranks' published records differ, waiting up to {@link #RECORDS_WAIT_NANOS} for
   * records not yet published; null where every rank has no records to compare, or they agree.
   */
  private static Finding differingRecords(String group, Agreement[] checks) {
    int ranks = checks.length;
    for (Agreement check : checks) {
      if (check == null || !check.recordsCalls() || check.hasFound()) {
        return null; // nothing recorded (every rank of a group has the same options), or stale since a finding
      }
    }
    PlanNames[] plans = new PlanNames[ranks];
    for (int r = 0; r < ranks; r++) {
      plans[r] = checks[r].plans();
    }
    long deadline = System.nanoTime() + RECORDS_WAIT_NANOS;
    while (true) {
      long low = 1;
      long high = Long.MAX_VALUE;
      for (Agreement check : checks) {
        long published = check.window().published();
        low = Math.max(low, published - CallWindow.KEPT + 2);
        high = Math.min(high, published);
      }
      if (high >= low) {
        int count = (int) (high - low + 1);
        long[][] records = new long[ranks][count * CallRecord.LONGS];
        int[] lengths = new int[ranks];
        boolean kept = true;
        for (int r = 0; r < ranks; r++) {
          kept &= checks[r].window().copy(low, count, records[r], 0);
          lengths[r] = count;
        }
        Finding found = kept ? Disagreements.firstDifferingCall(group, low, records, lengths, plans) : null;
        if (found != null) {
          return found;
        }
      }
      if (System.nanoTime() - deadline > 0) {
        return null;
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }

  /**
   * A send and the receive it met, where the ranks of a group live in this process: null where they agree, else
   * each side's exception (index: the rank; null for the ranks outside the pair).
   *
   * @param senderCheck the sender's agreement check, or null
   * @param receiverCheck the receiver's, or null
   */
  static List<DisagreementException> transfer(String group, int ranks, int sender, MetCall send, int receiver,
      MetCall receive, Agreement senderCheck, Agreement receiverCheck) {
    boolean byTheCheck = senderCheck != null && senderCheck.recordsCalls() && receiverCheck != null
        && receiverCheck.recordsCalls();
    Finding found = Disagreements.differingMessage(group, ranks, sender, send, receiver, receive, byTheCheck);
    if (found == null) {
      return null;
    }
    for (Agreement check : new Agreement[] {senderCheck, receiverCheck}) {
      if (check != null) {
        check.found(); // the ranks are told here: nothing compares their records again
      }
    }
    return found.byRank();
  }
}
