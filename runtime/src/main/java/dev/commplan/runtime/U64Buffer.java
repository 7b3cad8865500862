package dev.commplan.runtime;


/**
 * A buffer of {@code ncclUint64} elements (U64OC), one Java {@code long} each.
 *
 * <p>Elements are Java {@code long}s holding the unsigned bit pattern; read them with {@link
 * Long#toUnsignedString(long)}, compare them with {@link Long#compareUnsigned(long, long)}.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class U64Buffer extends LongElementBuffer {
  U64Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
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
  public static U64Buffer allocate(Communicator comm, long length) {
    return (U64Buffer) Buffer.allocate(DataType.U64, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.U64;
  }
}
