package dev.commplan.runtime;


/**
 * A buffer of {@code ncclUint8} elements (U8OC), one Java {@code byte} each.
 *
 * <p>Elements are Java {@code byte}s holding the unsigned bit pattern ({@code (byte) 200} is 200); use
 * {@link #getUnsigned} and {@link #setUnsigned} to work with the unsigned value.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class U8Buffer extends ByteElementBuffer {
  U8Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
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
  public static U8Buffer allocate(Communicator comm, long length) {
    return (U8Buffer) Buffer.allocate(DataType.U8, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.U8;
  }

  /**
   * The element at {@code index} as an unsigned value in {@code [0, 255]}.
   *
   * @param index the element index, in {@code [0, length())}
   * @return the element's unsigned value
   * @throws IndexOutOfBoundsException if {@code index} is outside {@code [0, length())}
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public int getUnsigned(long index) {
    return Byte.toUnsignedInt(get(index));
  }

  /**
   * Sets the element at {@code index} from an unsigned value.
   *
   * @param index the element index, in {@code [0, length())}
   * @param value the unsigned value
   * @throws IllegalArgumentException if {@code value} is outside {@code [0, 255]}
   * @throws IndexOutOfBoundsException if {@code index} is outside {@code [0, length())}
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void setUnsigned(long index, int value) {
    if (value < 0 || value > 0xFF) {
      throw new IllegalArgumentException("a U8 element holds 0..255, not " + value);
    }
    set(index, (byte) value);
  }
}
