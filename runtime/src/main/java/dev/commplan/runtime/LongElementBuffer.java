package dev.commplan.runtime;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The host API shared by the signed and unsigned 64-bit integer buffers, {@link I64Buffer} and {@link
 * U64Buffer}: one Java {@code long} per element (the unsigned type holds the bit pattern). Package-private:
 * users see the public subclasses, which inherit these methods.
 */
abstract sealed class LongElementBuffer extends Buffer permits I64Buffer, U64Buffer {
  LongElementBuffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
  }

  /**
   * The element at {@code index}.
   *
   * @param index the element index, in {@code [0, length())}
   * @return the element's value
   * @throws IndexOutOfBoundsException if {@code index} is outside {@code [0, length())}
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public long get(long index) {
    checkElement(index);
    long[] element = new long[1];
    readElements(index, MemorySegment.ofArray(element), 0, 1);
    return element[0];
  }

  /**
   * Sets the element at {@code index}.
   *
   * @param index the element index, in {@code [0, length())}
   * @param value the new value
   * @throws IndexOutOfBoundsException if {@code index} is outside {@code [0, length())}
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void set(long index, long value) {
    checkElement(index);
    writeElements(index, MemorySegment.ofArray(new long[] {value}), 0, 1);
  }

  /**
   * Copies all of {@code src} into this buffer; {@code src.length} must equal {@link #length()}.
   *
   * @param src the host array to copy; exactly {@link #length()} elements
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void copyFrom(long[] src) {
    checkWholeArray("copyFrom", src.length);
    writeElements(0, MemorySegment.ofArray(src), 0, src.length);
  }

  /**
   * Copies {@code count} elements of {@code src}, from {@code srcOffset}, to this buffer from {@code index}.
   *
   * @param index the first element of this buffer to write
   * @param src the host array to copy from
   * @param srcOffset the first element of {@code src} to copy
   * @param count the number of elements to copy
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void copyFrom(long index, long[] src, int srcOffset, int count) {
    checkRange("copyFrom", index, src.length, srcOffset, count);
    writeElements(index, MemorySegment.ofArray(src), srcOffset, count);
  }

  /**
   * Copies this whole buffer into {@code dst}; {@code dst.length} must equal {@link #length()}.
   *
   * @param dst the host array to fill; exactly {@link #length()} elements
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public void copyTo(long[] dst) {
    checkWholeArray("copyTo", dst.length);
    readElements(0, MemorySegment.ofArray(dst), 0, dst.length);
  }

  /**
   * Copies {@code count} elements from {@code index} into {@code dst} from {@code dstOffset}.
   *
   * @param index the first element of this buffer to read
   * @param dst the host array to copy into
   * @param dstOffset where in {@code dst} the first element goes
   * @param count the number of elements to copy
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public void copyTo(long index, long[] dst, int dstOffset, int count) {
    checkRange("copyTo", index, dst.length, dstOffset, count);
    readElements(index, MemorySegment.ofArray(dst), dstOffset, count);
  }

  /**
   * A new array holding every element.
   *
   * @return a new array of {@link #length()} elements
   * @throws BufferInFlightException if plan work that writes this buffer may still be running (synchronize
   *     its stream first)
   */
  public long[] toArray() {
    long[] result = new long[lengthAsArraySize()];
    readElements(0, MemorySegment.ofArray(result), 0, result.length);
    return result;
  }

  /**
   * Sets every element to {@code value}.
   *
   * @param value the value every element gets
   * @throws BufferInFlightException if plan work that reads or writes this buffer may still be running
   *     (synchronize its stream first)
   */
  public void fill(long value) {
    long[] pattern = new long[fillPatternElements(length())];
    Arrays.fill(pattern, value);
    fillWith(MemorySegment.ofArray(pattern), pattern.length);
  }
}
