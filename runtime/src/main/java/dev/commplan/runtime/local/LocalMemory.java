package dev.commplan.runtime.local;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.spi.DeviceMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The local backend's device memory: an off-heap block from its own shared {@link Arena} (shared, because
 * the rank's thread, its stream's worker and other ranks' workers all touch it), zeroed, aligned to 256
 * bytes like {@code cudaMalloc}, freed on {@link #close()} or when its communicator closes.
 *
 * <p>Host copies do not wait for the stream, exactly as the interface says: reading before {@code
 * synchronize()} can see data from before the collective.
 */
public final class LocalMemory implements DeviceMemory {
  /** What {@code cudaMalloc} guarantees, so layouts and alignment behave as on a GPU. */
  static final long ALIGNMENT = 256;

  /** Allocation accounting, for leak tests: blocks and bytes allocated in this JVM and not yet freed. */
  private static final AtomicLong OPEN_BLOCKS = new AtomicLong();
  private static final AtomicLong OPEN_BYTES = new AtomicLong();

  private final LocalCommunicator owner;
  private final Arena arena;
  private final MemorySegment segment;
  private final AtomicBoolean closed = new AtomicBoolean();

  LocalMemory(LocalCommunicator owner, long bytes) {
    this.owner = owner;
    this.arena = Arena.ofShared();
    this.segment = arena.allocate(bytes, ALIGNMENT); // Arena.allocate zeroes the block
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

  private void freed() {
    OPEN_BLOCKS.decrementAndGet();
    OPEN_BYTES.addAndGet(-segment.byteSize());
  }

  @Override
  public long byteSize() {
    return segment.byteSize();
  }

  @Override
  public Communicator owner() {
    return owner;
  }

  @Override
  public void copyFromHost(MemorySegment src, long srcOffset, long dstOffset, long bytes) {
    checkOpen();
    MemorySegment.copy(src, srcOffset, segment, dstOffset, bytes);
  }

  @Override
  public void copyToHost(long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
    checkOpen();
    MemorySegment.copy(segment, srcOffset, dst, dstOffset, bytes);
  }

  @Override
  public boolean isClosed() {
    return closed.get();
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      owner.forget(this);
      arena.close();
      freed();
    }
  }

  /** The block itself, for the collectives' kernels. */
  MemorySegment segment() {
    return segment;
  }

  /** Frees the block without telling the owner (the owner is closing and frees all its blocks). */
  void closeForOwner() {
    if (closed.compareAndSet(false, true)) {
      arena.close();
      freed();
    }
  }

  void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException(this + " is closed: its memory was freed");
    }
  }

  @Override
  public String toString() {
    return "LocalMemory[" + segment.byteSize() + " bytes, rank " + owner.rank() + (closed.get() ? ", closed" : "") + "]";
  }
}
