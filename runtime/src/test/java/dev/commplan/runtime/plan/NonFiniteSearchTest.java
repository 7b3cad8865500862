package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.runtime.DataType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The host's search ({@link NonFiniteScan#firstNonFinite}), eight bytes at a time, against the rule written
 * element by element ({@code (bits & mask) == mask}): every lane of a long, the last elements that do not fill one,
 * a block boundary, and the values on either side of the rule (the largest finite value, -0, subnormals, a NaN with
 * the sign bit, F8E4M3's 0x7E and 0x7F).
 */
class NonFiniteSearchTest {
  private static long naive(MemorySegment data, long count, DataType type) {
    long mask = NonFiniteScan.mask(type);
    for (long i = 0; i < count; i++) {
      if ((NonFiniteSearch.bits(data, 0, i, type.byteSize()) & mask) == mask) {
        return i;
      }
    }
    return NonFiniteScan.NONE;
  }

  private static void put(MemorySegment data, long index, DataType type, long bits) {
    int w = type.byteSize();
    switch (w) {
      case 1 -> data.set(ValueLayout.JAVA_BYTE, index, (byte) bits);
      case 2 -> data.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), index * 2, (short) bits);
      case 4 -> data.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), index * 4, (int) bits);
      default -> data.set(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), index * 8, bits);
    }
  }

  /** A finite value's bits: anything whose exponent field is not all ones. */
  private static long finite(Random random, DataType type) {
    long mask = NonFiniteScan.mask(type);
    long all = type.byteSize() == 8 ? -1L : (1L << (8 * type.byteSize())) - 1;
    while (true) {
      long bits = random.nextLong() & all;
      if ((bits & mask) != mask) {
        return bits;
      }
    }
  }

  @ParameterizedTest
  @EnumSource(value = DataType.class, names = {"F64", "F32", "F16", "BF16", "F8E4M3", "F8E5M2"})
  void findsTheFirstLikeTheRuleElementByElement(DataType type) {
    Random random = new Random(43);
    long mask = NonFiniteScan.mask(type);
    long sign = 1L << (8 * type.byteSize() - 1);
    try (Arena arena = Arena.ofConfined()) {
      for (int count : new int[] {0, 1, 7, 8, 9, 63, 4096 + 5, 3 * 4096 / type.byteSize() + 3}) {
        MemorySegment data = arena.allocate(Math.max(1, (long) count * type.byteSize()) + 8);
        for (int i = 0; i < count; i++) {
          put(data, i, type, finite(random, type));
        }
        assertEquals(NonFiniteScan.NONE, NonFiniteScan.firstNonFinite(data, count, type), type + " x" + count);
        for (int trial = 0; trial < 40 && count > 0; trial++) {
          int at = trial < 16 ? Math.min(count - 1, trial) : random.nextInt(count);
          int later = at + random.nextInt(Math.max(1, count - at));
          long bad = mask | (random.nextLong() & ~mask & (sign | (sign - 1)));
          long old = NonFiniteSearch.bits(data, 0, at, type.byteSize());
          long oldLater = NonFiniteSearch.bits(data, 0, later, type.byteSize());
          put(data, later, type, mask | sign);
          put(data, at, type, bad);
          assertEquals(naive(data, count, type), NonFiniteScan.firstNonFinite(data, count, type),
              type + " x" + count + " at " + at);
          assertEquals(at, NonFiniteScan.firstNonFinite(data, count, type), type + " x" + count + " at " + at);
          put(data, later, type, oldLater);
          put(data, at, type, old);
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(value = DataType.class, names = {"F64", "F32", "F16", "BF16", "F8E4M3", "F8E5M2"})
  void theValuesBesideTheRule(DataType type) {
    long mask = NonFiniteScan.mask(type);
    long sign = 1L << (8 * type.byteSize() - 1);
    long lowest = mask & -mask;
    long[] finite = {0, sign, 1, sign | 1, mask - lowest, (mask - lowest) | (lowest - 1), sign | (mask - lowest)};
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment data = arena.allocate(16L * type.byteSize());
      for (int i = 0; i < finite.length; i++) {
        put(data, i, type, finite[i]);
      }
      assertEquals(NonFiniteScan.NONE, NonFiniteScan.firstNonFinite(data, finite.length, type));
      put(data, 5, type, mask | sign);
      assertEquals(5, NonFiniteScan.firstNonFinite(data, finite.length, type));
    }
  }
}
