package dev.commplan.runtime;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The host API shared by the signed and unsigned 32-bit integer buffers, {@link I32Buffer} and {@link
 * U32Buffer}: one Java {@code int} per element (the unsigned type holds the bit pattern). Package-private:
 * users see the public subclasses, which inherit these methods.
 */
abstract sealed class IntElementBuffer extends Buffer permits I32Buffer, U32Buffer {
  IntElementBuffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
  }

  /** The element at {@code index}. */
  public int get(long index) {
    checkElement(index);
    int[] element = new int[1];
    readElements(index, MemorySegment.ofArray(element), 0, 1);
    return element[0];
  }

  /** Sets the element at {@code index}. */
  public void set(long index, int value) {
    checkElement(index);
    writeElements(index, MemorySegment.ofArray(new int[] {value}), 0, 1);
  }

  /** Copies all of {@code src} into this buffer; {@code src.length} must equal {@link #length()}. */
  public void copyFrom(int[] src) {
    checkWholeArray("copyFrom", src.length);
    writeElements(0, MemorySegment.ofArray(src), 0, src.length);
  }

  /** Copies {@code count} elements of {@code src}, from {@code srcOffset}, to this buffer from {@code index}. */
  public void copyFrom(long index, int[] src, int srcOffset, int count) {
    checkRange("copyFrom", index, src.length, srcOffset, count);
    writeElements(index, MemorySegment.ofArray(src), srcOffset, count);
  }

  /** Copies this whole buffer into {@code dst}; {@code dst.length} must equal {@link #length()}. */
  public void copyTo(int[] dst) {
    checkWholeArray("copyTo", dst.length);
    readElements(0, MemorySegment.ofArray(dst), 0, dst.length);
  }

  /** Copies {@code count} elements from {@code index} into {@code dst} from {@code dstOffset}. */
  public void copyTo(long index, int[] dst, int dstOffset, int count) {
    checkRange("copyTo", index, dst.length, dstOffset, count);
    readElements(index, MemorySegment.ofArray(dst), dstOffset, count);
  }

  /** A new array holding every element. */
  public int[] toArray() {
    int[] result = new int[lengthAsArraySize()];
    readElements(0, MemorySegment.ofArray(result), 0, result.length);
    return result;
  }

  /** Sets every element to {@code value}. */
  public void fill(int value) {
    int[] pattern = new int[fillPatternElements(length())];
    Arrays.fill(pattern, value);
    fillWith(MemorySegment.ofArray(pattern), pattern.length);
  }
}
