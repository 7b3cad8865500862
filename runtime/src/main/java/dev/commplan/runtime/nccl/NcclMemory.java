package dev.commplan.runtime.nccl;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.nccl.internal.Cuda;
import dev.commplan.runtime.spi.DeviceMemory;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A block of device memory: {@code cudaMalloc}'d and zeroed by {@code cudaMemset} (owned), or a device
 * pointer someone else owns, wrapped by {@link NcclInterop#wrapDevicePointer} (not freed here).
 *
 * <p>Host copies use {@code cudaMemcpy} linked with {@code Linker.Option.critical(true)}, which lets a
 * heap segment (the Java array behind a buffer's {@code copyFrom}/{@code copyTo}) be passed straight to
 * C. The alternative, a native staging buffer, costs a second host copy and an allocation per copy, on
 * top of the staging the CUDA driver already does for pageable memory. The price of critical is that the
 * garbage collector waits while the call runs, so copies go in chunks of {@value #CHUNK_BYTES} bytes
 * (about a millisecond each at pageable-copy speeds): the JVM reaches a safepoint between chunks.
 */
final class NcclMemory implements DeviceMemory {
  static final long CHUNK_BYTES = 16L << 20;

  private final NcclCommunicator owner;
  private final long address;
  private final long byteSize;
  private final boolean owned;
  private volatile boolean closed;

  NcclMemory(NcclCommunicator owner, long address, long byteSize, boolean owned) {
    this.owner = owner;
    this.address = address;
    this.byteSize = byteSize;
    this.owned = owned;
  }

  /** Allocates and zeroes {@code bytes} on {@code owner}'s device. */
  static NcclMemory allocate(NcclCommunicator owner, long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes must be >= 0, was " + bytes);
    }
    if (bytes == 0) {
      return new NcclMemory(owner, 0, 0, true);
    }
    owner.useDevice();
    long pointer = Checked.cudaMalloc(bytes);
    try {
      Checked.cudaMemset(pointer, 0, bytes);
    } catch (RuntimeException e) {
      Cuda.cudaFree(pointer);
      throw e;
    }
    return new NcclMemory(owner, pointer, bytes, true);
  }

  /** The device address; the block must be open. */
  long address() {
    if (closed) {
      throw new IllegalStateException(this + " is closed: its memory was freed");
    }
    return address;
  }

  /** The device address, even when closed (for messages and checks). */
  long rawAddress() {
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

  @Override
  public void copyFromHost(MemorySegment src, long srcOffset, long dstOffset, long bytes) {
    Objects.requireNonNull(src, "src");
    Objects.checkFromIndexSize(srcOffset, bytes, src.byteSize());
    Objects.checkFromIndexSize(dstOffset, bytes, byteSize);
    long base = address();
    if (bytes == 0) {
      return;
    }
    owner.useDevice();
    for (long done = 0; done < bytes; done += CHUNK_BYTES) {
      long n = Math.min(CHUNK_BYTES, bytes - done);
      Checked.cuda("cudaMemcpy", Cuda.cudaMemcpy(MemorySegment.ofAddress(base + dstOffset + done),
          src.asSlice(srcOffset + done, n), n, Cuda.MEMCPY_HOST_TO_DEVICE));
    }
  }

  @Override
  public void copyToHost(long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
    Objects.requireNonNull(dst, "dst");
    Objects.checkFromIndexSize(srcOffset, bytes, byteSize);
    Objects.checkFromIndexSize(dstOffset, bytes, dst.byteSize());
    if (dst.isReadOnly()) {
      throw new IllegalArgumentException("dst is read-only");
    }
    long base = address();
    if (bytes == 0) {
      return;
    }
    owner.useDevice();
    for (long done = 0; done < bytes; done += CHUNK_BYTES) {
      long n = Math.min(CHUNK_BYTES, bytes - done);
      Checked.cuda("cudaMemcpy", Cuda.cudaMemcpy(dst.asSlice(dstOffset + done, n),
          MemorySegment.ofAddress(base + srcOffset + done), n, Cuda.MEMCPY_DEVICE_TO_HOST));
    }
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
    owner.forget(this);
    if (owned && address != 0) {
      owner.useDeviceQuietly();
      Checked.cudaFree(address);
    }
  }

  @Override
  public String toString() {
    return (owned ? "NcclMemory" : "NcclMemory(wrapped)") + "[" + byteSize + " bytes at 0x"
        + Long.toHexString(address) + ", rank " + owner.rank() + ", device " + owner.device() + "]";
  }
}
