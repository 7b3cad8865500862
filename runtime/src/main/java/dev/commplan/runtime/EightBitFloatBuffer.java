package dev.commplan.runtime;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * The two 8-bit floating-point buffers, {@link F8E4M3Buffer} and {@link F8E5M2Buffer}, which differ only
 * in their format: everything but their static conversions ({@code toBits}, {@code toBitsSaturated},
 * {@code fromBits}) and {@code allocate} is here, as {@link HalfPrecisionBuffer} is for the 16-bit ones:
 * single elements and {@code fill} as {@code float} (writing rounds to nearest, ties to even; reading
 * widens exactly) and the raw 8-bit patterns; {@code float} arrays come from {@link NarrowFloatBuffer}.
 * Package-private: users see the public subclasses, which inherit these methods.
 */
abstract sealed class EightBitFloatBuffer extends NarrowFloatBuffer permits F8E4M3Buffer, F8E5M2Buffer {
  /** The format, as {@link Float8} takes it: E5M2, or else E4M3 (the subclass's {@link #dataType()}). */
  private final boolean e5m2;

  EightBitFloatBuffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
    this.e5m2 = dataType() == DataType.F8E5M2; // a constant of the subclass, as Buffer's constructor reads it too
  }

  /** The 8-bit pattern nearest to {@code value}: the subclass's {@code toBits}. */
  final byte encode(float value) {
    return Float8.encode(value, e5m2, false);
  }

  /** The value of a 8-bit pattern, widened exactly: the subclass's {@code fromBits}. */
  final float decode(byte bits) {
    return Float8.decode(bits, e5m2);
  }

  /**
   * The element at {@code index}, widened to {@code float}.
   *
   * @param index the element index, in {@code [0, length())}
   * @return the element's value, widened exactly
   * @throws IndexOutOfBoundsException if {@code index} is outside {@code [0, length())}
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public float get(long index) {
    return decode(getBits(index));
  }

  /**
   * Sets the element at {@code index} to the value nearest {@code value}.
   *
   * @param index the element index, in {@code [0, length())}
   * @param value the new value, rounded to the nearest representable one
   * @throws IndexOutOfBoundsException if {@code index} is outside {@code [0, length())}
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void set(long index, float value) {
    setBits(index, encode(value));
  }

  /**
   * The raw 8-bit pattern of the element at {@code index}.
   *
   * @param index the element index, in {@code [0, length())}
   * @return the element's raw 8-bit pattern
   * @throws IndexOutOfBoundsException if {@code index} is outside {@code [0, length())}
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public byte getBits(long index) {
    checkElement(index);
    byte[] element = new byte[1];
    readElements(index, MemorySegment.ofArray(element), 0, 1);
    return element[0];
  }

  /**
   * Sets the raw 8-bit pattern of the element at {@code index}.
   *
   * @param index the element index, in {@code [0, length())}
   * @param bits the raw 8-bit pattern
   * @throws IndexOutOfBoundsException if {@code index} is outside {@code [0, length())}
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void setBits(long index, byte bits) {
    checkElement(index);
    writeElements(index, MemorySegment.ofArray(new byte[] {bits}), 0, 1);
  }

  /**
   * Copies the raw patterns of {@code src} into this buffer; {@code src.length} must equal {@link #length()}.
   *
   * @param src the host array to copy; exactly {@link #length()} elements, as raw patterns
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void copyFromBits(byte[] src) {
    checkWholeArray("copyFromBits", src.length);
    writeElements(0, MemorySegment.ofArray(src), 0, src.length);
  }

  /**
   * Copies {@code count} raw patterns of {@code src}, from {@code srcOffset}, to this buffer from
   * {@code index}.
   *
   * @param index the first element of this buffer to write
   * @param src the host array to copy from, as raw patterns
   * @param srcOffset the first element of {@code src} to copy
   * @param count the number of elements to copy
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void copyFromBits(long index, byte[] src, int srcOffset, int count) {
    checkRange("copyFromBits", index, src.length, srcOffset, count);
    writeElements(index, MemorySegment.ofArray(src), srcOffset, count);
  }

  /**
   * Copies the raw patterns of this whole buffer into {@code dst}; {@code dst.length} must equal
   * {@link #length()}.
   *
   * @param dst the host array to fill; exactly {@link #length()} elements
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public void copyToBits(byte[] dst) {
    checkWholeArray("copyToBits", dst.length);
    readElements(0, MemorySegment.ofArray(dst), 0, dst.length);
  }

  /**
   * Copies {@code count} raw patterns from {@code index} into {@code dst} from {@code dstOffset}.
   *
   * @param index the first element of this buffer to read
   * @param dst the host array to copy into
   * @param dstOffset where in {@code dst} the first element goes
   * @param count the number of elements to copy
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public void copyToBits(long index, byte[] dst, int dstOffset, int count) {
    checkRange("copyToBits", index, dst.length, dstOffset, count);
    readElements(index, MemorySegment.ofArray(dst), dstOffset, count);
  }

  /**
   * A new array holding every element's raw pattern.
   *
   * @return a new array of {@link #length()} raw patterns
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public byte[] toBitsArray() {
    byte[] result = new byte[lengthAsArraySize()];
    readElements(0, MemorySegment.ofArray(result), 0, result.length);
    return result;
  }

  /**
   * Sets every element to the value nearest {@code value}.
   *
   * @param value the value every element gets
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void fill(float value) {
    byte[] pattern = new byte[fillPatternElements(length())];
    Arrays.fill(pattern, encode(value));
    fillWith(MemorySegment.ofArray(pattern), pattern.length);
  }

  @Override
  MemorySegment newChunk(int elements) {
    return MemorySegment.ofArray(new byte[elements]);
  }

  @Override
  void encodeChunk(float[] src, int srcOffset, MemorySegment chunk, int count) {
    for (int i = 0; i < count; i++) {
      chunk.setAtIndex(ValueLayout.JAVA_BYTE, i, encode(src[srcOffset + i]));
    }
  }

  @Override
  void decodeChunk(MemorySegment chunk, int count, float[] dst, int dstOffset) {
    for (int i = 0; i < count; i++) {
      dst[dstOffset + i] = decode(chunk.getAtIndex(ValueLayout.JAVA_BYTE, i));
    }
  }
}
