package dev.commplan.runtime;

/**
 * Two threads used one rank's communicator at once: a plan's execute, a direct collective or an open
 * group overlapped another thread's. A communicator, like the {@code ncclComm_t} under it, is used by one
 * thread at a time; interleaved calls would mix the two threads' data without an error. The message
 * names both threads and what each was doing.
 */
public class ConcurrentUseException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** The name of the thread that was using the communicator ({@link #holder()}). */
  private final String holder;
  /** The name of the thread that was refused ({@link #caller()}). */
  private final String caller;

  /**
   * Creates the exception; {@link #of} writes the message.
   *
   * @param message names both threads and what each was doing
   * @param holder the name of the thread that was using the communicator
   * @param caller the name of the thread that was refused
   */
  public ConcurrentUseException(String message, String holder, String caller) {
    super(message);
    this.holder = holder;
    this.caller = caller;
  }

  /**
   * The refusal for {@code caller}, doing {@code callerDoing}, while {@code holder} is in {@code
   * holderDoing} on {@code comm}'s communicator.
   *
   * @param comm the communicator both threads used
   * @param holder the thread inside the communicator
   * @param holderDoing what {@code holder} was doing: {@code "execute of plan p.Grads"}, say
   * @param caller the thread that was refused
   * @param callerDoing what {@code caller} called
   * @return the exception, for the caller to throw on its own thread
   */
  public static ConcurrentUseException of(Communicator comm, Thread holder, String holderDoing, Thread caller,
      String callerDoing) {
    return new ConcurrentUseException("rank " + comm.rank() + "'s " + comm.backendName() + " communicator is used"
        + " by two threads at once: thread '" + caller.getName() + "' called " + callerDoing + " while thread '"
        + holder.getName() + "' was in " + holderDoing + ". A communicator is used by one thread at a time (NCCL's are"
        + " not thread-safe, and interleaved calls mix the threads' data); give each thread its own"
        + " communicator, or make them take turns", holder.getName(), caller.getName());
  }

  /** {@return the name of the thread that was using the communicator} */
  public String holder() {
    return holder;
  }

  /** {@return the name of the thread that was refused} */
  public String caller() {
    return caller;
  }
}
