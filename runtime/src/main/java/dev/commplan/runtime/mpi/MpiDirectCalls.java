package dev.commplan.runtime.mpi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import java.util.Arrays;

/**
 * A communicator's calls outside a plan: one-call tables from a pool (refilled, so a direct call allocates
 * nothing once the pool holds as many tables as a group has calls), each back in the pool when its call
 * completes; and what messages call them ({@code direct call}, {@code agreement check}, or what the backend
 * itself is doing with them, such as a split's exchange of colors). The agreement check's calls run over the
 * communicator's check communicator, the others over its own ({@link MpiCommPair}).
 */
final class MpiDirectCalls {
  private static final String CHECK = "agreement check";
  /** What messages call a user's direct call. */
  static final String DIRECT = "direct call";

  private final MpiCommunicator comm;
  private MpiCallTable[] free = new MpiCallTable[4]; // free[k], k < count, are not in flight
  private int count;
  private String label; // what the backend's own calls are for, or null
  private String checkLabel = CHECK; // what the agreement check's calls are: CHECK, or the comparison at a close

  MpiDirectCalls(MpiCommunicator comm) {
    this.comm = comm;
  }

  /** Starts one call on stream {@code on}; a send or receive passes its peer as {@code root}. */
  void start(Collective collective, Buffer send, Buffer recv, ReduceOp op, int root, long n, boolean agreementCheck,
      MpiStream on) {
    MpiCallTable table = count > 0 ? free[--count] : MpiCallTable.direct(comm);
    try {
      table.setDirect(collective, send, recv, n, op, root,
          agreementCheck ? checkLabel : label != null ? label : DIRECT, agreementCheck);
      comm.run(table, 0, on);
    } finally {
      if (!table.inFlight(0)) {
        release(table); // not started: back to the pool
      }
    }
  }

  /** A direct-call table whose call completed (or never started) goes back to the pool. */
  void release(MpiCallTable table) {
    if (count == free.length) {
      free = Arrays.copyOf(free, count * 2);
    }
    free[count++] = table;
  }

  /**
   * Runs {@code compare}, the comparison of the last calls that closing the communicator makes, whose calls
   * messages name as {@value MpiFamily#CHECK_AT_CLOSE} and the communicator: a rank waiting there has left its
   * calls on this communicator, and other ranks that time out name it as closing it ({@link MpiFamily}).
   */
  void checkAtClose(Runnable compare) {
    checkLabel = MpiFamily.CHECK_AT_CLOSE + comm.groupLabel();
    try {
      compare.run();
    } finally {
      checkLabel = CHECK;
    }
  }

  /** Whether the communicator is in the comparison its close makes ({@link #checkAtClose}). */
  boolean checkingAtClose() {
    return checkLabel != CHECK;
  }

  /**
   * Runs {@code calls}, whose direct calls messages (timeouts, notices to other ranks) name as {@code what}
   * instead of "direct call": the backend's own calls, made through the user's API.
   */
  void labelled(String what, Runnable calls) {
    String before = label;
    label = what;
    try {
      calls.run();
    } finally {
      label = before;
    }
  }
}
