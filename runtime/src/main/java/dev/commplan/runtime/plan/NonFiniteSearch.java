package dev.commplan.runtime.plan;

import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;
import java.util.function.Function;

/**
 * The host's search for the first element whose exponent bits are all ones ({@link NonFiniteScan}): eight bytes
 * at a time, every lane at once. With {@code M} the type's mask in every lane, {@code L} its lowest bit in every
 * lane and {@code S} every lane's top (sign) bit, {@code ((v & M) + L) & S} is non-zero exactly in the lanes whose
 * masked bits are all ones: the sum carries into the sign bit there, and stays below it in every other lane (so
 * it never carries into the next lane). A block of longs is or-ed together first, which the JIT can vectorize, and
 * searched lane by lane only where that found one. Elements are read little-endian, as every platform CommPlan runs
 * on stores them.
 */
final class NonFiniteSearch {
  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  /** Longs or-ed together before a block is searched lane by lane: 4 KiB. */
  private static final int BLOCK_LONGS = 512;
  /** Bytes copied to the host at a time where a block's memory cannot be read in place. */
  static final long CHUNK_BYTES = 1L << 20;

  private NonFiniteSearch() {}

  /** {@link NonFiniteScan#firstNonFinite} of the {@code count} elements of {@code width} bytes at the start of {@code data}. */
  static long first(MemorySegment data, long count, int width, long mask) {
    return first(data, 0, count, width, mask);
  }

  /** The first index among {@code count} elements of {@code width} bytes at {@code offset} whose masked bits are all ones. */
  static long first(MemorySegment data, long offset, long count, int width, long mask) {
    long lanes = replicate(mask, width);
    long low = replicate(mask & -mask, width);
    long top = replicate(1L << (8 * width - 1), width);
    long longs = count * width / 8;
    for (long block = 0; block < longs; block += BLOCK_LONGS) {
      long end = Math.min(longs, block + BLOCK_LONGS);
      long any = 0;
      for (long j = block; j < end; j++) {
        any |= (data.get(LONG, offset + j * 8) & lanes) + low;
      }
      if ((any & top) != 0) {
        for (long j = block; j < end; j++) {
          long hit = ((data.get(LONG, offset + j * 8) & lanes) + low) & top;
          if (hit != 0) {
            return j * 8 / width + Long.numberOfTrailingZeros(hit) / (8 * width);
          }
        }
      }
    }
    for (long i = longs * 8 / width; i < count; i++) { // the last elements, fewer than eight bytes
      if ((bits(data, offset, i, width) & mask) == mask) {
        return i;
      }
    }
    return NonFiniteScan.NONE;
  }

  /** Element {@code index}'s bits, zero-extended. */
  static long bits(MemorySegment data, long offset, long index, int width) {
    long at = offset + index * width;
    return switch (width) {
      case 1 -> data.get(ValueLayout.JAVA_BYTE, at) & 0xFFL;
      case 2 -> data.get(SHORT, at) & 0xFFFFL;
      case 4 -> data.get(INT, at) & 0xFFFF_FFFFL;
      default -> data.get(LONG, at);
    };
  }

  /** {@code value} (of {@code width} bytes) in every lane of a long. */
  private static long replicate(long value, int width) {
    long out = 0;
    for (int shift = 0; shift < 64; shift += 8 * width) {
      out |= value << shift;
    }
    return out;
  }

  /** {@link NonFiniteScan#onHost}: waits for the stream, then searches each region on the calling thread. */
  static final class OnHost implements NonFiniteScan {
    private final Region[] regions;
    /** Per region, its block as host memory (from the block's start), or null: copied to {@link #chunk}. */
    private final MemorySegment[] inPlace;
    private final U64Buffer findings;
    private final long[] found;
    /** Where regions the host cannot read in place are copied to, a chunk at a time; null where none needs it. */
    private final MemorySegment chunk;

    OnHost(List<Region> regions, U64Buffer findings, Function<DeviceMemory, MemorySegment> hostView) {
      this.regions = regions.toArray(Region[]::new);
      this.findings = findings;
      this.found = new long[2 * this.regions.length];
      if (findings.length() < found.length) {
        throw new IllegalArgumentException("the findings of " + this.regions.length + " regions need "
            + found.length + " elements, not " + findings.length());
      }
      this.inPlace = new MemorySegment[this.regions.length];
      boolean copies = false;
      for (int i = 0; i < this.regions.length; i++) {
        inPlace[i] = hostView.apply(this.regions[i].memory());
        copies |= inPlace[i] == null;
      }
      this.chunk = copies ? Arena.ofAuto().allocate(CHUNK_BYTES, Long.BYTES) : null;
    }

    @Override
    public void enqueue(Stream stream) {
      stream.synchronize(); // the work before it may write the fields: the host reads them once it is done
      for (int i = 0; i < regions.length; i++) {
        Region r = regions[i];
        int width = r.type().byteSize();
        long mask = r.mask();
        long index;
        long bits = 0;
        if (inPlace[i] != null) {
          index = first(inPlace[i], r.byteOffset(), r.count(), width, mask);
          if (index != NONE) {
            bits = bits(inPlace[i], r.byteOffset(), index, width);
          }
        } else {
          index = copiedFirst(r, width, mask);
          if (index != NONE) {
            r.memory().copyToHost(r.byteOffset() + index * width, chunk, 0, width);
            bits = bits(chunk, 0, 0, width);
          }
        }
        found[2 * i] = index;
        found[2 * i + 1] = bits;
      }
      findings.copyFrom(0, found, 0, found.length);
    }

    /** The first index of a region the host cannot read in place: copied a chunk at a time. */
    private long copiedFirst(Region r, int width, long mask) {
      long perChunk = CHUNK_BYTES / width;
      for (long from = 0; from < r.count(); from += perChunk) {
        long n = Math.min(perChunk, r.count() - from);
        r.memory().copyToHost(r.byteOffset() + from * width, chunk, 0, n * width);
        long index = first(chunk, 0, n, width, mask);
        if (index != NONE) {
          return from + index;
        }
      }
      return NONE;
    }
  }
}
