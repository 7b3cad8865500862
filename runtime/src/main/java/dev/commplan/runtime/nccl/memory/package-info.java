/**
 * Device memory of a rank: a block allocated and zeroed, or a device pointer of other code wrapped ({@link
 * NcclMemory}); how the rank gets and gives back memory ({@link DeviceAllocator}: {@code cudaMalloc}, or
 * stream-ordered where ranks share this process's GPU); its host↔device copies, each finished on the device
 * before it returns ({@link HostCopies}, over the CUDA calls of {@link CopyDevice}, which {@link
 * CudaCopyDevice} makes and a model of CUDA can stand in for); and what one communicator allocated, freed
 * with it at the latest ({@link RankMemory}).
 */
package dev.commplan.runtime.nccl.memory;
