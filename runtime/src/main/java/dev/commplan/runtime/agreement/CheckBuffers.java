package dev.commplan.runtime.agreement;

import dev.commplan.runtime.Stream;
import java.util.ArrayDeque;

/**
 * The agreement check's memory: a pool of checks, each with its own buffer on the communicator. A check
 * is taken when it is enqueued and comes back once the synchronize that covers it has compared it, so no
 * host write can touch memory that a check still in flight reads or writes. The pool grows while checks
 * wait for a synchronize, up to {@value #MAX_BYTES} bytes of window checks (at least {@value #MIN_KEPT},
 * at most {@value #MAX_KEPT}) and {@value #MAX_KEPT} message checks; past that, taking one synchronizes
 * the stream of the oldest (outside a group: inside one nothing has been issued yet, so the pool grows).
 * At the longest interval that is thousands of calls enqueued without a synchronize.
 */
final class CheckBuffers {
  static final int MIN_KEPT = 4;
  static final int MAX_KEPT = 64;
  static final long MAX_BYTES = 16L << 20;

  private final Agreement.Exchange exchange;
  private final int rank;
  private final int ranks;
  private final ArrayDeque<WindowCheck> freeWindows = new ArrayDeque<>(); // guarded by this
  private final ArrayDeque<PairCheck> freePairs = new ArrayDeque<>(); // guarded by this
  private final ArrayDeque<WindowCheck> pendingWindows = new ArrayDeque<>(); // guarded by this
  private final ArrayDeque<PairCheck> pendingPairs = new ArrayDeque<>(); // guarded by this
  private int windowsMade; // guarded by this
  private int pairsMade; // guarded by this

  /** How many window checks may wait for a synchronize before taking another waits for one. */
  private final int windowsKept;

  CheckBuffers(Agreement.Exchange exchange, int rank, int ranks) {
    this.exchange = exchange;
    this.rank = rank;
    this.ranks = ranks;
    long bytes = WindowCheck.longs(ranks) * Long.BYTES;
    this.windowsKept = (int) Math.max(MIN_KEPT, Math.min(MAX_KEPT, MAX_BYTES / bytes));
  }

  /** A window check to enqueue on {@code stream}; pending until {@link #release}. */
  WindowCheck window(Stream stream) {
    while (true) {
      Stream wait;
      synchronized (this) {
        while (windowsMade < MIN_KEPT) { // made together at the first check, so the next few allocate nothing
          freeWindows.add(new WindowCheck(exchange, rank, ranks));
          windowsMade++;
        }
        WindowCheck check = freeWindows.poll();
        if (check == null && (windowsMade < windowsKept || exchange.inGroup() || pendingWindows.isEmpty())) {
          check = new WindowCheck(exchange, rank, ranks);
          windowsMade++;
        }
        if (check != null) {
          check.stream = stream;
          pendingWindows.add(check);
          return check;
        }
        wait = pendingWindows.peek().stream;
      }
      wait.synchronize(); // compares the checks it covers, which come back to the pool
    }
  }

  /** A message check to enqueue on {@code stream}; pending until {@link #release}. */
  PairCheck pair(Stream stream) {
    while (true) {
      Stream wait;
      synchronized (this) {
        PairCheck check = freePairs.poll();
        if (check == null && (pairsMade < MAX_KEPT || exchange.inGroup() || pendingPairs.isEmpty())) {
          check = new PairCheck(exchange);
          pairsMade++;
        }
        if (check != null) {
          check.stream = stream;
          pendingPairs.add(check);
          return check;
        }
        wait = pendingPairs.peek().stream;
      }
      wait.synchronize();
    }
  }

  /** A check was compared (or failed to be): its memory may be written again. */
  synchronized void release(Object check) {
    if (check instanceof WindowCheck w && pendingWindows.remove(w)) {
      w.stream = null;
      freeWindows.add(w);
    } else if (check instanceof PairCheck p && pendingPairs.remove(p)) {
      p.stream = null;
      freePairs.add(p);
    }
  }
}
