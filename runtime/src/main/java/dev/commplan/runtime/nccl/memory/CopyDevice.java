package dev.commplan.runtime.nccl.memory;

import java.lang.foreign.MemorySegment;

/**
 * The device as {@link HostCopies} drives it: the CUDA runtime calls that host copies are made of, one
 * method per call, each returning when CUDA's function returns (which is not when the device has done the
 * work: that is the point of {@link HostCopies}). An interface so that a test can put a model of CUDA's
 * asynchronous copies in its place and check the ordering on machines without a GPU; {@link CudaCopyDevice}
 * is the real one.
 */
public interface CopyDevice {
  /** {@code cudaSetDevice(device)}: the device the following calls address. */
  void setDevice(int device);

  /** {@code cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream)}; {@code src} may be on the heap. */
  void copyToDevice(long dst, MemorySegment src, long bytes, long stream);

  /** {@code cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream)}; {@code dst} may be on the heap. */
  void copyToHost(MemorySegment dst, long src, long bytes, long stream);

  /** {@code cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)}. */
  void copyOnDevice(long dst, long src, long bytes, long stream);

  /** {@code cudaMemsetAsync(dst, value, bytes, stream)}. */
  void memset(long dst, int value, long bytes, long stream);

  /** {@code cudaStreamSynchronize(stream)}: returns once everything enqueued on {@code stream} has finished. */
  void synchronize(long stream);
}
