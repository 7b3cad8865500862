package dev.commplan.runtime;

import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.HostAccessGuard;
import dev.commplan.runtime.guard.InFlightWork;
import java.lang.foreign.MemorySegment;
import java.math.BigInteger;
import java.util.Objects;

/**
 * A typed region of device memory: {@link #length()} elements of {@link #dataType()} starting at {@link
 * #byteOffset()} of one {@link DeviceMemory} block. Subclasses add the host-side element API (get, set,
 * copyFrom/copyTo Java arrays).
 *
 * <p>Host access does not wait for the stream: read results only after {@code stream.synchronize()}, as
 * with NCCL and CUDA. A plan guards its buffers against the mistake (on by default, {@code
 * PlanBuilder.hostAccessGuard}): while work it enqueued that writes a buffer may still be running, a host
 * read of it throws {@link BufferInFlightException}; while work that reads or writes it may still be
 * running, so does a host write. The check is cheap (a few field loads per access) and only covers
 * access through this object's methods, not copies through {@link #memory()} or other views.
 *
 * <p>A buffer made by {@code allocate} owns its memory and frees it on {@link #close()}; a buffer handed
 * out by a plan is a view into the plan's memory and is freed with the plan.
 *
 * <p>Host access checks its arguments: an element index outside {@code [0, length())} throws {@link
 * IndexOutOfBoundsException} naming the index and the length; a whole-array {@code copyFrom}/{@code
 * copyTo} needs an array of exactly {@code length()} elements (the offset/count overloads copy part of
 * one); any access to a buffer whose memory was freed (by its own {@code close()}, its plan's or its
 * communicator's) throws {@link IllegalStateException} naming the buffer.
 */
