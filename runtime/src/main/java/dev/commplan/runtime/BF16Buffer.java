package dev.commplan.runtime;


/**
 * A buffer of {@code ncclBfloat16} elements (BF16OC).
 *
 * <p>The host API speaks {@code float}: writing rounds to the nearest representable value (ties to even),
 * reading widens exactly. {@link #getBits}, {@link #setBits}, {@link #copyFromBits} and {@link
 * #copyToBits} give the raw 16-bit patterns; {@link #toBits} and {@link #fromBits} convert.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class BF16Buffer extends HalfPrecisionBuffer {
  BF16Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
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
  public static BF16Buffer allocate(Communicator comm, long length) {
    return (BF16Buffer) Buffer.allocate(DataType.BF16, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.BF16;
  }

  /**
   * The 16-bit pattern nearest to {@code value} (round to nearest, ties to even).
   *
   * @param value the value to round
   * @return the 16-bit pattern
   */
  public static short toBits(float value) {
    int bits = Float.floatToRawIntBits(value);
    if (Float.isNaN(value)) {
      // Truncating could turn a NaN whose payload sits in the low half into an infinity; keep it a quiet NaN.
      return (short) ((bits >>> 16) | 0x0040);
    }
    // Round to nearest, ties to even: add just under half an ulp of the result, plus one if the kept part is
    // odd, then truncate. Carries propagate into the exponent, so the largest values round to infinity.
    int keptLowestBit = (bits >>> 16) & 1;
    return (short) ((bits + 0x7FFF + keptLowestBit) >>> 16);
  }

  /**
   * The value of a 16-bit pattern, widened exactly to {@code float}.
   *
   * @param bits the raw 16-bit pattern
   * @return the value, exactly
   */
  public static float fromBits(short bits) {
    // bfloat16 is exactly the top 16 bits of a binary32, so widening is exact.
    return Float.intBitsToFloat((bits & 0xFFFF) << 16);
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
