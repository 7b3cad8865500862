package dev.commplan.runtime;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A block of device memory owned by one communicator: off-heap host memory on the local backend,
 * {@code cudaMalloc} memory on the NCCL backend. Buffers are typed views of a region of one block.
 *
 * <p>For backends and the buffer types; users work with buffers.
 */
public interface DeviceMemory extends AutoCloseable {
  /**
   * Where buffers and plans get device memory: implemented by every backend's communicator. For
   * backends; users allocate typed buffers ({@code F32Buffer.allocate}).
   */
  interface Allocator {
    /**
     * Allocates {@code bytes} of device memory on this communicator's device, zeroed: the zeros are in
     * device memory when it returns, as for {@link #copyFromHost}.
     *
     * @param bytes the size in bytes, positive
     * @return the new block, owned by the caller, who closes it
     */
    DeviceMemory allocate(long bytes);

    /**
     * Whether collectives on this communicator may use memory that {@code owner} allocated: the same
     * communicator, or (where the backend says so) another communicator of this rank's family on the same
     * device, as a mesh's world and its axes are. The default: the same communicator only.
     *
     * @param owner the communicator that allocated the memory
     * @return true if this communicator's collectives may read and write it
     */
    default boolean sharesMemoryWith(Communicator owner) {
      return owner == this;
    }
  }

  /**
   * Allocates {@code bytes} of zeroed device memory on {@code comm}'s device (its backend's {@link
   * Allocator}); the caller owns it and closes it. For tests and backends; users allocate typed buffers.
   *
   * @param comm the communicator whose device (and backend) allocates
   * @param bytes the size in bytes, positive
   * @return the new block, owned by the caller
   * @throws IllegalArgumentException if {@code comm}'s backend cannot allocate memory
   */
  static DeviceMemory allocate(Communicator comm, long bytes) {
    Objects.requireNonNull(comm, "comm");
    if (comm instanceof Allocator allocator) {
      return allocator.allocate(bytes);
    }
    throw new IllegalArgumentException(comm + " of the '" + comm.backendName() + "' backend cannot allocate"
        + " device memory: its communicator does not implement DeviceMemory.Allocator");
  }

  /** {@return the size in bytes} */
  long byteSize();

  /** {@return the communicator whose device holds this memory} */
  Communicator owner();

  /**
   * Copies {@code bytes} from host memory {@code src} (heap or native) at {@code srcOffset} into this
   * block at {@code dstOffset}. Complete on return: every device operation enqueued after it, on any
   * stream of the owner, sees the new bytes (on a GPU that takes more than {@code cudaMemcpy}, whose DMA
   * may still be in flight when it returns). It does not wait for collectives still running on a stream:
   * writing memory such work uses is the caller's mistake (plans refuse it, {@code BufferInFlightException}).
   *
   * @param src the host memory to read, heap or native
   * @param srcOffset where to start reading in {@code src}, in bytes
   * @param dstOffset where to start writing in this block, in bytes
   * @param bytes how many bytes to copy
   */
  void copyFromHost(MemorySegment src, long srcOffset, long dstOffset, long bytes);

  /**
   * Copies {@code bytes} of this block at {@code srcOffset} into host memory {@code dst} at {@code
   * dstOffset}. Complete on return, and sees what every device operation that finished before the call
   * wrote (synchronize the stream of a collective before reading what it writes).
   *
   * @param srcOffset where to start reading in this block, in bytes
   * @param dst the host memory to write, heap or native
   * @param dstOffset where to start writing in {@code dst}, in bytes
   * @param bytes how many bytes to copy
   */
  void copyToHost(long srcOffset, MemorySegment dst, long dstOffset, long bytes);

  /**
   * Fills {@code bytes} of this block from {@code dstOffset} with repeated copies of the host memory
   * {@code pattern} (the last copy cut short where {@code bytes} ends). Complete on return, like {@link
   * #copyFromHost}. The default copies the pattern again and again; a GPU backend copies it once and
   * doubles it on the device.
   *
   * @param dstOffset where the fill starts in this block, in bytes
   * @param bytes how many bytes to fill
   * @param pattern the host bytes to repeat; read only during the call
   */
  default void fill(long dstOffset, long bytes, MemorySegment pattern) {
    long size = pattern.byteSize();
    if (size == 0 && bytes > 0) {
      throw new IllegalArgumentException("an empty pattern cannot fill " + bytes + " bytes");
    }
    for (long done = 0; done < bytes; done += size) {
      copyFromHost(pattern, 0, dstOffset + done, Math.min(size, bytes - done));
    }
  }

  /** {@return whether {@link #close()} has been called} */
  boolean isClosed();

  /** Frees the memory; idempotent. */
  @Override
  void close();
}
