package dev.commplan.runtime;

import dev.commplan.runtime.spi.DeviceMemory;
import java.util.Objects;

/**
 * A typed region of device memory: {@link #length()} elements of {@link #dataType()} starting at {@link
 * #byteOffset()} of one {@link DeviceMemory} block. Subclasses add the host-side element API (get, set,
 * copyFrom/copyTo Java arrays).
 *
 * <p>Host access does not wait for the stream: read results only after {@code stream.synchronize()}, as
 * with NCCL and CUDA.
 *
 * <p>A buffer made by {@code allocate} owns its memory and frees it on {@link #close()}; a buffer handed
 * out by a plan is a view into the plan's memory and is freed with the plan.
 */
public abstract sealed class Buffer implements AutoCloseable
    permits F16Buffer, BF16Buffer, F32Buffer, F64Buffer, I8Buffer, U8Buffer, I32Buffer, U32Buffer,
        I64Buffer, U64Buffer {

  private final DeviceMemory memory;
  private final long byteOffset;
  private final long length;
  private final boolean ownsMemory;

  Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    this.memory = Objects.requireNonNull(memory, "memory");
    if (byteOffset < 0 || length < 0 || byteOffset + length * dataType().byteSize() > memory.byteSize()) {
      throw new IllegalArgumentException(
          "a " + dataType() + " buffer of " + length + " elements at byte " + byteOffset
              + " does not fit in a block of " + memory.byteSize() + " bytes");
    }
    this.byteOffset = byteOffset;
    this.length = length;
    this.ownsMemory = ownsMemory;
  }

  /**
   * A view of {@code length} elements of {@code type} at {@code byteOffset} of {@code memory}, of the
   * matching subclass; it does not own the memory. Used by plans and backends.
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
    };
  }

  /** Allocates an owning buffer of {@code length} zeroed elements of {@code type} on {@code comm}'s device. */
  public static Buffer allocate(DataType type, Communicator comm, long length) {
    if (length < 0) {
      throw new IllegalArgumentException("length must be >= 0, was " + length);
    }
    DeviceMemory memory = comm.allocate(Math.multiplyExact(length, (long) type.byteSize()));
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
    };
  }

  /** The element type. */
  public abstract DataType dataType();

  /** Number of elements. */
  public final long length() {
    return length;
  }

  /** Size in bytes: {@code length() * dataType().byteSize()}. */
  public final long byteSize() {
    return length * dataType().byteSize();
  }

  /** The memory block this buffer is a region of. */
  public final DeviceMemory memory() {
    return memory;
  }

  /** Where this buffer starts in {@link #memory()}, in bytes. */
  public final long byteOffset() {
    return byteOffset;
  }

  /** The communicator whose device holds this buffer. */
  public final Communicator communicator() {
    return memory.owner();
  }

  /** Whether this buffer's memory has been freed. */
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

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[length=" + length + ", backend=" + memory.owner().backendName()
        + ", rank=" + memory.owner().rank() + "]";
  }
}
