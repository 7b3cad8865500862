package dev.commplan.runtime.spi;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Device memory that is native host memory (the local and MPI backends): a block from its own shared
 * {@link Arena} (shared, because the rank's thread, its stream's worker and MPI or other ranks' workers
 * all touch it), zeroed, aligned to 256 bytes like {@code cudaMalloc}. Subclasses decide what freeing
 * involves ({@link #close()}); this class holds the block, the host copies and the closed state.
 *
 * <p>Host copies are plain memory copies on the calling thread, so they are complete on return, as
 * {@link DeviceMemory} requires; the backend's worker or MPI sees them through the happens-before of the
 * enqueue that follows (a lock, or program order on the rank's thread). They do not wait for the stream,
 * exactly as {@link DeviceMemory} says: a read before {@code synchronize()} can see data from before the
 * collective.
 *
 * @param <C> the owning backend's communicator type
 */
public abstract class HostMemoryBlock<C extends Communicator> implements DeviceMemory {
  /** What {@code cudaMalloc} guarantees, so layouts and alignment behave as on a GPU. */
  public static final long ALIGNMENT = 256;

  /** The communicator whose rank owns the block. */
  protected final C owner;
  private final Arena arena;
  /** The block itself, for the backend's kernels and calls. */
  protected final MemorySegment segment;
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * Allocates the block, zeroed and aligned to {@link #ALIGNMENT} bytes.
   *
   * @param owner the communicator whose rank owns the block
   * @param bytes the size in bytes
   * @throws IllegalArgumentException if the host cannot give {@code bytes}, saying how much it has
   */
  protected HostMemoryBlock(C owner, long bytes) {
    this.owner = owner;
    this.arena = Arena.ofShared();
    MemorySegment block;
    try {
      block = arena.allocate(Math.max(bytes, 1), ALIGNMENT); // Arena.allocate zeroes it
    } catch (OutOfMemoryError e) {
      arena.close();
      throw new IllegalArgumentException("cannot allocate " + bytes + " bytes for rank " + owner.rank() + " of the "
          + owner.backendName() + " backend, whose device memory is this host's memory: " + available(), e);
    }
    this.segment = block.asSlice(0, bytes);
  }

  /** What the host has, from {@code /proc/meminfo} where there is one. */
  private static String available() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemAvailable:")) {
          String[] parts = line.trim().split("\\s+");
          return "the host has " + Long.parseLong(parts[1]) * 1024 + " bytes available (MemAvailable)";
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or unreadable: say only what was asked for
    }
    return "the host could not give that much";
  }

  @Override
  public final long byteSize() {
    return segment.byteSize();
  }

  @Override
  public final Communicator owner() {
    return owner;
  }

  @Override
  public final void copyFromHost(MemorySegment src, long srcOffset, long dstOffset, long bytes) {
    checkOpen();
    MemorySegment.copy(src, srcOffset, segment, dstOffset, bytes);
  }

  @Override
  public final void copyToHost(long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
    checkOpen();
    MemorySegment.copy(segment, srcOffset, dst, dstOffset, bytes);
  }

  @Override
  public final boolean isClosed() {
    return closed.get();
  }

  /** Throws {@link IllegalStateException} naming the block if it has been freed. */
  public final void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException(this + " is closed: its memory was freed");
    }
  }

  /**
   * Marks the block closed; true for the one caller that did it (close is idempotent).
   *
   * @return true for the one caller that closed it, false for every later one
   */
  protected final boolean markClosed() {
    return closed.compareAndSet(false, true);
  }

  /** Frees the native memory; call once, after {@link #markClosed()} returned true. */
  protected final void free() {
    arena.close();
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + segment.byteSize() + " bytes, rank " + owner.rank()
        + (closed.get() ? ", closed" : "") + "]";
  }
}
