package dev.commplan.runtime.spi;

import dev.commplan.runtime.spi.RankSupervisor.RankControl;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Whether a {@link RankSupervisor}'s cluster may run a task, and how its current or last run was aborted,
 * under one lock with named transitions:
 *
 * <ul>
 *   <li>{@link #startRun} (idle to running; refused when closed, broken or running) and {@link #endRun};
 *   <li>{@link #abort}: the first abort of a run records its cause, the rank that failed and where the ranks
 *       still running were, until the next run starts;
 *   <li>{@link #refuseRuns}: the cluster is broken (its ranks' state is lost) and refuses every later run;
 *   <li>{@link #close}: for good.
 * </ul>
 *
 * <p>It also holds the backend's {@link RankControl}, set once before the first run.
 */
final class ClusterState {
  /** What the first abort of a run found: the backend's control (null: not connected) and whether a run was on. */
  record FirstAbort(RankControl control, boolean duringRun) {}

  private final Object lock = new Object();
  private RankControl control; // set once, before the first run
  private boolean running;
  private Throwable abortCause; // the first failure of the current or a broken run
  private int abortingRank = -1;
  private RankWhereabouts whereabouts = RankWhereabouts.NONE; // the running ranks' stacks at the abort
  private String refusal; // why the cluster refuses runs, or null
  private boolean closed;

  /** Connects the backend; once. */
  void control(RankControl control) {
    synchronized (lock) {
      if (this.control != null) {
        throw new IllegalStateException("the rank control is set already");
      }
      this.control = Objects.requireNonNull(control, "control");
    }
  }

  /**
   * Starts a run, forgetting the last run's abort.
   *
   * @param name the backend's name, for messages
   * @return the backend's control
   * @throws IllegalStateException if the cluster is closed, refuses runs, or is running a task
   * @throws NullPointerException if the backend never connected its control
   */
  RankControl startRun(String name) {
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException("this " + name + " cluster is closed");
      }
      if (refusal != null) {
        throw new IllegalStateException("this " + name + " cluster was aborted when " + refusal
            + "; its ranks' state is lost, make a new cluster", abortCause);
      }
      if (running) {
        throw new IllegalStateException("this " + name + " cluster is already running a task; run one at a time");
      }
      RankControl c = Objects.requireNonNull(control, "no rank control: the backend did not call control(...)");
      running = true;
      abortCause = null;
      abortingRank = -1;
      whereabouts = RankWhereabouts.NONE;
      return c;
    }
  }

  /** Ends the run: another may start (its abort stays readable until then). */
  void endRun() {
    synchronized (lock) {
      running = false;
    }
  }

  /**
   * Records the abort of the current run (or, between runs, of the cluster) by rank {@code rank}'s failure
   * {@code cause} (-1: not a rank), if it is the first since the run started.
   *
   * @param whereabouts reads where the ranks still running are; asked only for the first abort during a run,
   *     before anything wakes them
   * @return what the first abort found, or null if this is not the first
   */
  FirstAbort abort(int rank, Throwable cause, Supplier<RankWhereabouts> whereabouts) {
    synchronized (lock) {
      if (abortCause != null) {
        return null;
      }
      this.whereabouts = running ? whereabouts.get() : RankWhereabouts.NONE;
      abortCause = cause;
      abortingRank = rank;
      return new FirstAbort(control, running);
    }
  }

  /** {@return whether the current or last run has been aborted (until the next run starts)} */
  boolean isAborted() {
    synchronized (lock) {
      return abortCause != null;
    }
  }

  /** {@return the first failure of the current or last run, or null} */
  Throwable abortCause() {
    synchronized (lock) {
      return abortCause;
    }
  }

  /** {@return the rank whose failure aborted the current or last run (-1: none, or not a rank)} */
  int abortingRank() {
    synchronized (lock) {
      return abortingRank;
    }
  }

  /** {@return where the ranks still running were at the current or last run's abort} */
  RankWhereabouts whereabouts() {
    synchronized (lock) {
      return whereabouts;
    }
  }

  /** Makes the cluster refuse every later run, for {@code why}, unless it refuses them already. */
  void refuseRuns(String why) {
    synchronized (lock) {
      if (refusal == null) {
        refusal = Objects.requireNonNull(why, "why");
      }
    }
  }

  /** {@return whether the cluster refuses runs} */
  boolean isBroken() {
    synchronized (lock) {
      return refusal != null;
    }
  }

  /** Closes the cluster, and returns whether this call closed it (false: it was closed already). */
  boolean close() {
    synchronized (lock) {
      if (closed) {
        return false;
      }
      closed = true;
      return true;
    }
  }

  /** {@return whether the cluster is closed} */
  boolean isClosed() {
    synchronized (lock) {
      return closed;
    }
  }
}
