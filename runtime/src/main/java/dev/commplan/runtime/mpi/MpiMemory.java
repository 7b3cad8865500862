package dev.commplan.runtime.mpi;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.spi.DeviceMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The MPI backend's device memory: native host memory from its own shared {@link Arena}, zeroed, aligned
 * to 256 bytes like {@code cudaMalloc}; MPI reads and writes it through its address. Freed on {@link
 * #close()} or when its communicator closes.
 *
 * <p>Host copies do not wait for the stream, as the interface says: a read before {@code synchronize()}
 * can see data from before the collective, or a half-finished one.
 */
public final class MpiMemory implements DeviceMemory {
  static final long ALIGNMENT = 256;

  private final MpiCommunicator owner;
  private final Arena arena;
  private final MemorySegment segment;
  private final AtomicBoolean closed = new AtomicBoolean();

  MpiMemory(MpiCommunicator owner, long bytes) {
    this.owner = owner;
    this.arena = Arena.ofShared();
    this.segment = arena.allocate(Math.max(bytes, 1), ALIGNMENT).asSlice(0, bytes); // zeroed
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

  /**
   * Frees the block; idempotent. Collectives in flight on the owner are completed first (they may use
   * it), as {@code cudaFree} waits for the device; if the owner failed with calls in flight, the block is
   * left allocated instead of being freed under MPI.
   */
  @Override
  public void close() {
    if (closed.get()) {
      return;
    }
    boolean safe = owner.quiesceBeforeFree();
    if (closed.compareAndSet(false, true)) {
      owner.forget(this);
      if (safe) {
        arena.close();
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
    if (closed.compareAndSet(false, true)) {
      arena.close();
    }
  }

  void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException(this + " is closed: its memory was freed");
    }
  }

  @Override
  public String toString() {
    return "MpiMemory[" + segment.byteSize() + " bytes, rank " + owner.rank() + (closed.get() ? ", closed" : "") + "]";
  }
}
