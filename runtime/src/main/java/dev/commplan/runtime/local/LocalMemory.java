package dev.commplan.runtime.local;

import dev.commplan.runtime.spi.HostMemoryBlock;
import java.lang.foreign.MemorySegment;

/**
 * The local backend's device memory: an off-heap block ({@link HostMemoryBlock}: zeroed, aligned to 256
 * bytes like {@code cudaMalloc}), freed on {@link #close()} or when its communicator closes.
 *
 * <p>Host copies are complete on return and do not wait for the stream, as the interface says: reading before {@code
 * synchronize()} can see data from before the collective.
 */
public final class LocalMemory extends HostMemoryBlock<LocalCommunicator> {
  LocalMemory(LocalCommunicator owner, long bytes) {
    super(owner, bytes);
    owner.cluster().allocated(segment.byteSize());
  }

  @Override
  public void close() {
    if (markClosed()) {
      owner.forget(this);
      freeAndCount();
    }
  }

  /** The block itself, for the collectives' kernels. */
  MemorySegment segment() {
    return segment;
  }

  /** Frees the block without telling the owner (the owner is closing and frees all its blocks). */
  void closeForOwner() {
    if (markClosed()) {
      freeAndCount();
    }
  }

  private void freeAndCount() {
    free();
    owner.cluster().freed(segment.byteSize());
  }
}
