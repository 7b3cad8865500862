/**
 * The raw bindings: the functions of NCCL ({@code nccl.h}), of the CUDA runtime ({@code cuda_runtime_api.h})
 * and of libc's environment that the backend calls, one class per concept of the headers ({@link
 * NcclLibraryInfo}, {@link NcclCommunicators}, {@link NcclCollectives}, {@link Cuda}, {@link CudaGraphs},
 * {@link CudaStreamOrderedMemory}, {@link ProcessEnvironment}) and one Java method per C function: a {@code
 * static final MethodHandle} in a holder class of its own, called with {@code invokeExact}, the code
 * returned unchecked. {@link NcclSymbols} says which symbols are required; {@link NativeLibrary} opens the
 * libraries (by soname, or where a system property says) and {@link NativeAccess} is the one class that
 * calls FFM's restricted methods. {@link NcclConfig} lays out {@code ncclConfig_t}.
 *
 * <p>Only {@code nccl.binding} calls these, and they call nothing of the backend ({@code ArchitectureTest}).
 */
package dev.commplan.runtime.nccl.binding.raw;
