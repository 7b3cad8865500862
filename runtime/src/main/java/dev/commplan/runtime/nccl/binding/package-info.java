/**
 * The binding layer, the backend's one door to the raw downcalls of {@code binding.raw}: every other layer
 * calls CUDA and NCCL through it ({@code ArchitectureTest}).
 *
 * <ul>
 *   <li>{@link CheckedCuda} and {@link CheckedNccl}: the CUDA runtime's and NCCL's host functions as the
 *       backend calls them. A code other than success becomes a {@code CudaException} or {@code
 *       NcclException} with the function's name and the library's own text; out-parameters live in a
 *       confined arena per call. Where the caller must act before it throws (end a capture, abort a
 *       communicator first) or the call is on the hot path, a {@code ...Raw} method returns the code.
 *   <li>{@link NcclDispatch}: the one place a collective is handed to its NCCL function, for direct calls and
 *       plans alike; the code is returned raw, for the rank's state to turn into an exception.
 *   <li>{@link NcclEnums} and {@link NcclTypeSupport}: NCCL's values for CommPlan's data types and
 *       reductions, and which of them the loaded NCCL has.
 *   <li>{@link NcclEnvironment} (with {@link NativeAccessMessage}): what the backend needs of this JVM and
 *       machine, checked in order with a message that says what to do, and the process environment NCCL
 *       and CUDA read.
 * </ul>
 */
package dev.commplan.runtime.nccl.binding;
