package dev.commplan.runtime.nccl.memory;

import dev.commplan.runtime.nccl.CudaException;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import java.lang.foreign.MemorySegment;

/** {@link CopyDevice} over the CUDA runtime: each method is the one call, checked ({@link CudaException}). */
public final class CudaCopyDevice implements CopyDevice {
  public static final CudaCopyDevice INSTANCE = new CudaCopyDevice();

  private CudaCopyDevice() {}

  @Override
  public void setDevice(int device) {
    CheckedCuda.cudaSetDevice(device);
  }

  @Override
  public void copyToDevice(long dst, MemorySegment src, long bytes, long stream) {
    CheckedCuda.cudaMemcpyAsyncToDevice(dst, src, bytes, stream);
  }

  @Override
  public void copyToHost(MemorySegment dst, long src, long bytes, long stream) {
    CheckedCuda.cudaMemcpyAsyncToHost(dst, src, bytes, stream);
  }

  @Override
  public void copyOnDevice(long dst, long src, long bytes, long stream) {
    CheckedCuda.cudaMemcpyAsyncOnDevice(dst, src, bytes, stream);
  }

  @Override
  public void memset(long dst, int value, long bytes, long stream) {
    CheckedCuda.cudaMemsetAsync(dst, value, bytes, stream);
  }

  @Override
  public void synchronize(long stream) {
    CheckedCuda.cudaStreamSynchronize(stream);
  }
}
