package dev.commplan.runtime.nccl;

import dev.commplan.runtime.nccl.binding.raw.Cuda;
import java.lang.foreign.MemorySegment;

/** {@link CopyEngine} over the CUDA runtime: each method is the one call, checked ({@link CudaException}). */
final class CudaCopyEngine implements CopyEngine {
  static final CudaCopyEngine INSTANCE = new CudaCopyEngine();

  private CudaCopyEngine() {}

  @Override
  public void setDevice(int device) {
    Checked.cudaSetDevice(device);
  }

  @Override
  public void copyToDevice(long dst, MemorySegment src, long bytes, long stream) {
    Checked.cuda("cudaMemcpyAsync (host to device)", Cuda.cudaMemcpyAsyncToDevice(dst, src, bytes, stream));
  }

  @Override
  public void copyToHost(MemorySegment dst, long src, long bytes, long stream) {
    Checked.cuda("cudaMemcpyAsync (device to host)", Cuda.cudaMemcpyAsyncToHost(dst, src, bytes, stream));
  }

  @Override
  public void copyOnDevice(long dst, long src, long bytes, long stream) {
    Checked.cuda("cudaMemcpyAsync (device to device)", Cuda.cudaMemcpyAsync(
        MemorySegment.ofAddress(dst), MemorySegment.ofAddress(src), bytes, Cuda.MEMCPY_DEVICE_TO_DEVICE, stream));
  }

  @Override
  public void memset(long dst, int value, long bytes, long stream) {
    Checked.cuda("cudaMemsetAsync", Cuda.cudaMemsetAsync(dst, value, bytes, stream));
  }

  @Override
  public void synchronize(long stream) {
    Checked.cudaStreamSynchronize(stream);
  }
}
