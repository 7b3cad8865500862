package dev.commplan.runtime.nccl.memory;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.nccl.CudaException;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A block of device memory: allocated by the rank's {@link DeviceAllocator} and zeroed (owned), or a device
 * pointer someone else owns, wrapped by {@code NcclInterop.wrapDevicePointer} (not freed here). Host copies
 * and the zeroing go through the rank's {@link HostCopies}, so each has reached the device when it returns.
 */
public final class NcclMemory implements DeviceMemory {
  private final Communicator owner;
  private final HostCopies copies;
  private final DeviceAllocator allocator;
  private final Consumer<NcclMemory> onClose;
  private final long address;
  private final long byteSize;
  private final boolean owned;
  private volatile boolean closed;

  /**
   * @param onClose told once when the block is closed (the communicator forgets it)
   */
  NcclMemory(Communicator owner, HostCopies copies, DeviceAllocator allocator, Consumer<NcclMemory> onClose,
      long address, long byteSize, boolean owned) {
    this.owner = Objects.requireNonNull(owner, "owner");
    this.copies = Objects.requireNonNull(copies, "copies");
    this.allocator = Objects.requireNonNull(allocator, "allocator");
    this.onClose = Objects.requireNonNull(onClose, "onClose");
    this.address = address;
    this.byteSize = byteSize;
    this.owned = owned;
  }

  /**
   * Allocates {@code bytes} on the copies' device and zeroes them on the copy stream, which {@link HostCopies}
   * synchronizes: the zeros are there when it returns, and every stream of the device may use the block.
   */
  static NcclMemory allocate(Communicator owner, HostCopies copies, DeviceAllocator allocator,
      Consumer<NcclMemory> onClose, long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes must be >= 0, was " + bytes);
    }
    if (bytes == 0) {
      return new NcclMemory(owner, copies, allocator, onClose, 0, 0, true);
    }
    CheckedCuda.cudaSetDevice(copies.device());
    long pointer;
    try {
      pointer = allocator.allocate(bytes);
    } catch (CudaException e) {
      if (e.rawCode() != CheckedCuda.ERROR_MEMORY_ALLOCATION) {
        throw e;
      }
      long[] info = CheckedCuda.cudaMemGetInfo();
      throw new IllegalArgumentException("cannot allocate " + bytes + " bytes on CUDA device " + copies.device()
          + " of rank " + owner.rank() + (info == null ? "" : ": the device has " + info[0] + " bytes free of "
          + info[1]) + " (" + allocator.allocatingCall() + ": cudaErrorMemoryAllocation)", e);
    }
    try {
      copies.zero(pointer, bytes);
    } catch (RuntimeException e) {
      allocator.freeQuietly(pointer);
      throw e;
    }
    return new NcclMemory(owner, copies, allocator, onClose, pointer, bytes, true);
  }

  /** The device address; the block must be open. */
  long address() {
    if (closed) {
      throw new IllegalStateException(this + " is closed: its memory was freed");
    }
    return address;
  }

  /** The device address, even when closed (for messages and checks). */
  public long rawAddress() {
    return address;
  }

  boolean isOwned() {
    return owned;
  }

  @Override
  public long byteSize() {
    return byteSize;
  }

  @Override
  public Communicator owner() {
    return owner;
  }

  /** Copies from the host; when it returns the bytes are in device memory (see {@link HostCopies}). */
  @Override
  public void copyFromHost(MemorySegment src, long srcOffset, long dstOffset, long bytes) {
    Objects.requireNonNull(src, "src");
    Objects.checkFromIndexSize(srcOffset, bytes, src.byteSize());
    Objects.checkFromIndexSize(dstOffset, bytes, byteSize);
    copies.write(address() + dstOffset, src, srcOffset, bytes);
  }

  /** Copies to the host; when it returns {@code dst} holds the device's bytes (see {@link HostCopies}). */
  @Override
  public void copyToHost(long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
    Objects.requireNonNull(dst, "dst");
    Objects.checkFromIndexSize(srcOffset, bytes, byteSize);
    Objects.checkFromIndexSize(dstOffset, bytes, dst.byteSize());
    if (dst.isReadOnly()) {
      throw new IllegalArgumentException("dst is read-only");
    }
    copies.read(address() + srcOffset, dst, dstOffset, bytes);
  }

  /** Fills from a host pattern, doubling it on the device; done on return (see {@link HostCopies#fill}). */
  @Override
  public void fill(long dstOffset, long bytes, MemorySegment pattern) {
    Objects.requireNonNull(pattern, "pattern");
    Objects.checkFromIndexSize(dstOffset, bytes, byteSize);
    if (pattern.byteSize() == 0 && bytes > 0) {
      throw new IllegalArgumentException("an empty pattern cannot fill " + bytes + " bytes");
    }
    copies.fill(address() + dstOffset, pattern, bytes);
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    onClose.accept(this);
    if (owned && address != 0) {
      CheckedCuda.cudaSetDeviceQuietly(copies.device());
      allocator.free(address);
    }
  }

  @Override
  public String toString() {
    return (owned ? "NcclMemory" : "NcclMemory(wrapped)") + "[" + byteSize + " bytes at 0x"
        + Long.toHexString(address) + ", rank " + owner.rank() + ", device " + copies.device() + "]";
  }

  /** The device address of {@code buffer}'s first element (the buffer was checked to be ours and open). */
  public static long pointer(Buffer buffer) {
    if (!(buffer.memory() instanceof NcclMemory memory)) {
      throw new IllegalArgumentException(buffer + " is not NCCL backend memory (allocate it through an NCCL"
          + " communicator, or wrap the device pointer with NcclInterop.wrapDevicePointer)");
    }
    return memory.address() + buffer.byteOffset();
  }
}
