package dev.commplan.runtime;

import java.lang.foreign.MemorySegment;

/**
 * The {@code float} arrays API of the buffers whose elements are narrower than {@code float}: the 16-bit
 * ({@link HalfPrecisionBuffer}) and 8-bit ({@link EightBitFloatBuffer}) ones. Writing rounds to nearest,
 * ties to even; reading widens exactly. Bulk copies convert through host-side chunks of raw patterns, so
 * they need no second full-size array; the subclasses supply the chunk and the conversion of a run of
 * elements (one call per chunk, not per element). Package-private: users see the public subclasses.
 */
abstract sealed class NarrowFloatBuffer extends Buffer permits HalfPrecisionBuffer, EightBitFloatBuffer {
  /** Elements converted per host-side chunk. */
  private static final int CONVERSION_CHUNK = 1 << 14;

  NarrowFloatBuffer(DeviceMemory memory, long byteOffset, long length, boolean ownsMemory) {
    super(memory, byteOffset, length, ownsMemory);
  }

  /** A host segment for {@code elements} raw patterns, backed by an array of the pattern's width. */
  abstract MemorySegment newChunk(int elements);

  /** Writes the nearest patterns of {@code src[srcOffset .. srcOffset + count)} to elements 0.. of {@code chunk}. */
  abstract void encodeChunk(float[] src, int srcOffset, MemorySegment chunk, int count);

  /** Writes the values of elements 0 .. {@code count} of {@code chunk}, widened, to {@code dst} from {@code dstOffset}. */
  abstract void decodeChunk(MemorySegment chunk, int count, float[] dst, int dstOffset);

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

  private void writeConverted(long index, float[] src, int srcOffset, int count) {
    int chunkElements = Math.min(count, CONVERSION_CHUNK);
    MemorySegment chunk = newChunk(chunkElements);
    for (int done = 0; done < count; done += chunkElements) {
      int n = Math.min(chunkElements, count - done);
      encodeChunk(src, srcOffset + done, chunk, n);
      writeElements(index + done, chunk, 0, n);
    }
  }

  private void readConverted(long index, float[] dst, int dstOffset, int count) {
    int chunkElements = Math.min(count, CONVERSION_CHUNK);
    MemorySegment chunk = newChunk(chunkElements);
    for (int done = 0; done < count; done += chunkElements) {
      int n = Math.min(chunkElements, count - done);
      readElements(index + done, chunk, 0, n);
      decodeChunk(chunk, n, dst, dstOffset + done);
    }
  }
}
