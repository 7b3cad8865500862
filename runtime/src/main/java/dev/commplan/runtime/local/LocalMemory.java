package dev.commplan.runtime.local;

import dev.commplan.runtime.spi.HostMemoryBlock;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The local backend's device memory: an off-heap block ({@link HostMemoryBlock}: zeroed, aligned to 256
 * bytes like {@code cudaMalloc}), freed on {@link #close()} or when its communicator closes.
 *
 * <p>Host copies do not wait for the stream, exactly as the interface says: reading before {@code
 * synchronize()} can see data from before the collective.
 */
public final class LocalMemory extends HostMemoryBlock<LocalCommunicator> {
  /** Allocation accounting, for leak tests: blocks and bytes allocated in this JVM and not yet freed. */
  private static final AtomicLong OPEN_BLOCKS = new AtomicLong();
  private static final AtomicLong OPEN_BYTES = new AtomicLong();

  LocalMemory(LocalCommunicator owner, long bytes) {
    super(owner, bytes);
    OPEN_BLOCKS.incrementAndGet();
    OPEN_BYTES.addAndGet(bytes);
  }

  /** Local blocks allocated in this JVM and not yet freed (allocation accounting, for leak tests). */
  static long openBlocks() {
    return OPEN_BLOCKS.get();
  }

  /** Bytes of the local blocks allocated in this JVM and not yet freed. */
  static long openBytes() {
    return OPEN_BYTES.get();
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
    OPEN_BLOCKS.decrementAndGet();
    OPEN_BYTES.addAndGet(-segment.byteSize());
  }
}
