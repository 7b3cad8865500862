package dev.commplan.runtime;

import dev.commplan.runtime.spi.DeviceMemory;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A buffer of {@code ncclInt8} elements (I8OC), one Java {@code byte} each.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class I8Buffer extends Buffer {
  I8Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
  }

  /** Allocates {@code length} zeroed elements on {@code comm}'s device; the buffer owns them and frees them on close. */
  public static I8Buffer allocate(Communicator comm, long length) {
    return (I8Buffer) Buffer.allocate(DataType.I8, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.I8;
  }

  /** The element at {@code index}. */
  public byte get(long index) {
    checkElement(index);
    byte[] element = new byte[1];
    readElements(index, MemorySegment.ofArray(element), 0, 1);
    return element[0];
  }

  /** Sets the element at {@code index}. */
  public void set(long index, byte value) {
    checkElement(index);
    writeElements(index, MemorySegment.ofArray(new byte[] {value}), 0, 1);
  }

  /** Copies all of {@code src} into this buffer; {@code src.length} must equal {@link #length()}. */
  public void copyFrom(byte[] src) {
    checkWholeArray("copyFrom", src.length);
    writeElements(0, MemorySegment.ofArray(src), 0, src.length);
  }

  /** Copies {@code count} elements of {@code src}, from {@code srcOffset}, to this buffer from {@code index}. */
  public void copyFrom(long index, byte[] src, int srcOffset, int count) {
    checkRange("copyFrom", index, src.length, srcOffset, count);
    writeElements(index, MemorySegment.ofArray(src), srcOffset, count);
  }

  /** Copies this whole buffer into {@code dst}; {@code dst.length} must equal {@link #length()}. */
  public void copyTo(byte[] dst) {
    checkWholeArray("copyTo", dst.length);
    readElements(0, MemorySegment.ofArray(dst), 0, dst.length);
  }

  /** Copies {@code count} elements from {@code index} into {@code dst} from {@code dstOffset}. */
  public void copyTo(long index, byte[] dst, int dstOffset, int count) {
    checkRange("copyTo", index, dst.length, dstOffset, count);
    readElements(index, MemorySegment.ofArray(dst), dstOffset, count);
  }

  /** A new array holding every element. */
  public byte[] toArray() {
    byte[] result = new byte[lengthAsArraySize()];
    readElements(0, MemorySegment.ofArray(result), 0, result.length);
    return result;
  }

  /** Sets every element to {@code value}. */
  public void fill(byte value) {
    byte[] pattern = new byte[fillPatternElements(length())];
    Arrays.fill(pattern, value);
    fillWith(MemorySegment.ofArray(pattern), pattern.length);
  }
}
