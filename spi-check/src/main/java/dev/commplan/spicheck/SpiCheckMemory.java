package dev.commplan.spicheck;

import dev.commplan.runtime.spi.HostMemoryBlock;
import java.lang.foreign.MemorySegment;

/** A rank's device memory: host memory ({@link HostMemoryBlock}), freed on close or with its communicator. */
final class SpiCheckMemory extends HostMemoryBlock<SpiCheckCommunicator> {
  SpiCheckMemory(SpiCheckCommunicator owner, long bytes) {
    super(owner, bytes);
  }

  /** The bytes {@code [offset, offset + bytes)} of the block, for the collectives. */
  MemorySegment region(long offset, long bytes) {
    checkOpen();
    return segment.asSlice(offset, bytes);
  }

  @Override
  public void close() {
    if (markClosed()) {
      owner.forget(this);
      free();
    }
  }

  /** Frees the block without telling the owner, which is closing. */
  void closeForOwner() {
    if (markClosed()) {
      free();
    }
  }
}
