package dev.commplan.runtime.agreement;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.guard.StreamProgress;
import java.util.ArrayDeque;
import java.util.function.Supplier;

/**
 * The agreement check's memory: a pool of checks of each kind, each check with its own buffer on the
 * communicator. A check is taken when it is enqueued and comes back once the synchronize that covers it
 * has compared it, so no host write can touch memory that a check still in flight reads or writes. A pool
 * grows while checks wait for a synchronize, up to {@value #MAX_BYTES} bytes of window checks (at least
 * {@value #MIN_KEPT}, at most {@value #MAX_KEPT}) and {@value #MAX_KEPT} message checks; past that,
 * taking one synchronizes the stream of the oldest (outside a group: inside one nothing has been issued
 * yet, so the pool grows). At the longest interval that is thousands of calls enqueued without a
 * synchronize.
 */
final class CheckBuffers {
  static final int MIN_KEPT = 4;
  static final int MAX_KEPT = 64;
  static final long MAX_BYTES = 16L << 20;

  /** What a pool holds: a check, and the stream it was enqueued on while it is pending. */
  abstract static class Pooled implements StreamProgress.AfterSynchronize {
    Stream stream;
  }

  private final Pool<WindowCheck> windows;
  private final Pool<PairCheck> pairs;

  CheckBuffers(Agreement.Exchange exchange, int rank, int ranks) {
    long bytes = WindowCheck.longs(ranks) * Long.BYTES;
    int windowsKept = (int) Math.max(MIN_KEPT, Math.min(MAX_KEPT, MAX_BYTES / bytes));
    // window checks are made together at the first check, so that the next few allocate nothing
    windows = new Pool<>(exchange, () -> new WindowCheck(exchange, rank, ranks), MIN_KEPT, windowsKept);
    pairs = new Pool<>(exchange, () -> new PairCheck(exchange), 0, MAX_KEPT);
  }

  /** A window check to enqueue on {@code stream}; pending until {@link #release}. */
  WindowCheck window(Stream stream) {
    return windows.take(stream);
  }

  /** A message check to enqueue on {@code stream}; pending until {@link #release}. */
  PairCheck pair(Stream stream) {
    return pairs.take(stream);
  }

  /** A check was compared (or failed to be): its memory may be written again. */
  void release(Pooled check) {
    if (check instanceof WindowCheck w) {
      windows.release(w);
    } else if (check instanceof PairCheck p) {
      pairs.release(p);
    }
  }

  /** The checks of one kind: free ones, and pending ones in the order they were taken. */
  private static final class Pool<C extends Pooled> {
    private final Agreement.Exchange exchange;
    private final Supplier<C> make;
    private final int premade;
    private final int kept;
    private final ArrayDeque<C> free = new ArrayDeque<>(); // guarded by this
    private final ArrayDeque<C> pending = new ArrayDeque<>(); // guarded by this
    private int made; // guarded by this

    Pool(Agreement.Exchange exchange, Supplier<C> make, int premade, int kept) {
      this.exchange = exchange;
      this.make = make;
      this.premade = premade;
      this.kept = kept;
    }

    C take(Stream stream) {
      while (true) {
        Stream wait;
        synchronized (this) {
          for (; made < premade; made++) {
            free.add(make.get());
          }
          C check = free.poll();
          if (check == null && (made < kept || exchange.inGroup() || pending.isEmpty())) {
            check = make.get();
            made++;
          }
          if (check != null) {
            check.stream = stream;
            pending.add(check);
            return check;
          }
          wait = pending.peek().stream;
        }
        wait.synchronize(); // compares the checks it covers, which come back to the pool
      }
    }

    synchronized void release(C check) {
      if (pending.remove(check)) {
        check.stream = null;
        free.add(check);
      }
    }
  }
}
