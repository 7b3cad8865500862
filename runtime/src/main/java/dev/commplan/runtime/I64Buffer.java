package dev.commplan.runtime;


/**
 * A buffer of {@code ncclInt64} elements (I64OC), one Java {@code long} each.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class I64Buffer extends LongElementBuffer {
  I64Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
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
  public static I64Buffer allocate(Communicator comm, long length) {
    return (I64Buffer) Buffer.allocate(DataType.I64, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.I64;
  }
}
