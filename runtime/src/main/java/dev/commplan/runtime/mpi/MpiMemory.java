package dev.commplan.runtime.mpi;

import dev.commplan.runtime.spi.HostMemoryBlock;
import java.lang.foreign.MemorySegment;

/**
 * The MPI backend's device memory: native host memory ({@link HostMemoryBlock}: zeroed, aligned to 256
 * bytes like {@code cudaMalloc}); MPI reads and writes it through its address. Freed on {@link #close()}
 * or when its communicator closes.
 *
 * <p>Host copies are complete on return and do not wait for the stream, as the interface says: a read before {@code synchronize()}
 * can see data from before the collective, or a half-finished one.
 */
public final class MpiMemory extends HostMemoryBlock<MpiCommunicator> {
  MpiMemory(MpiCommunicator owner, long bytes) {
    super(owner, bytes);
  }

  /**
   * Frees the block; idempotent. Collectives in flight on the owner are completed first (they may use
   * it), as {@code cudaFree} waits for the device; if the owner failed with calls in flight, the block is
   * left allocated instead of being freed under MPI.
   */
  @Override
  public void close() {
    if (isClosed()) {
      return;
    }
    boolean safe = owner.quiesceBeforeFree();
    if (markClosed()) {
      owner.forget(this);
      if (safe) {
        free();
      }
    }
  }

  /** The block, for the backend's own copies (in-place ReduceScatter, AVG). */
  MemorySegment segment() {
    return segment;
  }

  /** The block's address, for MPI. */
  long address() {
    return segment.address();
  }

  void closeForOwner() {
    if (markClosed()) {
      free();
    }
  }
}
