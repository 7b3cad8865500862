package dev.commplan.runtime.spi;

import dev.commplan.runtime.Communicator;
import java.lang.foreign.MemorySegment;

/**
 * A block of device memory owned by one communicator: off-heap host memory on the local backend,
 * {@code cudaMalloc} memory on the NCCL backend. Buffers are typed views of a region of one block.
 *
 * <p>For backends and the buffer types; users work with buffers.
 */
public interface DeviceMemory extends AutoCloseable {
  /** Size in bytes. */
  long byteSize();

  /** The communicator whose device holds this memory. */
  Communicator owner();

  /**
   * Copies {@code bytes} from host memory {@code src} (heap or native) at {@code srcOffset} into this
   * block at {@code dstOffset}. Complete on return: every device operation enqueued after it, on any
   * stream of the owner, sees the new bytes (on a GPU that takes more than {@code cudaMemcpy}, whose DMA
   * may still be in flight when it returns). It does not wait for collectives still running on a stream:
   * writing memory such work uses is the caller's mistake (plans refuse it, {@code BufferInFlightException}).
   */
  void copyFromHost(MemorySegment src, long srcOffset, long dstOffset, long bytes);

  /**
   * Copies {@code bytes} of this block at {@code srcOffset} into host memory {@code dst} at {@code
   * dstOffset}. Complete on return, and sees what every device operation that finished before the call
   * wrote (synchronize the stream of a collective before reading what it writes).
   */
  void copyToHost(long srcOffset, MemorySegment dst, long dstOffset, long bytes);

  /** Whether {@link #close()} has been called. */
  boolean isClosed();

  /** Frees the memory; idempotent. */
  @Override
  void close();
}
