package dev.commplan.runtime;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A buffer of {@code ncclFloat32} elements (F32OC), one Java {@code float} each.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class F32Buffer extends Buffer {
  F32Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
  }

  /** Allocates {@code length} zeroed elements on {@code comm}'s device; the buffer owns them and frees them on close. */
  public static F32Buffer allocate(Communicator comm, long length) {
    return (F32Buffer) Buffer.allocate(DataType.F32, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.F32;
  }

  /** The element at {@code index}. */
  public float get(long index) {
    checkElement(index);
    float[] element = new float[1];
    readElements(index, MemorySegment.ofArray(element), 0, 1);
    return element[0];
  }

  /** Sets the element at {@code index}. */
  public void set(long index, float value) {
    checkElement(index);
    writeElements(index, MemorySegment.ofArray(new float[] {value}), 0, 1);
  }

  /** Copies all of {@code src} into this buffer; {@code src.length} must equal {@link #length()}. */
  public void copyFrom(float[] src) {
    checkWholeArray("copyFrom", src.length);
    writeElements(0, MemorySegment.ofArray(src), 0, src.length);
  }

  /** Copies {@code count} elements of {@code src}, from {@code srcOffset}, to this buffer from {@code index}. */
  public void copyFrom(long index, float[] src, int srcOffset, int count) {
    checkRange("copyFrom", index, src.length, srcOffset, count);
    writeElements(index, MemorySegment.ofArray(src), srcOffset, count);
  }

  /** Copies this whole buffer into {@code dst}; {@code dst.length} must equal {@link #length()}. */
  public void copyTo(float[] dst) {
    checkWholeArray("copyTo", dst.length);
    readElements(0, MemorySegment.ofArray(dst), 0, dst.length);
  }

  /** Copies {@code count} elements from {@code index} into {@code dst} from {@code dstOffset}. */
  public void copyTo(long index, float[] dst, int dstOffset, int count) {
    checkRange("copyTo", index, dst.length, dstOffset, count);
    readElements(index, MemorySegment.ofArray(dst), dstOffset, count);
  }

  /** A new array holding every element. */
  public float[] toArray() {
    float[] result = new float[lengthAsArraySize()];
    readElements(0, MemorySegment.ofArray(result), 0, result.length);
    return result;
  }

  /** Sets every element to {@code value}. */
  public void fill(float value) {
    float[] pattern = new float[fillPatternElements(length())];
    Arrays.fill(pattern, value);
    fillWith(MemorySegment.ofArray(pattern), pattern.length);
  }
}
