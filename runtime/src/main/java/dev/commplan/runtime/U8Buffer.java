package dev.commplan.runtime;

import dev.commplan.runtime.spi.DeviceMemory;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A buffer of {@code ncclUint8} elements (U8OC), one Java {@code byte} each.
 *
 * <p>Elements are Java {@code byte}s holding the unsigned bit pattern ({@code (byte) 200} is 200); use
 * {@link #getUnsigned} and {@link #setUnsigned} to work with the unsigned value.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class U8Buffer extends Buffer {
  U8Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
  }

  /** Allocates {@code length} zeroed elements on {@code comm}'s device; the buffer owns them and frees them on close. */
  public static U8Buffer allocate(Communicator comm, long length) {
    return (U8Buffer) Buffer.allocate(DataType.U8, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.U8;
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

  /** The element at {@code index} as an unsigned value in {@code [0, 255]}. */
  public int getUnsigned(long index) {
    return Byte.toUnsignedInt(get(index));
  }

  /**
   * Sets the element at {@code index} from an unsigned value.
   *
   * @throws IllegalArgumentException if {@code value} is outside {@code [0, 255]}
   */
  public void setUnsigned(long index, int value) {
    if (value < 0 || value > 0xFF) {
      throw new IllegalArgumentException("a U8 element holds 0..255, not " + value);
    }
    set(index, (byte) value);
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
