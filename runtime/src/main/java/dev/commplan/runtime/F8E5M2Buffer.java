package dev.commplan.runtime;

/**
 * A buffer of {@code ncclFloat8e5m2} elements (OCP FP8 E5M2: 5 exponent bits (bias 15) and 2 mantissa
 * bits, IEEE-like: infinities and NaNs, the largest finite value is 57344, and a value that rounds beyond
 * it becomes ±infinity ({@link #toBitsSaturated} gives ±57344 instead)). NCCL 2.24 and later; on an older
 * NCCL, building a plan that uses it fails with a {@link PlanBuildException}.
 *
 * <p>The host API speaks {@code float}, as {@link F16Buffer} and {@link BF16Buffer} do: writing rounds
 * to the nearest representable value (ties to even), reading widens exactly. {@link #getBits}, {@link
 * #setBits}, {@link #copyFromBits} and {@link #copyToBits} give the raw 8-bit patterns; {@link #toBits}
 * and {@link #fromBits} convert.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class F8E5M2Buffer extends EightBitFloatBuffer {
  F8E5M2Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
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
  public static F8E5M2Buffer allocate(Communicator comm, long length) {
    return (F8E5M2Buffer) Buffer.allocate(DataType.F8E5M2, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.F8E5M2;
  }

  /**
   * The 8-bit pattern nearest to {@code value} (round to nearest, ties to even, subnormals included); NaN
   * gives {@code 0x7F}, and a value beyond the largest finite one overflows (see the class comment).
   *
   * @param value the value to round
   * @return the 8-bit pattern
   */
  public static byte toBits(float value) {
    return Float8.encode(value, true, false);
  }

  /**
   * Like {@link #toBits}, but a value beyond the largest finite one, infinities included, becomes the
   * largest finite value of its sign (CUDA's {@code __NV_SATFINITE}, which NCCL's fp8 arithmetic uses); NaN
   * stays NaN.
   *
   * @param value the value to round
   * @return the 8-bit pattern, finite unless {@code value} is NaN
   */
  public static byte toBitsSaturated(float value) {
    return Float8.encode(value, true, true);
  }

  /**
   * The value of an 8-bit pattern, widened exactly to {@code float}.
   *
   * @param bits the raw 8-bit pattern
   * @return the value, exactly
   */
  public static float fromBits(byte bits) {
    return Float8.decode(bits, true);
  }
}
