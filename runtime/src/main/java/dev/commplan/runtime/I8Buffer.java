package dev.commplan.runtime;


/**
 * A buffer of {@code ncclInt8} elements (I8OC), one Java {@code byte} each.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class I8Buffer extends ByteElementBuffer {
  I8Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
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
  public static I8Buffer allocate(Communicator comm, long length) {
    return (I8Buffer) Buffer.allocate(DataType.I8, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.I8;
  }
}
