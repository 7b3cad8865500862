package dev.commplan.runtime;

/**
 * Two threads used one rank's communicator at once: a plan's execute, a direct collective or an open
 * group overlapped another thread's. A communicator, like the {@code ncclComm_t} under it, is used by one
 * thread at a time; interleaved calls would mix the two threads' data without an error. The message
 * names both threads and what each was doing.
 */
public class ConcurrentUseException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  private final String holder;
  private final String caller;

  public ConcurrentUseException(String message, String holder, String caller) {
    super(message);
    this.holder = holder;
    this.caller = caller;
  }

  /**
   * The refusal for {@code caller}, doing {@code callerDoing}, while {@code holder} is in {@code
   * holderDoing} on {@code comm}'s communicator.
   */
  public static ConcurrentUseException of(Communicator comm, Thread holder, String holderDoing, Thread caller,
      String callerDoing) {
    return new ConcurrentUseException("rank " + comm.rank() + "'s " + comm.backendName() + " communicator is used"
        + " by two threads at once: thread '" + caller.getName() + "' called " + callerDoing + " while thread '"
        + holder.getName() + "' was in " + holderDoing + ". A communicator is used by one thread at a time (NCCL's are"
        + " not thread-safe, and interleaved calls mix the threads' data); give each thread its own"
        + " communicator, or make them take turns", holder.getName(), caller.getName());
  }

  /** The name of the thread that was using the communicator. */
  public String holder() {
    return holder;
  }

  /** The name of the thread that was refused. */
  public String caller() {
    return caller;
  }
}