public abstract sealed class Buffer implements AutoCloseable
    permits NarrowFloatBuffer, F32Buffer, F64Buffer, ByteElementBuffer,
        IntElementBuffer, LongElementBuffer {

  private final DeviceMemory memory;
  private final long byteOffset;
  private final long length;
  private final boolean ownsMemory;
  static {
    Guards.registerBuffers(buffer -> ((Buffer) buffer).hostAccessGuard); // how plans reach it (not public API)
  }

  /** Which in-flight plan work touches this buffer; marked by plans, checked by every host access. */
  private final HostAccessGuard hostAccessGuard = new HostAccessGuard();

  Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    this.memory = Objects.requireNonNull(memory, "memory");
    if (byteOffset < 0 || length < 0 || byteOffset + length * dataType().byteSize() > memory.byteSize()) {
      throw new IllegalArgumentException(
          "a " + dataType() + " buffer of " + length + " elements at byte " + byteOffset
              + " does not fit in a block of " + memory.byteSize() + " bytes");
    }
    int size = dataType().byteSize();
    if (byteOffset % size != 0) {
      throw new IllegalArgumentException("a " + dataType() + " buffer at byte " + byteOffset + ": a buffer starts at a"
          + " multiple of its element size (" + size + " bytes), as GPUs need each element naturally aligned (NCCL's"
          + " kernels read whole elements); view it at byte " + (byteOffset - byteOffset % size) + " or "
          + (byteOffset - byteOffset % size + size));
    }
    this.byteOffset = byteOffset;
    this.length = length;
    this.ownsMemory = ownsMemory;
  }

  /**
   * A view of {@code length} elements of {@code type} at {@code byteOffset} of {@code memory}, of the
   * matching subclass; it does not own the memory. Used by plans and backends.
   *
   * @param type the element type, which picks the subclass
   * @param memory the block to view; its owner keeps owning it
   * @param byteOffset where the view starts in {@code memory}, in bytes
   * @param length the number of elements
   * @return the view, which frees nothing when closed
   * @throws IllegalArgumentException if the view does not fit in {@code memory}, or {@code byteOffset} is not
   *     a multiple of the element size (GPUs need every element naturally aligned)
   */
  public static Buffer view(DataType type, DeviceMemory memory, long byteOffset, long length) {
    return switch (type) {
      case F16 -> new F16Buffer(memory, byteOffset, length, false);
      case BF16 -> new BF16Buffer(memory, byteOffset, length, false);
      case F32 -> new F32Buffer(memory, byteOffset, length, false);
      case F64 -> new F64Buffer(memory, byteOffset, length, false);
      case I8 -> new I8Buffer(memory, byteOffset, length, false);
      case U8 -> new U8Buffer(memory, byteOffset, length, false);
      case I32 -> new I32Buffer(memory, byteOffset, length, false);
      case U32 -> new U32Buffer(memory, byteOffset, length, false);
      case I64 -> new I64Buffer(memory, byteOffset, length, false);
      case U64 -> new U64Buffer(memory, byteOffset, length, false);
      case F8E4M3 -> new F8E4M3Buffer(memory, byteOffset, length, false);
      case F8E5M2 -> new F8E5M2Buffer(memory, byteOffset, length, false);
    };
  }

  /**
   * Allocates an owning buffer of {@code length} zeroed elements of {@code type} on {@code comm}'s device.
   *
   * @param type the element type, which picks the subclass
   * @param comm the communicator whose device holds the memory
   * @param length the number of elements, at least 1
   * @return the new buffer, owned by the caller, who closes it
   * @throws IllegalArgumentException if {@code length < 1}, its byte size does not fit in a long, or the
   *     device cannot hold it (the message says how much was asked for and, where the backend can tell,
   *     how much the device has)
   */
  public static Buffer allocate(DataType type, Communicator comm, long length) {
    if (length < 1) {
      throw new IllegalArgumentException("a " + type + " buffer of " + length + " elements: a buffer has at least one"
          + " element (a collective over nothing has nothing to do)");
    }
    if (length > Long.MAX_VALUE / type.byteSize()) {
      throw new IllegalArgumentException("a " + type + " buffer of " + length + " elements would be "
          + BigInteger.valueOf(length).multiply(BigInteger.valueOf(type.byteSize()))
          + " bytes, more than a long can count (" + Long.MAX_VALUE + ")");
    }
    DeviceMemory memory = DeviceMemory.allocate(comm, length * type.byteSize());
    return switch (type) {
      case F16 -> new F16Buffer(memory, 0, length, true);
      case BF16 -> new BF16Buffer(memory, 0, length, true);
      case F32 -> new F32Buffer(memory, 0, length, true);
      case F64 -> new F64Buffer(memory, 0, length, true);
      case I8 -> new I8Buffer(memory, 0, length, true);
      case U8 -> new U8Buffer(memory, 0, length, true);
      case I32 -> new I32Buffer(memory, 0, length, true);
      case U32 -> new U32Buffer(memory, 0, length, true);
      case I64 -> new I64Buffer(memory, 0, length, true);
      case U64 -> new U64Buffer(memory, 0, length, true);
      case F8E4M3 -> new F8E4M3Buffer(memory, 0, length, true);
      case F8E5M2 -> new F8E5M2Buffer(memory, 0, length, true);
    };
  }

  /** {@return the element type} */
  public abstract DataType dataType();

  /** {@return the number of elements} */
  public final long length() {
    return length;
  }

  /** {@return the size in bytes: {@code length() * dataType().byteSize()}} */
  public final long byteSize() {
    return length * dataType().byteSize();
  }

  /** {@return the memory block this buffer is a region of} */
  public final DeviceMemory memory() {
    return memory;
  }

  /** {@return where this buffer starts in {@link #memory()}, in bytes} */
  public final long byteOffset() {
    return byteOffset;
  }

  /** {@return the communicator whose device holds this buffer} */
  public final Communicator communicator() {
    return memory.owner();
  }

  /**
   * Whether plan work that reads or writes this buffer may still be running: it was enqueued and no
   * {@code synchronize()} of its stream begun after that has returned normally. While it is, host access
   * may throw {@link BufferInFlightException} (see the class comment).
   *
   * @return true while such work may still be running
   */
  public final boolean isInFlight() {
    return hostAccessGuard.isInFlight();
  }

  /** {@return whether this buffer's memory has been freed} */
  public final boolean isClosed() {
    return memory.isClosed();
  }

  /** Frees the memory if this buffer owns it (made by {@code allocate}); a no-op for views. Idempotent. */
  @Override
  public final void close() {
    if (ownsMemory) {
      memory.close();
    }
  }

  // ---- Host-access helpers shared by the typed subclasses (package-private on purpose: the typed API is
  // ---- the public one; these keep the typed subclasses free of copy-pasted bounds and offset logic).

  /** Throws {@link IllegalStateException} naming this buffer if its memory has been freed. */
  final void checkOpen() {
    if (memory.isClosed()) {
      throw new IllegalStateException(this + " is closed: its memory was freed"
          + (ownsMemory ? " (by its close(), or when its communicator closed)"
              : " (it is a view, of a plan's memory or of another buffer's: that plan, buffer or communicator"
                  + " was closed)"));
    }
  }

  /**
   * For single-element access: the buffer must be open ({@link IllegalStateException}) and the index in
   * range ({@link IndexOutOfBoundsException} naming the index and the length).
   */
  final void checkElement(long index) {
    checkOpen();
    if (index < 0 || index >= length) {
      throw new IndexOutOfBoundsException(
          "index " + index + " is out of range for " + getClass().getSimpleName() + " of length " + length);
    }
  }

  /** For whole-array copies: the array must have exactly {@link #length()} elements. */
  final void checkWholeArray(String method, int arrayLength) {
    checkOpen();
    if (arrayLength != length) {
      throw new IllegalArgumentException(
          method + ": the array has " + arrayLength + " elements but " + getClass().getSimpleName()
              + " has " + length + "; they must match (use the overload taking an index, an array offset"
              + " and a count to copy part of either)");
    }
  }

  /**
   * For partial copies: {@code count} elements from buffer index {@code index} and array index {@code
   * arrayOffset} must lie within both.
   */
  final void checkRange(String method, long index, int arrayLength, int arrayOffset, int count) {
    checkOpen();
    if (count < 0) {
      throw new IllegalArgumentException(method + ": count must be >= 0, was " + count);
    }
    if (arrayOffset < 0 || arrayOffset > arrayLength - count) {
      throw new IndexOutOfBoundsException(
          method + ": array range [" + arrayOffset + ", " + ((long) arrayOffset + count)
              + ") is out of bounds for an array of " + arrayLength + " elements");
    }
    if (index < 0 || index > length - count) {
      throw new IndexOutOfBoundsException(
          method + ": buffer range [" + index + ", " + (index + count) + ") is out of bounds for "
              + getClass().getSimpleName() + " of length " + length);
    }
  }

  /** {@link #length()} as a Java array size, for {@code toArray}. */
  final int lengthAsArraySize() {
    checkOpen();
    if (length > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException(
          this + " has " + length + " elements, too many for one Java array; copy it in parts with copyTo");
    }
    return (int) length;
  }

  /** Copies {@code count} elements from {@code host} (starting at element {@code hostIndex}) to element {@code index}. */
  final void writeElements(long index, MemorySegment host, long hostIndex, long count) {
    checkOpen();
    checkHostWrite();
    int size = dataType().byteSize();
    memory.copyFromHost(host, hostIndex * size, byteOffset + index * size, count * size);
  }

  /** Copies {@code count} elements from element {@code index} into {@code host} at element {@code hostIndex}. */
  final void readElements(long index, MemorySegment host, long hostIndex, long count) {
    checkOpen();
    InFlightWork writer = hostAccessGuard.pendingWriter();
    if (writer != null) {
      throw BufferInFlightException.of(this, writer, hostAccessGuard.writerField(), false, true);
    }
    int size = dataType().byteSize();
    memory.copyToHost(byteOffset + index * size, host, hostIndex * size, count * size);
  }

  /**
   * Fills the whole buffer with copies of {@code pattern}, a host segment holding {@code patternElements}
   * elements that all have the fill value (repeated by the memory, so a large buffer needs no large array).
   */
  final void fillWith(MemorySegment pattern, int patternElements) {
    checkOpen();
    checkHostWrite();
    int size = dataType().byteSize();
    memory.fill(byteOffset, length * size, pattern.asSlice(0, (long) patternElements * size));
  }

  /** A host write must wait for work that writes or reads the buffer (the guard, see the class comment). */
  private void checkHostWrite() {
    InFlightWork writer = hostAccessGuard.pendingWriter();
    if (writer != null) {
      throw BufferInFlightException.of(this, writer, hostAccessGuard.writerField(), true, true);
    }
    InFlightWork reader = hostAccessGuard.pendingReader();
    if (reader != null) {
      throw BufferInFlightException.of(this, reader, hostAccessGuard.readerField(), true, false);
    }
  }

  /** Elements in the host-side pattern {@code fill} copies: enough to be fast, small enough to be cheap. */
  static int fillPatternElements(long length) {
    return (int) Math.min(length, 1 << 14);
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[length=" + length + ", backend=" + memory.owner().backendName()
        + ", rank=" + memory.owner().rank() + "]";
  }
}
