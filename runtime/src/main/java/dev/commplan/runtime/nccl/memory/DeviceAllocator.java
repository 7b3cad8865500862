package dev.commplan.runtime.nccl.memory;

import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.sharing.GpuSharing;
import java.util.function.LongConsumer;

/**
 * How one rank gets and gives back device memory. {@link #choose} picks one per communicator:
 *
 * <ul>
 *   <li><b>{@link #DEVICE_WIDE}</b>: {@code cudaMalloc} and {@code cudaFree}. Both may wait for all work of
 *       the device's CUDA context: a device memory allocation is one of the operations the CUDA
 *       programming guide lists under "implicit synchronization", and {@code cudaFree} waits for work that
 *       may still use the block. With one rank of a GPU in a process, that is this rank's own work only.
 *   <li><b>{@link StreamOrdered}</b>: {@code cudaMallocAsync} and {@code cudaFreeAsync} on the rank's copy
 *       stream, for ranks of one process that share a GPU (an in-JVM cluster with more ranks than GPUs).
 *       They share one CUDA context, so a device-wide wait in one rank's thread would also wait for a peer's
 *       NCCL kernel, and that kernel spins until this very rank joins the call: a deadlock. The
 *       stream-ordered allocator waits for no other stream. (On the GPU, the send/receive suite at 4 ranks
 *       sharing one GPU hung with {@code cudaMalloc}/{@code cudaFree} and runs with this: docs/gpu.md.)
 * </ul>
 */
public sealed interface DeviceAllocator permits DeviceAllocator.DeviceWide, DeviceAllocator.StreamOrdered {
  /** The system property that overrides {@link #choose}'s rule: {@value}. */
  String PROPERTY = "commplan.nccl.streamOrderedMemory";

  /** {@code cudaMalloc}/{@code cudaFree}. */
  DeviceAllocator DEVICE_WIDE = new DeviceWide();

  /**
   * A block of {@code bytes} on the current device. It is usable in the order of the copy stream (where
   * {@link NcclMemory} zeroes it and then synchronizes that stream, after which every stream may use it).
   */
  long allocate(long bytes);

  /**
   * Gives the block back once the work this rank enqueued on its streams so far is done with it; the host
   * does not wait for that work.
   */
  void free(long pointer);

  /** Frees on a failure path, reporting nothing (the failure being reported is another's). */
  void freeQuietly(long pointer);

  /** The allocating call, for messages: {@code cudaMalloc} or {@code cudaMallocAsync}. */
  String allocatingCall();

  /**
   * Whether a communicator's memory is stream-ordered: where its GPU's ranks share this process's CUDA
   * context ({@link GpuSharing#oneContext()}), unless {@value #PROPERTY} says {@code true} or {@code false}.
   *
   * @param property the property's value, or null ({@code auto} is the same)
   * @throws IllegalArgumentException naming the property where it is anything else
   */
  static boolean streamOrdered(GpuSharing sharing, String property) {
    return GpuSharing.setting(PROPERTY, property, sharing.oneContext(),
        "stream-ordered where ranks of this process share a GPU");
  }

  /**
   * The allocator for a communicator whose GPU is shared as {@code sharing} says ({@link #streamOrdered}).
   *
   * @param copyStream the rank's copy stream, where stream-ordered blocks are allocated and freed
   * @param orderAfterRankWork makes the stream it is given wait for the work enqueued so far on every stream
   *     of the rank (events; the host does not wait)
   */
  static DeviceAllocator choose(GpuSharing sharing, long copyStream, LongConsumer orderAfterRankWork) {
    return streamOrdered(sharing, System.getProperty(PROPERTY))
        ? new StreamOrdered(copyStream, orderAfterRankWork) : DEVICE_WIDE;
  }

  /** {@code cudaMalloc} and {@code cudaFree}, which may wait for the whole device. */
  final class DeviceWide implements DeviceAllocator {
    private DeviceWide() {}

    @Override
    public long allocate(long bytes) {
      return CheckedCuda.cudaMalloc(bytes);
    }

    @Override
    public void free(long pointer) {
      CheckedCuda.cudaFree(pointer);
    }

    @Override
    public void freeQuietly(long pointer) {
      CheckedCuda.cudaFreeQuietly(pointer);
    }

    @Override
    public String allocatingCall() {
      return "cudaMalloc";
    }
  }

  /**
   * {@code cudaMallocAsync} and {@code cudaFreeAsync} on the rank's copy stream. A free is ordered after
   * the rank's work so far ({@code orderAfterRankWork}), which is what {@code cudaFree}'s wait gave; work
   * on streams the rank does not own ({@code NcclInterop.wrapStream}) must be done with the block before it
   * is closed, as with {@code cudaFreeAsync} in any CUDA program.
   */
  record StreamOrdered(long copyStream, LongConsumer orderAfterRankWork) implements DeviceAllocator {
    @Override
    public long allocate(long bytes) {
      return CheckedCuda.cudaMallocAsync(bytes, copyStream);
    }

    @Override
    public void free(long pointer) {
      orderAfterRankWork.accept(copyStream);
      CheckedCuda.cudaFreeAsync(pointer, copyStream);
    }

    @Override
    public void freeQuietly(long pointer) {
      try {
        free(pointer);
      } catch (RuntimeException e) {
        // the failure being reported is the caller's
      }
    }

    @Override
    public String allocatingCall() {
      return "cudaMallocAsync";
    }
  }
}
