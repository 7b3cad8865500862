package dev.commplan.spicheck;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A cluster's groups, the world's and every split's ({@link Meeting} each), which fail together: the first
 * failure anywhere (a rank's task, a timeout in any group) breaks every group's meeting, so that every rank
 * waiting in a collective, a receive or a split of any group wakes. A broken family stays broken.
 */
final class Family {
  private final List<Meeting> meetings = new CopyOnWriteArrayList<>();
  private volatile Throwable abortCause;
  private volatile int abortingRank = -1;

  /** Adds a group's meeting: the world's when the cluster is made, a split's when every member has come. */
  void add(Meeting meeting) {
    meetings.add(meeting);
    if (abortCause != null) {
      meeting.wake(); // made while the family was failing: it must not wait either
    }
  }

  /** Breaks every group because world rank {@code failedRank} (-1: none in particular) failed. */
  void abort(int failedRank, Throwable cause) {
    synchronized (this) {
      if (abortCause != null) {
        return;
      }
      abortingRank = failedRank;
      abortCause = cause;
    }
    for (Meeting meeting : meetings) {
      meeting.wake();
    }
  }

  boolean isBroken() {
    return abortCause != null;
  }

  /** What broke the family, or null. */
  Throwable abortCause() {
    return abortCause;
  }

  /** The world rank whose failure broke the family, or -1 (none in particular, or not broken). */
  int abortingRank() {
    return abortingRank;
  }
}
