package dev.commplan.runtime.nccl;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.nccl.memory.NcclMemory;
import dev.commplan.runtime.nccl.sharing.GpuSharing;
import java.util.Objects;

/**
 * The one place where raw CUDA handles cross CommPlan's API, for working with memory and streams made
 * by other CUDA code (a framework's tensors, its streams). Nothing here owns what it wraps: closing the
 * wrapper never frees the pointer or destroys the stream, and the caller keeps them alive for as long as
 * the wrapper is used.
 *
 * <p>Ordering (docs/dsl.md, "Ordering of host access and collectives"): CommPlan's host copies into and
 * out of wrapped memory are complete when they return, as for its own memory; what other CUDA code
 * writes on its own stream is ordered by that stream, so synchronize it first or enqueue the collective
 * on it ({@link #wrapStream}), where CUDA's stream order applies.
 */
public final class NcclInterop {
  private NcclInterop() {}

  /**
   * A view of {@code bytes} of device memory at {@code address} on {@code comm}'s device (a {@code void*}
   * from {@code cudaMalloc} or a framework's allocator). Not owned: {@code close()} only marks it closed.
   *
   * @param comm an NCCL backend communicator, whose device holds the memory
   * @param address the device address; 0 only with {@code bytes == 0}
   * @param bytes the size in bytes, not negative
   * @return the view; the caller keeps the memory alive while it is used
   * @throws IllegalArgumentException if {@code comm} is not the NCCL backend's, or the address or size is
   *     invalid
   */
  public static DeviceMemory wrapDevicePointer(Communicator comm, long address, long bytes) {
    NcclCommunicator nc = nccl(comm);
    if (address == 0 && bytes != 0) {
      throw new IllegalArgumentException("a NULL device pointer cannot hold " + bytes + " bytes");
    }
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes must be >= 0, was " + bytes);
    }
    return nc.wrap(address, bytes);
  }

  /**
   * A typed buffer view of {@code length} elements of {@code type} at device {@code address}; not owned.
   *
   * @param comm an NCCL backend communicator, whose device holds the memory
   * @param type the element type
   * @param address the device address of the first element
   * @param length the number of elements
   * @return the view; the caller keeps the memory alive while it is used
   */
  public static Buffer wrapBuffer(Communicator comm, DataType type, long address, long length) {
    Objects.requireNonNull(type, "type");
    DeviceMemory memory = wrapDevicePointer(comm, address, Math.multiplyExact(length, (long) type.byteSize()));
    return Buffer.view(type, memory, 0, length);
  }

  /**
   * A stream of {@code comm} over an external {@code cudaStream_t} of its device (0 is CUDA's legacy
   * default stream). Collectives enqueued on it run in that stream's order; never destroyed here.
   *
   * <p>Not the legacy stream (0, or {@code cudaStreamLegacy}, 1) where other ranks of this process share
   * {@code comm}'s GPU: CUDA has one legacy stream per context, that is per device of a process ("Stream
   * synchronization behavior"), so those ranks would all enqueue on the same stream, where each rank's NCCL
   * kernel waits for its peers' kernels queued behind it, forever.
   *
   * @param comm an NCCL backend communicator
   * @param cudaStream the {@code cudaStream_t}, created on {@code comm}'s device (CUDA runs a stream's work
   *     on the device it was made for)
   * @return the wrapper, which the caller's code keeps the stream alive for
   * @throws IllegalArgumentException for the legacy stream where ranks of this process share the GPU
   */
  public static Stream wrapStream(Communicator comm, long cudaStream) {
    NcclCommunicator nc = nccl(comm);
    GpuSharing sharing = nc.sharing();
    if ((cudaStream == 0 || cudaStream == 1) && sharing.oneContext() && sharing.ranksPerGpu() != 1) {
      throw new IllegalArgumentException("NcclInterop.wrapStream: " + comm + " shares its GPU with other ranks of"
          + " this process, and CUDA's legacy default stream (cudaStream_t " + cudaStream + ") is one per device of"
          + " a process: their collectives on it would queue behind each other, each waiting forever for peers"
          + " queued after it. Use the communicator's stream(), newStream(), or a stream of your own"
          + " (cudaStreamCreateWithFlags)");
    }
    return nc.wrapStream(cudaStream);
  }

  /**
   * The device address of {@code buffer}'s first element, for handing to other CUDA code.
   *
   * @param buffer a buffer of an NCCL backend communicator
   * @return the {@code void*} of its first element, valid while the buffer is open; other code reading it
   *     orders itself after the collective by the stream
   */
  public static long devicePointer(Buffer buffer) {
    Objects.requireNonNull(buffer, "buffer");
    nccl(buffer.communicator());
    return NcclMemory.pointer(buffer);
  }

  /**
   * The {@code cudaStream_t} of an NCCL backend stream.
   *
   * @param stream a stream of an NCCL backend communicator
   * @return the {@code cudaStream_t}, still owned by CommPlan (or by whoever made it, for a wrapped one)
   */
  public static long cudaStream(Stream stream) {
    Objects.requireNonNull(stream, "stream");
    return nccl(stream.communicator()).streamHandle(stream);
  }

  private static NcclCommunicator nccl(Communicator comm) {
    Objects.requireNonNull(comm, "comm");
    if (comm instanceof NcclCommunicator nc) {
      return nc;
    }
    throw new IllegalArgumentException(comm + " is a communicator of the '" + comm.backendName()
        + "' backend; NcclInterop works with the NCCL backend's communicators only");
  }
}
