package dev.commplan.runtime;


/**
 * A buffer of {@code ncclUint32} elements (U32OC), one Java {@code int} each.
 *
 * <p>Elements are Java {@code int}s holding the unsigned bit pattern; use {@link #getUnsigned} and {@link
 * #setUnsigned} to work with the unsigned value.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class U32Buffer extends IntElementBuffer {
  U32Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
  }

  /**
   * Allocates {@code length} zeroed elements on {@code comm}'s device; the buffer owns them and frees them on
   * close.
   *
   * @param comm the communicator whose device holds the memory
   * @param length the number of elements, at least 1
   * @return the new buffer, owned by the caller, who closes it
   */
  public static U32Buffer allocate(Communicator comm, long length) {
    return (U32Buffer) Buffer.allocate(DataType.U32, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.U32;
  }

  /**
   * The element at {@code index} as an unsigned value in {@code [0, 2^32 - 1]}.
   *
   * @param index the element index, in {@code [0, length())}
   * @return the element's unsigned value
   * @throws IndexOutOfBoundsException if {@code index} is outside {@code [0, length())}
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public long getUnsigned(long index) {
    return Integer.toUnsignedLong(get(index));
  }

  /**
   * Sets the element at {@code index} from an unsigned value.
   *
   * @param index the element index, in {@code [0, length())}
   * @param value the unsigned value
   * @throws IllegalArgumentException if {@code value} is outside {@code [0, 2^32 - 1]}
   * @throws IndexOutOfBoundsException if {@code index} is outside {@code [0, length())}
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void setUnsigned(long index, long value) {
    if (value < 0 || value > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException("a U32 element holds 0..4294967295, not " + value);
    }
    set(index, (int) value);
  }
}
