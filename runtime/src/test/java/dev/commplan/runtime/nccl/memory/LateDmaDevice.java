package dev.commplan.runtime.nccl.memory;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.commplan.runtime.nccl.CudaException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * A model of one GPU's memory and streams, as CUDA's "API synchronization behavior" and "Stream
 * synchronization behavior" pages describe them, with every asynchronous operation as late as those
 * pages allow (the way NCCL's own tests model asynchrony: make the legal worst case the only case).
 *
 * <ul>
 *   <li>A copy from (pageable) host memory is staged at the call, then waits in its stream's queue: the
 *       device memory changes only when something waits for that stream ({@link #synchronize}, or a
 *       later copy to the host on the same stream, which runs in stream order).
 *   <li>A memset, and a device-to-device copy, wait in their stream's queue the same way (the copy reads
 *       its source when it runs, after what was queued before it).
 *   <li>A copy to the host "returns only once the copy has completed", after the work before it in its
 *       stream.
 *   <li>A collective enqueued on another non-blocking stream starts at once and reads device memory as it
 *       is then ({@link #collectiveReads}): nothing orders it after other streams' queued work.
 *   <li>Stream 0 is the legacy default stream; {@link #legacyMemcpyToDevice} is what the NCCL backend
 *       called before issue 15 ({@code cudaMemcpy}): it waits for stream 0, stages the bytes, queues the
 *       DMA on stream 0 and returns before it has landed.
 * </ul>
 *
 * Device addresses are {@link #BASE} plus an offset into a heap array.
 */
final class LateDmaDevice implements CopyDevice {
  static final long BASE = 0x7f00_0000_0000L;

  private final byte[] memory;
  private final Map<Long, ArrayDeque<Runnable>> queues = new HashMap<>();
  private int current = -1;
  private final int device;
  /** Calls still to go before {@link #copyToDevice} fails once (for the failure path); -1: never. */
  int failCopyAfter = -1;

  LateDmaDevice(int device, int bytes) {
    this.device = device;
    this.memory = new byte[bytes];
  }

  /** What the device memory holds now, as a kernel running now would see it. */
  byte[] collectiveReads(long address, int bytes) {
    byte[] out = new byte[bytes];
    System.arraycopy(memory, offset(address, bytes), out, 0, bytes);
    return out;
  }

  /** A kernel writes device memory now (the result of a collective that has finished). */
  void collectiveWrites(long address, byte[] bytes) {
    System.arraycopy(bytes, 0, memory, offset(address, bytes.length), bytes.length);
  }

  /** Operations queued on {@code stream} that have not reached device memory. */
  int pending(long stream) {
    ArrayDeque<Runnable> q = queues.get(stream);
    return q == null ? 0 : q.size();
  }

  /** {@code cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice)} from pageable memory, as CUDA allows it. */
  void legacyMemcpyToDevice(long dst, MemorySegment src, long bytes) {
    drain(0);
    queue(0, staged(dst, src, bytes));
  }

  @Override
  public void setDevice(int device) {
    current = device;
  }

  @Override
  public void copyToDevice(long dst, MemorySegment src, long bytes, long stream) {
    checkDevice();
    if (failCopyAfter == 0) {
      failCopyAfter = -1;
      throw new CudaException("cudaMemcpyAsync (host to device)", 700, "cudaErrorIllegalAddress", "modelled failure");
    }
    if (failCopyAfter > 0) {
      failCopyAfter--;
    }
    queue(stream, staged(dst, src, bytes));
  }

  @Override
  public void copyToHost(MemorySegment dst, long src, long bytes, long stream) {
    checkDevice();
    drain(stream); // stream order: the work queued before it comes first
    int from = offset(src, bytes);
    MemorySegment.copy(MemorySegment.ofArray(memory), JAVA_BYTE, from, dst, JAVA_BYTE, 0, bytes);
  }

  @Override
  public void copyOnDevice(long dst, long src, long bytes, long stream) {
    checkDevice();
    int to = offset(dst, bytes);
    int from = offset(src, bytes);
    queue(stream, () -> System.arraycopy(memory, from, memory, to, (int) bytes)); // reads memory when it runs
  }

  @Override
  public void memset(long dst, int value, long bytes, long stream) {
    checkDevice();
    int from = offset(dst, bytes);
    queue(stream, () -> java.util.Arrays.fill(memory, from, from + (int) bytes, (byte) value));
  }

  @Override
  public void synchronize(long stream) {
    drain(stream);
  }

  private Runnable staged(long dst, MemorySegment src, long bytes) {
    byte[] staging = src.asSlice(0, bytes).toArray(JAVA_BYTE); // pageable memory is staged before the call returns
    int to = offset(dst, bytes);
    return () -> System.arraycopy(staging, 0, memory, to, staging.length);
  }

  private void queue(long stream, Runnable dma) {
    queues.computeIfAbsent(stream, s -> new ArrayDeque<>()).addLast(dma);
  }

  private void drain(long stream) {
    ArrayDeque<Runnable> q = queues.get(stream);
    while (q != null && !q.isEmpty()) {
      q.removeFirst().run();
    }
  }

  private void checkDevice() {
    if (current != device) {
      throw new AssertionError("a copy was issued with device " + current + " current, not " + device);
    }
  }

  private int offset(long address, long bytes) {
    long offset = address - BASE;
    if (offset < 0 || bytes < 0 || offset + bytes > memory.length) {
      throw new AssertionError("bytes [" + offset + ", " + (offset + bytes) + ") are outside the model's "
          + memory.length + " bytes of device memory");
    }
    return (int) offset;
  }
}
