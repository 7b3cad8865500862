/**
 * The NCCL backend: ranks on CUDA GPUs whose collectives NCCL runs, called through {@code java.lang.foreign}.
 *
 * <p>What users name is here: {@link NcclBackend} (a cluster of this process's GPUs, one rank of a job of
 * one process per rank, the library's version and what is missing), {@link NcclCommunicator}, {@link
 * NcclInterop} (device pointers and CUDA streams of other code, in and out), and what a failure carries
 * ({@link NcclException} with its {@link NcclResult}, {@link CudaException} with its {@link CudaError}, and
 * {@link NcclVersion}). {@link NcclBackendProvider} is the {@code Backend} that {@code Backends} finds.
 *
 * <p>Under these entry points the backend is layered, each layer using only those below it (the runtime's
 * {@code ArchitectureTest} holds it; docs/architecture.md draws it), top first:
 * <ul>
 *   <li>{@code nccl.graphs}: a compiled schedule captured into one CUDA graph, and the graph's launch;
 *   <li>{@code nccl.calls}: how a direct call or a plan's step reaches NCCL;
 *   <li>{@code nccl.streams}: a communicator's CUDA streams and events;
 *   <li>{@code nccl.rank}: one rank's {@code ncclComm_t} and what every call asks of it first: its state,
 *       failures and watchdog, its family, its flight record, its graphs; and the split that makes a child;
 *   <li>{@code nccl.memory}: device memory and host copies;
 *   <li>{@code nccl.sharing}: several ranks on one GPU;
 *   <li>{@code nccl.binding}: the CUDA runtime's and NCCL's functions, checked, and the dispatch of a
 *       collective to its NCCL function, over {@code nccl.binding.raw}, the C functions one to one;
 * </ul>
 * and under all of them this package's exceptions, result codes and version. Only this package is
 * exported.
 *
 * <p>A plan's {@code execute} reaches {@code ncclAllReduce} in one line: {@code Plan.execute} → {@code
 * NcclCompiledSchedule.enqueueSteps} → {@code calls.NcclScheduleCalls.issueSteps} (the checks, then one NCCL
 * group per step) → {@code binding.NcclDispatch.enqueue} (the collective's function) → {@code
 * binding.raw.NcclCollectives.ncclAllReduce} (the downcall). A direct call: {@code NcclCommunicator} → {@code
 * calls.NcclDirectCalls} → {@code binding.NcclDispatch} → {@code binding.raw.NcclCollectives}.
 */
package dev.commplan.runtime.nccl;
