/**
 * The contract between the runtime and its backends (local, NCCL, MPI, or a third party's, in a module of
 * its own: {@code spi-check/} in the repository is one). Everything here names only exported types.
 *
 * <p>A backend is
 *
 * <ul>
 *   <li>a {@link dev.commplan.runtime.Backend} provider, named in its module's {@code provides} (and in
 *       {@code META-INF/services} for the class path);
 *   <li>a communicator that extends {@link AbstractCommunicator}, which owns what every communicator owes
 *       its users (one thread at a time, the rules and their ids, the agreement check, a schedule checked
 *       before it is compiled) and leaves the backend {@code enqueueDirect}, {@code compileChecked}, {@code
 *       splitGroup}, {@code openGroup}/{@code closeGroup}, {@code ensureUsable}, {@code openStream}, and the
 *       rest of {@link BackendCommunicator} (rank, size, stream, allocate, close, which calls {@code
 *       closeMadeStreams}); its compiled schedules implement {@link
 *       dev.commplan.runtime.plan.CompiledSchedule};
 *   <li>streams that extend {@link StreamBase}, made with their communicator as owner (whose gate they
 *       share) and implementing {@code awaitIdle}, {@code recordEvent} (an {@link EventBase}), {@code
 *       waitForEvent} and {@code closeStream};
 *   <li>for ranks that are threads of one process, a cluster that runs them through {@link
 *       RankSupervisor}, saying only what aborting a rank means;
 *   <li>where it fits, {@link HostMemoryBlock} (device memory that is host memory), {@link FlightRecorder}
 *       with {@link OperationLabel} (the last operations, for timeout messages) and {@link
 *       NativeLibraryLookup}.
 * </ul>
 *
 * <p>Words the contract uses, whatever the backend runs on:
 *
 * <ul>
 *   <li>a call's <em>count</em> is the per-rank element count its collective is defined with ({@link
 *       dev.commplan.runtime.plan.CollectiveCall}, {@code CountRule.ncclCount}): the send count of AllGather and
 *       Gather, the receive count of ReduceScatter and Scatter, the count per peer of AllToAll, the element count
 *       of the others and of a send or receive. It is NCCL's {@code count} argument, which the DSL's collectives
 *       follow; a backend of another library converts it (MPI's AllToAll takes it per peer too);
 *   <li>a <em>group</em> is calls issued together that must not wait for each other: a plan's step, the calls
 *       between {@code groupStart()} and {@code groupEnd()}, the agreement check's exchange (NCCL: an NCCL group;
 *       a backend without one orders the calls so that none waits for a later one);
 *   <li>to <em>capture</em> a schedule is to record it once and replay it at every launch (NCCL: a CUDA graph);
 *       a backend that records nothing keeps {@code CompiledSchedule}'s defaults, under which a launch enqueues
 *       the calls again and no stream is ever being captured;
 *   <li><em>device memory</em> is the memory a rank's calls read and write: a GPU's on NCCL, this host's on
 *       the local and MPI backends ({@link HostMemoryBlock}).
 * </ul>
 *
 * <p>A backend proves that it keeps the contract by passing the conformance kit ({@code commplan-conformance},
 * {@code conformance/README.md} in the repository): the same suites every backend of the runtime passes, run by
 * naming the backend.
 *
 * <p>User code rarely needs this package.
 */
package dev.commplan.runtime.spi;
