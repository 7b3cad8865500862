package dev.commplan.runtime.guard;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * "One thread at a time" for one communicator, enforced where it is cheap: a plan's execute, a direct
 * collective and an open group hold the gate; another thread that arrives while it is held is refused,
 * naming both threads, instead of interleaving its NCCL calls with the first (NCCL's communicators are not
 * thread-safe, and two threads' calls mixed in one group send each other's data). One compare-and-set to
 * enter and one release store to leave; nothing allocated unless refused.
 *
 * <p>It catches calls that overlap in time, which is how concurrent use goes wrong; two threads that
 * take turns, each waiting for the other, are not refused (and are not wrong).
 */
public final class CallGate {
  /** What {@link #enter} throws; the backend's public exception type, made by the caller's factory. */
  @FunctionalInterface
  public interface Refusal {
    RuntimeException refuse(Thread holder, String holderDoing, Thread caller, String callerDoing);
  }

  private static final VarHandle HOLDER;

  static {
    try {
      HOLDER = MethodHandles.lookup().findVarHandle(CallGate.class, "holder", Thread.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Refusal refusal;
  @SuppressWarnings("unused") // through HOLDER
  private volatile Thread holder;
  private volatile String holderDoing;
  /** Nested holds by the holder (an execute inside a user's open group). */
  private int depth;

  public CallGate(Refusal refusal) {
    this.refusal = refusal;
  }

  /**
   * Takes the gate for {@code doing} (a constant string such as {@code "execute"}: no string is built on
   * the hot path), or throws the refusal when another thread holds it. Re-entrant for the holder.
   */
  public void enter(String doing) {
    Thread me = Thread.currentThread();
    while (true) {
      if (HOLDER.compareAndSet(this, (Thread) null, me)) {
        holderDoing = doing;
        depth = 1;
        return;
      }
      Thread other = holder;
      if (other == me) {
        depth++;
        return;
      }
      if (other != null) {
        throw refusal.refuse(other, holderDoing, me, doing);
      }
      // released between the two reads: try again
    }
  }

  /** Gives the gate back (the holder only; the last of nested holds releases it). */
  public void exit() {
    if (--depth == 0) {
      HOLDER.setRelease(this, (Thread) null);
    }
  }

  /** The thread that holds the gate, or null. */
  public Thread holder() {
    return holder;
  }
}
