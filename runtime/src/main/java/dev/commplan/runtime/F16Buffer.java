package dev.commplan.runtime;


/**
 * A buffer of {@code ncclFloat16} elements (F16OC).
 *
 * <p>The host API speaks {@code float}: writing rounds to the nearest representable value (ties to even),
 * reading widens exactly. {@link #getBits}, {@link #setBits}, {@link #copyFromBits} and {@link
 * #copyToBits} give the raw 16-bit patterns; {@link #toBits} and {@link #fromBits} convert.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class F16Buffer extends HalfPrecisionBuffer {
  F16Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
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
  public static F16Buffer allocate(Communicator comm, long length) {
    return (F16Buffer) Buffer.allocate(DataType.F16, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.F16;
  }

  /**
   * The 16-bit pattern nearest to {@code value} (round to nearest, ties to even).
   *
   * @param value the value to round
   * @return the 16-bit pattern
   */
  public static short toBits(float value) {
    // Float.floatToFloat16 rounds to nearest, ties to even, and keeps NaN, infinities and signed zeros.
    return Float.floatToFloat16(value);
  }

  /**
   * The value of a 16-bit pattern, widened exactly to {@code float}.
   *
   * @param bits the raw 16-bit pattern
   * @return the value, exactly
   */
  public static float fromBits(short bits) {
    return Float.float16ToFloat(bits);
  }

  @Override
  short encode(float value) {
    return toBits(value);
  }

  @Override
  float decode(short bits) {
    return fromBits(bits);
  }
}
