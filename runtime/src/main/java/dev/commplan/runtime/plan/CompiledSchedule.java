package dev.commplan.runtime.plan;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Stream;
import java.util.Objects;

/**
 * A schedule prepared by a backend ({@link Compiler#compile}): memory resolved, calls laid out, so that
 * {@link #enqueue} allocates nothing on the Java heap. A backend that can record a schedule once and replay
 * it (NCCL: a CUDA graph) overrides the capture methods; the others keep their defaults, under which a
 * captured plan enqueues its calls again at every launch.
 */
public interface CompiledSchedule {
  /** What a plan needs from a backend to run: implemented by every backend's communicator. */
  interface Compiler {
    /**
     * Prepares {@code schedule} once, so that each {@link CompiledSchedule#enqueue} does no allocation and
     * no planning. A backend built on {@code spi.AbstractCommunicator} gets this method from it, final: it
     * checks the schedule against the communicator (memory, regions, roots, peers), then hands it to the
     * backend's {@code compileChecked}.
     *
     * @param schedule the schedule, built for this communicator
     * @return the compiled schedule, which holds the schedule's memory by address and does not own it
     */
    CompiledSchedule compile(Schedule schedule);

    /**
     * Why this communicator can no longer run a plan, in the backend's own words ({@code "... is closed"};
     * NCCL's {@code "... was aborted (ncclCommAbort) after ... timed out"}), or null when it has nothing to say.
     * {@link Plan} asks once the communicator reports {@code isClosed()} (an aborted one does too), so
     * that its message says what happened rather than only "closed". The default: null.
     *
     * @return the reason, or null
     */
    default String unusableReason() {
      return null;
    }
  }

  /**
   * {@code schedule} compiled by {@code comm}'s backend.
   *
   * @param comm the communicator whose backend compiles
   * @param schedule the schedule, built for {@code comm}
   * @return the compiled schedule
   * @throws IllegalArgumentException if {@code comm}'s backend cannot run plans
   */
  static CompiledSchedule compile(Communicator comm, Schedule schedule) {
    Objects.requireNonNull(comm, "comm");
    if (comm instanceof Compiler compiler) {
      return compiler.compile(schedule);
    }
    throw new IllegalArgumentException(comm + " of the '" + comm.backendName() + "' backend cannot run plans:"
        + " its communicator does not implement CompiledSchedule.Compiler");
  }

  /**
   * Enqueues every step in ascending order on {@code stream}, each step's calls inside one group of the
   * backend (calls that must not wait for each other), and returns without waiting.
   *
   * @param stream a stream of the communicator that compiled the schedule
   */
  default void enqueue(Stream stream) {
    enqueueSteps(stream, 0, Integer.MAX_VALUE);
  }

  /**
   * Enqueues the steps at positions {@code [fromIndex, toIndex)} of the schedule's step list (clamped to
   * its length), in ascending order, each inside one group, and returns without waiting. Lets a caller
   * do host work between two steps of one plan (ZeRO: update the shard between ReduceScatter and
   * AllGather).
   *
   * @param stream a stream of the communicator that compiled the schedule
   * @param fromIndex the position of the first step to enqueue, from 0
   * @param toIndex the position after the last step to enqueue
   */
  void enqueueSteps(Stream stream, int fromIndex, int toIndex);

  /**
   * What {@link Plan#describe()} adds to call {@code call} of the step at position {@code step}: how the
   * backend issues it where that is worth knowing (NCCL says {@code ncclGather}, or {@code grouped
   * ncclSend/ncclRecv} where the loaded NCCL lacks it), or null (the default: nothing to add).
   *
   * @param step the step's position in the schedule's step list
   * @param call the call's position in the step
   * @return a short note, or null
   */
  default String callNote(int step, int call) {
    return null;
  }

  // ---------------------------------------------------------------- capture

  /**
   * Whether {@code stream} is being captured right now: what is enqueued on it is recorded, to be replayed
   * later, not run (on NCCL, into a CUDA graph, by the caller's own code or by someone else's: CUDA does not
   * say whose). A plan asks once per {@code execute} and passes the answer on ({@link #enqueueSteps(Stream,
   * int, int, boolean)}): host bookkeeping that describes work running on the stream (the host-access
   * guard's marks, a flight record entry, an event) must not be done for work that is only recorded. The
   * default, for a backend that records nothing: false. Cheap and allocation-free (NCCL: one {@code
   * cudaStreamIsCapturing}).
   *
   * @param stream a stream of the communicator that compiled the schedule
   * @return true while {@code stream} is being captured
   */
  default boolean isCapturing(Stream stream) {
    return false;
  }

  /**
   * {@link #enqueueSteps(Stream, int, int)}, told what {@link #isCapturing} just said about {@code
   * stream}, so that a backend asks once per execute. When {@code capturing}, the backend only records
   * the calls (no flight record, no events, nothing that waits on or queries the stream: on NCCL, CUDA would
   * invalidate the capture). The default ignores it, which is right for a backend that records nothing.
   *
   * @param stream a stream of the communicator that compiled the schedule
   * @param fromIndex the position of the first step to enqueue, from 0
   * @param toIndex the position after the last step to enqueue
   * @param capturing whether {@code stream} is being captured, as {@link #isCapturing} said
   */
  default void enqueueSteps(Stream stream, int fromIndex, int toIndex, boolean capturing) {
    enqueueSteps(stream, fromIndex, toIndex);
  }

  /**
   * Records the whole schedule once for {@code stream}, to be launched again and again (on the NCCL
   * backend: every step, each an NCCL group, captured into one CUDA graph). Every rank must capture at the
   * same point of its sequence of collectives. The caller ({@code Plan.capture}) has checked the plan and
   * owns what is returned: it does the host-access guard's marks at every launch and closes it.
   *
   * <p>The default, for a backend that records nothing (local, MPI, and any other that does not override
   * it): a {@link Capture} whose launch enqueues the schedule again, with the same results and the same cost
   * as {@code execute}.
   *
   * @param stream the stream every launch enqueues on
   * @return the recording, owned by the caller
   */
  default Capture capture(Stream stream) {
    Objects.requireNonNull(stream, "stream");
    return new Capture() {
      @Override
      public void launch(boolean capturing) {
        enqueueSteps(stream, 0, Integer.MAX_VALUE, capturing);
      }

      @Override
      public boolean isGraph() {
        return false;
      }

      @Override
      public void close() {}
    };
  }

  /**
   * A schedule recorded by {@link #capture} for one stream. Used by the communicator's one thread, except
   * {@link #close()}, which a backend may call from another when it frees the communicator.
   */
  interface Capture extends AutoCloseable {
    /**
     * Enqueues the recorded schedule once on the stream it was recorded for, and returns without
     * waiting. {@code capturing}: what {@link CompiledSchedule#isCapturing} just said about that stream;
     * while it is being captured by someone else, the calls are recorded into that capture instead (on
     * NCCL, a graph launch cannot be).
     *
     * @param capturing whether the stream is being captured right now, as
     *     {@link CompiledSchedule#isCapturing} said
     * @throws IllegalStateException if the recording was closed, or freed with its communicator
     */
    void launch(boolean capturing);

    /**
     * {@return whether the backend replays a recording of the calls (NCCL: a CUDA graph), which {@code
     * CapturedPlan.isGraph()} reports; false: {@link #launch} enqueues the calls again}
     */
    boolean isGraph();

    /** Frees the recording (NCCL: the CUDA graph); idempotent. */
    @Override
    void close();
  }
}
