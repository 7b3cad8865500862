package dev.commplan.runtime;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The host API shared by the two 8-bit floating-point buffers, {@link F8E4M3Buffer} and {@link
 * F8E5M2Buffer}, as {@link HalfPrecisionBuffer} is for the 16-bit ones: it speaks {@code float} (writing
 * rounds to nearest, ties to even; reading widens exactly) and offers the raw 8-bit patterns. The
 * subclasses supply only the conversion ({@link #encode}, {@link #decode}). Package-private: users see the
 * public subclasses, which inherit these methods.
 */
abstract sealed class EightBitFloatBuffer extends Buffer permits F8E4M3Buffer, F8E5M2Buffer {
  /** Elements converted per host-side chunk, so bulk copies need no second full-size array. */
  private static final int CONVERSION_CHUNK = 1 << 14;

  EightBitFloatBuffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
  }

  /** The 8-bit pattern nearest to {@code value}: the subclass's {@code toBits}. */
  abstract byte encode(float value);

  /** The value of a 8-bit pattern, widened exactly: the subclass's {@code fromBits}. */
  abstract float decode(byte bits);

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
   * Copies all of {@code src}, rounded, into this buffer; {@code src.length} must equal {@link #length()}.
   *
   * @param src the host array to copy; exactly {@link #length()} elements
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void copyFrom(float[] src) {
    checkWholeArray("copyFrom", src.length);
    writeConverted(0, src, 0, src.length);
  }

  /**
   * Copies {@code count} elements of {@code src}, from {@code srcOffset}, rounded, to this buffer from
   * {@code index}.
   *
   * @param index the first element of this buffer to write
   * @param src the host array to copy from
   * @param srcOffset the first element of {@code src} to copy
   * @param count the number of elements to copy
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void copyFrom(long index, float[] src, int srcOffset, int count) {
    checkRange("copyFrom", index, src.length, srcOffset, count);
    writeConverted(index, src, srcOffset, count);
  }

  /**
   * Copies this whole buffer, widened, into {@code dst}; {@code dst.length} must equal {@link #length()}.
   *
   * @param dst the host array to fill; exactly {@link #length()} elements
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public void copyTo(float[] dst) {
    checkWholeArray("copyTo", dst.length);
    readConverted(0, dst, 0, dst.length);
  }

  /**
   * Copies {@code count} elements from {@code index}, widened, into {@code dst} from {@code dstOffset}.
   *
   * @param index the first element of this buffer to read
   * @param dst the host array to copy into
   * @param dstOffset where in {@code dst} the first element goes
   * @param count the number of elements to copy
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public void copyTo(long index, float[] dst, int dstOffset, int count) {
    checkRange("copyTo", index, dst.length, dstOffset, count);
    readConverted(index, dst, dstOffset, count);
  }

  /**
   * A new array holding every element, widened to {@code float}.
   *
   * @return a new array of {@link #length()} elements
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public float[] toArray() {
    float[] result = new float[lengthAsArraySize()];
    readConverted(0, result, 0, result.length);
    return result;
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

  private void writeConverted(long index, float[] src, int srcOffset, int count) {
    byte[] chunk = new byte[Math.min(count, CONVERSION_CHUNK)];
    for (int done = 0; done < count; done += chunk.length) {
      int n = Math.min(chunk.length, count - done);
      for (int i = 0; i < n; i++) {
        chunk[i] = encode(src[srcOffset + done + i]);
      }
      writeElements(index + done, MemorySegment.ofArray(chunk), 0, n);
    }
  }

  private void readConverted(long index, float[] dst, int dstOffset, int count) {
    byte[] chunk = new byte[Math.min(count, CONVERSION_CHUNK)];
    for (int done = 0; done < count; done += chunk.length) {
      int n = Math.min(chunk.length, count - done);
      readElements(index + done, MemorySegment.ofArray(chunk), 0, n);
      for (int i = 0; i < n; i++) {
        dst[dstOffset + done + i] = decode(chunk[i]);
      }
    }
  }
}
