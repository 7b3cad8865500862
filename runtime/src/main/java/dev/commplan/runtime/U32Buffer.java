package dev.commplan.runtime;

import dev.commplan.runtime.spi.DeviceMemory;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A buffer of {@code ncclUint32} elements (U32OC), one Java {@code int} each.
 *
 * <p>Elements are Java {@code int}s holding the unsigned bit pattern; use {@link #getUnsigned} and {@link
 * #setUnsigned} to work with the unsigned value.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class U32Buffer extends Buffer {
  U32Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
  }

  /** Allocates {@code length} zeroed elements on {@code comm}'s device; the buffer owns them and frees them on close. */
  public static U32Buffer allocate(Communicator comm, long length) {
    return (U32Buffer) Buffer.allocate(DataType.U32, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.U32;
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

  /** The element at {@code index} as an unsigned value in {@code [0, 2^32 - 1]}. */
  public long getUnsigned(long index) {
    return Integer.toUnsignedLong(get(index));
  }

  /**
   * Sets the element at {@code index} from an unsigned value.
   *
   * @throws IllegalArgumentException if {@code value} is outside {@code [0, 2^32 - 1]}
   */
  public void setUnsigned(long index, long value) {
    if (value < 0 || value > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException("a U32 element holds 0..4294967295, not " + value);
    }
    set(index, (int) value);
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
