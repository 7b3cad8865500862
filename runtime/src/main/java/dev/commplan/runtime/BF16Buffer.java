package dev.commplan.runtime;

import dev.commplan.runtime.spi.DeviceMemory;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A buffer of {@code ncclBfloat16} elements (BF16OC).
 *
 * <p>The host API speaks {@code float}: writing rounds to the nearest representable value (ties to even),
 * reading widens exactly. {@link #getBits}, {@link #setBits}, {@link #copyFromBits} and {@link
 * #copyToBits} give the raw 16-bit patterns; {@link #toBits} and {@link #fromBits} convert.
 *
 * <p>Host access does not wait for the stream: synchronize before reading what a collective wrote.
 */
public final class BF16Buffer extends Buffer {
  /** Elements converted per host-side chunk, so bulk copies need no second full-size array. */
  private static final int CONVERSION_CHUNK = 1 << 14;

  BF16Buffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
  }

  /** Allocates {@code length} zeroed elements on {@code comm}'s device; the buffer owns them and frees them on close. */
  public static BF16Buffer allocate(Communicator comm, long length) {
    return (BF16Buffer) Buffer.allocate(DataType.BF16, comm, length);
  }

  @Override
  public DataType dataType() {
    return DataType.BF16;
  }

  /** The 16-bit pattern nearest to {@code value} (round to nearest, ties to even). */
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

  /** The value of a 16-bit pattern, widened exactly to {@code float}. */
  public static float fromBits(short bits) {
    // bfloat16 is exactly the top 16 bits of a binary32, so widening is exact.
    return Float.intBitsToFloat((bits & 0xFFFF) << 16);
  }

  /** The element at {@code index}, widened to {@code float}. */
  public float get(long index) {
    return fromBits(getBits(index));
  }

  /** Sets the element at {@code index} to the value nearest {@code value}. */
  public void set(long index, float value) {
    setBits(index, toBits(value));
  }

  /** The raw 16-bit pattern of the element at {@code index}. */
  public short getBits(long index) {
    checkElement(index);
    short[] element = new short[1];
    readElements(index, MemorySegment.ofArray(element), 0, 1);
    return element[0];
  }

  /** Sets the raw 16-bit pattern of the element at {@code index}. */
  public void setBits(long index, short bits) {
    checkElement(index);
    writeElements(index, MemorySegment.ofArray(new short[] {bits}), 0, 1);
  }

  /** Copies all of {@code src}, rounded, into this buffer; {@code src.length} must equal {@link #length()}. */
  public void copyFrom(float[] src) {
    checkWholeArray("copyFrom", src.length);
    writeConverted(0, src, 0, src.length);
  }

  /** Copies {@code count} elements of {@code src}, from {@code srcOffset}, rounded, to this buffer from {@code index}. */
  public void copyFrom(long index, float[] src, int srcOffset, int count) {
    checkRange("copyFrom", index, src.length, srcOffset, count);
    writeConverted(index, src, srcOffset, count);
  }

  /** Copies this whole buffer, widened, into {@code dst}; {@code dst.length} must equal {@link #length()}. */
  public void copyTo(float[] dst) {
    checkWholeArray("copyTo", dst.length);
    readConverted(0, dst, 0, dst.length);
  }

  /** Copies {@code count} elements from {@code index}, widened, into {@code dst} from {@code dstOffset}. */
  public void copyTo(long index, float[] dst, int dstOffset, int count) {
    checkRange("copyTo", index, dst.length, dstOffset, count);
    readConverted(index, dst, dstOffset, count);
  }

  /** A new array holding every element, widened to {@code float}. */
  public float[] toArray() {
    float[] result = new float[lengthAsArraySize()];
    readConverted(0, result, 0, result.length);
    return result;
  }

  /** Copies the raw patterns of {@code src} into this buffer; {@code src.length} must equal {@link #length()}. */
  public void copyFromBits(short[] src) {
    checkWholeArray("copyFromBits", src.length);
    writeElements(0, MemorySegment.ofArray(src), 0, src.length);
  }

  /** Copies {@code count} raw patterns of {@code src}, from {@code srcOffset}, to this buffer from {@code index}. */
  public void copyFromBits(long index, short[] src, int srcOffset, int count) {
    checkRange("copyFromBits", index, src.length, srcOffset, count);
    writeElements(index, MemorySegment.ofArray(src), srcOffset, count);
  }

  /** Copies the raw patterns of this whole buffer into {@code dst}; {@code dst.length} must equal {@link #length()}. */
  public void copyToBits(short[] dst) {
    checkWholeArray("copyToBits", dst.length);
    readElements(0, MemorySegment.ofArray(dst), 0, dst.length);
  }

  /** Copies {@code count} raw patterns from {@code index} into {@code dst} from {@code dstOffset}. */
  public void copyToBits(long index, short[] dst, int dstOffset, int count) {
    checkRange("copyToBits", index, dst.length, dstOffset, count);
    readElements(index, MemorySegment.ofArray(dst), dstOffset, count);
  }

  /** A new array holding every element's raw pattern. */
  public short[] toBitsArray() {
    short[] result = new short[lengthAsArraySize()];
    readElements(0, MemorySegment.ofArray(result), 0, result.length);
    return result;
  }

  /** Sets every element to the value nearest {@code value}. */
  public void fill(float value) {
    short[] pattern = new short[fillPatternElements(length())];
    Arrays.fill(pattern, toBits(value));
    fillWith(MemorySegment.ofArray(pattern), pattern.length);
  }

  private void writeConverted(long index, float[] src, int srcOffset, int count) {
    short[] chunk = new short[Math.min(count, CONVERSION_CHUNK)];
    for (int done = 0; done < count; done += chunk.length) {
      int n = Math.min(chunk.length, count - done);
      for (int i = 0; i < n; i++) {
        chunk[i] = toBits(src[srcOffset + done + i]);
      }
      writeElements(index + done, MemorySegment.ofArray(chunk), 0, n);
    }
  }

  private void readConverted(long index, float[] dst, int dstOffset, int count) {
    short[] chunk = new short[Math.min(count, CONVERSION_CHUNK)];
    for (int done = 0; done < count; done += chunk.length) {
      int n = Math.min(chunk.length, count - done);
      readElements(index + done, MemorySegment.ofArray(chunk), 0, n);
      for (int i = 0; i < n; i++) {
        dst[dstOffset + done + i] = fromBits(chunk[i]);
      }
    }
  }
}
