package dev.commplan.runtime;


/**
 * A buffer of {@code ncclInt32} elements (I32OC), one Java {@code int} each.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class I32Buffer extends IntElementBuffer {
  I32Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
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
  public static I32Buffer allocate(Communicator comm, long length) {
    return (I32Buffer) Buffer.allocate(DataType.I32, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.I32;
  }
}
