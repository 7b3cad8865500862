package dev.commplan.runtime.nccl.memory;

import java.lang.foreign.MemorySegment;

/**
 * One rank's host↔device copies (a buffer's writes and reads, the zeroing of a new allocation), each
 * finished on the device before the method returns. Every backend's {@code DeviceMemory} promises that
 * (docs/dsl.md, "Ordering of host access and collectives"); this class is how the NCCL backend keeps it.
 *
 * <p><b>Why.</b> CUDA's "API synchronization behavior": a {@code cudaMemcpy} from pageable host memory
 * to the device "will return once the pageable buffer has been copied to the staging memory for DMA
 * transfer to device memory, but the DMA to final destination may not have completed", and the
 * synchronous {@code cudaMemset} is asynchronous with respect to the host. Both run on the legacy default
 * stream, and work in a stream made with {@code cudaStreamNonBlocking}, as the communicator's is, "may
 * run concurrently with work in stream 0 (the NULL stream)", with "no implicit synchronization" between
 * them ({@code cudaStreamCreateWithFlags}). So a collective enqueued right after a host write could read
 * the bytes from before it; on an H200 it did, in 38 of 100 trials at 4 MiB.
 *
 * <p><b>The rule.</b> Every copy and memset goes on this rank's own copy stream (non-blocking, used for
 * nothing else), and each method ends with {@code cudaStreamSynchronize} of it, which "blocks until
 * stream has completed all operations". When a write returns, device memory holds the new bytes, so a
 * collective enqueued after it on any stream (the communicator's, a wrapped one, the legacy stream) reads
 * them. A read copies device to host and also waits for the copy stream, so it returns the bytes that
 * every collective finished before it (synchronize the collective's stream first) wrote. The cost, one
 * stream synchronize per host access, is paid by host access, never by {@code execute}.
 *
 * <p><b>Chunks.</b> The copies are linked {@code critical(true)}, which lets a heap segment (the Java
 * array behind {@code copyFrom}/{@code copyTo}) go straight to C: a native staging buffer would cost a
 * second host copy and an allocation per copy, on top of the staging CUDA already does for pageable
 * memory. The price is that the garbage collector waits while a call runs, so copies go in chunks of
 * {@value #CHUNK_BYTES} bytes and the JVM reaches a safepoint between them. For pageable memory {@code
 * cudaMemcpyAsync} stages the bytes before it returns, so the array is not read after the call.
 *
 * <p>Used by one thread at a time, like the communicator (two threads would still be correct: each
 * synchronize waits for both threads' copies).
 */
public final class HostCopies {
  /** The most bytes one copy call moves. */
  public static final long CHUNK_BYTES = 16L << 20;

  private final CopyDevice cuda;
  private final int device;
  private final long stream;
  private final long chunkBytes;

  /**
   * @param stream a {@code cudaStream_t} of {@code device} that only these copies use; not owned here
   */
  public HostCopies(CopyDevice cuda, int device, long stream) {
    this(cuda, device, stream, CHUNK_BYTES);
  }

  /** With another chunk size, for tests of the chunk boundaries. */
  HostCopies(CopyDevice cuda, int device, long stream, long chunkBytes) {
    if (chunkBytes <= 0) {
      throw new IllegalArgumentException("chunkBytes must be > 0, was " + chunkBytes);
    }
    this.cuda = cuda;
    this.device = device;
    this.stream = stream;
    this.chunkBytes = chunkBytes;
  }

  /** The device whose memory these copies address. */
  int device() {
    return device;
  }

  /** Copies {@code bytes} of host memory {@code src} from {@code srcOffset} to device address {@code dst}; done on return. */
  void write(long dst, MemorySegment src, long srcOffset, long bytes) {
    if (bytes == 0) {
      return;
    }
    cuda.setDevice(device);
    try {
      for (long done = 0; done < bytes; done += chunkBytes) {
        long n = Math.min(chunkBytes, bytes - done);
        cuda.copyToDevice(dst + done, part(src, srcOffset + done, n), n, stream);
      }
    } catch (RuntimeException e) {
      throw drained(e);
    }
    cuda.synchronize(stream);
  }

  /**
   * {@code n} bytes of {@code host} from {@code offset}: the segment itself when that is all of it, so that a
   * copy of a whole array (the agreement check's, every few dozen calls) makes no slice object.
   */
  private static MemorySegment part(MemorySegment host, long offset, long n) {
    return offset == 0 && n == host.byteSize() ? host : host.asSlice(offset, n);
  }

  /** Copies {@code bytes} from device address {@code src} into host memory {@code dst} at {@code dstOffset}; done on return. */
  void read(long src, MemorySegment dst, long dstOffset, long bytes) {
    if (bytes == 0) {
      return;
    }
    cuda.setDevice(device);
    try {
      for (long done = 0; done < bytes; done += chunkBytes) {
        long n = Math.min(chunkBytes, bytes - done);
        cuda.copyToHost(part(dst, dstOffset + done, n), src + done, n, stream);
      }
    } catch (RuntimeException e) {
      throw drained(e);
    }
    cuda.synchronize(stream); // to pinned host memory the copy is asynchronous: wait for it either way
  }

  /**
   * Fills {@code bytes} of device memory at {@code dst} with repeated copies of the host {@code pattern};
   * done on return. The pattern crosses once; the device then doubles what it holds (stream order makes
   * each device-to-device copy read the bytes the one before it wrote), so a large fill costs a few
   * calls and one synchronize, not one host copy per pattern.
   */
  void fill(long dst, MemorySegment pattern, long bytes) {
    if (bytes == 0) {
      return;
    }
    cuda.setDevice(device);
    try {
      long first = Math.min(pattern.byteSize(), bytes);
      for (long done = 0; done < first; done += chunkBytes) {
        long n = Math.min(chunkBytes, first - done);
        cuda.copyToDevice(dst + done, pattern.asSlice(done, n), n, stream);
      }
      for (long filled = first; filled < bytes; ) {
        long n = Math.min(filled, bytes - filled);
        cuda.copyOnDevice(dst + filled, dst, n, stream);
        filled += n;
      }
    } catch (RuntimeException e) {
      throw drained(e);
    }
    cuda.synchronize(stream);
  }

  /** Sets {@code bytes} of device memory at {@code dst} to zero; done on return. */
  void zero(long dst, long bytes) {
    if (bytes == 0) {
      return;
    }
    cuda.setDevice(device);
    try {
      cuda.memset(dst, 0, bytes, stream);
    } catch (RuntimeException e) {
      throw drained(e);
    }
    cuda.synchronize(stream);
  }

  /**
   * After a failed call: waits for the chunks enqueued before it, so that nothing of this method is still
   * in flight when it throws, as when it returns.
   */
  private RuntimeException drained(RuntimeException failure) {
    try {
      cuda.synchronize(stream);
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
    return failure;
  }

  @Override
  public String toString() {
    return "HostCopies[device " + device + ", stream 0x" + Long.toHexString(stream) + "]";
  }
}
