package dev.commplan.runtime;

/**
 * A plan recorded once for one stream, so that {@link #launch()} enqueues the whole plan again and again
 * at the cost of one launch. Made by a generated plan's {@code capture(Stream)} (which calls {@code
 * Plan.capture}); the dsl contract's "Capturing a plan as a CUDA graph".
 *
 * <p>On the NCCL backend the plan's steps (each an NCCL group) are captured into one CUDA graph, and
 * {@code launch()} is one {@code cudaGraphLaunch} on the stream plus the host bookkeeping that a replay
 * of the graph would otherwise skip: the checks {@code execute} makes, the host-access guard's marks (so
 * reading a result before {@code stream.synchronize()} still throws {@link BufferInFlightException}),
 * and the flight record (so a timeout in {@code synchronize()} still names the plan and its steps). On
 * backends without CUDA graphs (local, MPI) {@code launch()} executes the plan: the same results, without
 * the saving; {@link #isGraph()} says which.
 *
 * <p><b>Collective.</b> Capturing and launching are collective calls, like {@code execute}: every rank
 * captures the same plan at the same point of its sequence of collectives, and every rank launches it
 * where the others do (NCCL treats "captured or not" as a property of the operation that all ranks must
 * share).
 *
 * <p><b>Lifetime.</b> A graph holds the plan's buffers by device address. Those addresses are fixed: a
 * plan's buffers are allocated or bound once, at build, and never rebound. What can free them is checked
 * at every {@code launch()}, which throws {@link IllegalStateException} naming what was freed and never
 * launches a graph over freed memory:
 *
 * <ul>
 *   <li>closing the plan closes its captured plans first (their graphs are destroyed, then the plan's
 *       memory is freed);
 *   <li>closing or aborting the communicator destroys every graph captured on it before the
 *       communicator itself ({@code ncclCommDestroy} and {@code ncclCommAbort} wait until no graph that
 *       captured the communicator is left);
 *   <li>closing a buffer the user bound to the plan: the next {@code launch()} (and {@code execute})
 *       throws, naming the field.
 * </ul>
 *
 * As with {@code execute}, freeing memory while a launch may still be running on the device is the
 * caller's mistake: synchronize the stream first.
 *
 * <p>Used by the communicator's one thread, like the plan.
 */
public interface CapturedPlan extends AutoCloseable {
  /**
   * Enqueues the whole plan on {@link #stream()} once and returns without waiting, as {@code
   * execute(stream())} does; read the results after {@code stream().synchronize()}. Allocates nothing.
   * While the stream is itself being captured into a CUDA graph (by the caller's own code), the plan's
   * calls are recorded into that graph instead, as {@code execute} does.
   *
   * @throws IllegalStateException if this captured plan, its plan, its communicator or a buffer bound to
   *     the plan is closed
   */
  void launch();

  /** {@return the stream the plan was captured for, on which {@link #launch()} enqueues it} */
  Stream stream();

  /**
   * Whether a CUDA graph backs this captured plan (the NCCL backend); false where {@link #launch()}
   * executes the plan (local, MPI, and backends without CUDA graphs).
   *
   * @return true on the NCCL backend, false where {@code launch()} executes the plan
   */
  boolean isGraph();

  /** {@return whether {@link #close()} has been called, or the plan or communicator was closed} */
  boolean isClosed();

  /**
   * Destroys the graph (a launch still running on the device finishes first, as CUDA frees an executable
   * graph in flight once it completes); the plan stays usable. Idempotent.
   */
  @Override
  void close();
}
