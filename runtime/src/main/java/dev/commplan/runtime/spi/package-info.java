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
 * <p>User code rarely needs this package.
 */
package dev.commplan.runtime.spi;
