package dev.commplan.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.conformance.TypedBits;
import dev.commplan.runtime.local.LocalCluster;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The buffers' host API: element and bulk access, F16/BF16 conversions, bounds, closed buffers. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BufferHostApiTest {
  private LocalCluster cluster;
  private Communicator comm;

  @BeforeAll
  void start() {
    cluster = new LocalCluster(1);
    comm = cluster.call(c -> c).getFirst(); // host-side buffer work needs no rank thread
  }

  @AfterAll
  void stop() {
    cluster.close();
  }

  @ParameterizedTest
  @EnumSource(DataType.class)
  void allocatedBuffersAreZeroedAndRoundTripEveryElement(DataType type) {
    try (Buffer buffer = Buffer.allocate(type, comm, 37)) {
      assertEquals(type, buffer.dataType());
      assertEquals(37, buffer.length());
      assertEquals(37L * type.byteSize(), buffer.byteSize());
      assertArrayEquals(new long[37], TypedBits.read(buffer));
      long[] bits = new long[37];
      SplittableRandom random = new SplittableRandom(type.ordinal());
      for (int i = 0; i < bits.length; i++) {
        bits[i] = type.isFloatingPoint()
            ? TypedBits.fromDouble(type, random.nextDouble(-100, 100))
            : random.nextLong() & TypedBits.mask(type);
      }
      TypedBits.write(buffer, bits);
      assertArrayEquals(bits, TypedBits.read(buffer));
    }
  }

  @Test
  void elementAccessForEachType() {
    try (F32Buffer f32 = F32Buffer.allocate(comm, 3);
        F64Buffer f64 = F64Buffer.allocate(comm, 3);
        I8Buffer i8 = I8Buffer.allocate(comm, 3);
        U8Buffer u8 = U8Buffer.allocate(comm, 3);
        I32Buffer i32 = I32Buffer.allocate(comm, 3);
        U32Buffer u32 = U32Buffer.allocate(comm, 3);
        I64Buffer i64 = I64Buffer.allocate(comm, 3);
        U64Buffer u64 = U64Buffer.allocate(comm, 3);
        F16Buffer f16 = F16Buffer.allocate(comm, 3);
        BF16Buffer bf16 = BF16Buffer.allocate(comm, 3)) {
      f32.set(1, 2.5f);
      f64.set(2, -1e300);
      i8.set(0, (byte) -128);
      u8.setUnsigned(1, 200);
      i32.set(2, Integer.MIN_VALUE);
      u32.setUnsigned(0, 4_000_000_000L);
      i64.set(1, Long.MAX_VALUE);
      u64.set(2, -1L);
      f16.set(0, 0.5f);
      bf16.set(1, -3f);
      assertEquals(2.5f, f32.get(1));
      assertEquals(0f, f32.get(0));
      assertEquals(-1e300, f64.get(2));
      assertEquals(-128, i8.get(0));
      assertEquals((byte) 200, u8.get(1));
      assertEquals(200, u8.getUnsigned(1));
      assertEquals(Integer.MIN_VALUE, i32.get(2));
      assertEquals(4_000_000_000L, u32.getUnsigned(0));
      assertEquals((int) 4_000_000_000L, u32.get(0));
      assertEquals(Long.MAX_VALUE, i64.get(1));
      assertEquals("18446744073709551615", Long.toUnsignedString(u64.get(2)));
      assertEquals(0.5f, f16.get(0));
      assertEquals((short) 0x3800, f16.getBits(0));
      assertEquals(-3f, bf16.get(1));
      assertEquals((short) 0xC040, bf16.getBits(1));
      assertThrows(IllegalArgumentException.class, () -> u8.setUnsigned(0, 256));
      assertThrows(IllegalArgumentException.class, () -> u32.setUnsigned(0, -1));
    }
  }

  @Test
  void bulkCopiesFillAndPartialRanges() {
    try (I32Buffer buffer = I32Buffer.allocate(comm, 5)) {
      buffer.copyFrom(new int[] {1, 2, 3, 4, 5});
      int[] out = new int[5];
      buffer.copyTo(out);
      assertArrayEquals(new int[] {1, 2, 3, 4, 5}, out);
      buffer.copyFrom(1, new int[] {9, 8, 7}, 1, 2); // elements 1..2 := 8, 7
      assertArrayEquals(new int[] {1, 8, 7, 4, 5}, buffer.toArray());
      int[] part = new int[4];
      buffer.copyTo(3, part, 1, 2);
      assertArrayEquals(new int[] {0, 4, 5, 0}, part);
      buffer.fill(-6);
      assertArrayEquals(new int[] {-6, -6, -6, -6, -6}, buffer.toArray());
    }
    try (F16Buffer half = F16Buffer.allocate(comm, 20_000)) { // more than one conversion chunk
      float[] values = new float[20_000];
      for (int i = 0; i < values.length; i++) {
        values[i] = i % 2048;
      }
      half.copyFrom(values);
      assertArrayEquals(values, half.toArray());
      half.fill(1.5f);
      assertEquals(1.5f, half.get(19_999));
      assertEquals((short) 0x3E00, half.toBitsArray()[12_345]);
    }
  }

  /**
   * The narrow float types convert through chunks of 16,384 elements: a partial copy with offsets that
   * spans several chunks must put every element where the element-wise API says it is.
   */
  @ParameterizedTest
  @EnumSource(value = DataType.class, names = {"F16", "BF16", "F8E4M3", "F8E5M2"})
  void narrowFloatCopiesWithOffsetsAcrossChunks(DataType type) {
    int length = 40_000;
    int index = 3;
    int offset = 7;
    int count = 35_000;
    float[] src = new float[offset + count + 5];
    for (int i = 0; i < src.length; i++) {
      src[i] = (i % 15) - 7; // -7 .. 7: exact in every one of the four types, E5M2 included
    }
    try (NarrowFloatBuffer buffer = (NarrowFloatBuffer) Buffer.allocate(type, comm, length)) {
      buffer.copyFrom(index, src, offset, count);
      float[] whole = buffer.toArray();
      for (int i = 0; i < length; i++) {
        float expected = i >= index && i < index + count ? src[offset + i - index] : 0f;
        assertEquals(expected, whole[i], "element " + i);
      }
      float[] back = new float[count + 9];
      buffer.copyTo(index, back, 4, count);
      for (int i = 0; i < count; i++) {
        assertEquals(src[offset + i], back[4 + i], "element " + i + " read back");
      }
      assertEquals(0f, back[3]);
      assertEquals(0f, back[4 + count]);
    }
  }

  @Test
  void wholeArrayCopiesNeedTheExactLength() {
    try (F32Buffer buffer = F32Buffer.allocate(comm, 4)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> buffer.copyFrom(new float[3]));
      assertTrue(e.getMessage().contains("copyFrom") && e.getMessage().contains("3") && e.getMessage().contains("4"),
          e.getMessage());
      assertThrows(IllegalArgumentException.class, () -> buffer.copyTo(new float[5]));
    }
  }

  @Test
  void indicesAndRangesAreChecked() {
    try (U64Buffer buffer = U64Buffer.allocate(comm, 5)) {
      IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> buffer.get(5));
      assertTrue(e.getMessage().contains("index 5") && e.getMessage().contains("length 5"), e.getMessage());
      assertThrows(IndexOutOfBoundsException.class, () -> buffer.set(-1, 0));
      IndexOutOfBoundsException range =
          assertThrows(IndexOutOfBoundsException.class, () -> buffer.copyFrom(3, new long[4], 0, 3));
      assertTrue(range.getMessage().contains("[3, 6)"), range.getMessage());
      assertThrows(IndexOutOfBoundsException.class, () -> buffer.copyTo(0, new long[2], 1, 2));
      assertThrows(IllegalArgumentException.class, () -> buffer.copyTo(0, new long[2], 0, -1));
    }
  }

  @Test
  void aClosedBufferRefusesAccessNamingItself() {
    BF16Buffer buffer = BF16Buffer.allocate(comm, 2);
    buffer.close();
    buffer.close(); // idempotent
    assertTrue(buffer.isClosed());
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> buffer.get(0));
    assertTrue(e.getMessage().contains("BF16Buffer") && e.getMessage().contains("closed"), e.getMessage());
    assertThrows(IllegalStateException.class, () -> buffer.copyFrom(new float[2]));
    assertThrows(IllegalStateException.class, buffer::toArray);
    assertThrows(IllegalStateException.class, () -> buffer.fill(1));
  }

  @Test
  void viewsShareMemoryAndDoNotFreeIt() {
    try (F32Buffer whole = F32Buffer.allocate(comm, 6)) {
      F32Buffer tail = (F32Buffer) Buffer.view(DataType.F32, whole.memory(), 4 * 4, 2);
      tail.set(1, 42f);
      assertEquals(42f, whole.get(5));
      tail.close(); // a view does not own its memory
      assertFalse(whole.isClosed());
      assertThrows(IllegalArgumentException.class, () -> Buffer.view(DataType.F32, whole.memory(), 4 * 4, 3));
    }
  }

  // ---- F16 / BF16 conversions ---------------------------------------------------------------------

  @Test
  void f16RoundsToNearestEven() {
    assertEquals((short) 0x3C00, F16Buffer.toBits(1f));
    assertEquals((short) 0x3C00, F16Buffer.toBits(1f + 0x1p-11f)); // halfway, 1.0 is even
    assertEquals((short) 0x3C02, F16Buffer.toBits(1f + 3 * 0x1p-11f)); // halfway, 1 + 2^-9 is even
    assertEquals((short) 0x3C01, F16Buffer.toBits(1f + 0x1p-11f + 0x1p-20f)); // just above halfway
    assertEquals((short) 0x7BFF, F16Buffer.toBits(65504f));
    assertEquals((short) 0x7C00, F16Buffer.toBits(65520f)); // rounds up to infinity
    assertEquals((short) 0x0001, F16Buffer.toBits(0x1p-24f)); // smallest subnormal
    assertEquals((short) 0x8000, F16Buffer.toBits(-0f));
    assertTrue(Float.isNaN(F16Buffer.fromBits(F16Buffer.toBits(Float.NaN))));
    assertEquals(-2f, F16Buffer.fromBits((short) 0xC000));
  }

  @Test
  void bf16RoundsToNearestEven() {
    assertEquals((short) 0x3F80, BF16Buffer.toBits(1f));
    assertEquals((short) 0xBF80, BF16Buffer.toBits(-1f));
    assertEquals((short) 0x3F80, BF16Buffer.toBits(1f + 0x1p-8f)); // halfway, 1.0 is even
    assertEquals((short) 0x3F82, BF16Buffer.toBits(1f + 3 * 0x1p-8f)); // halfway, 1 + 2^-6 is even
    assertEquals((short) 0x3F81, BF16Buffer.toBits(1f + 0x1p-8f + 0x1p-20f)); // just above halfway
    assertEquals((short) 0x7F80, BF16Buffer.toBits(Float.MAX_VALUE)); // rounds up to infinity
    assertEquals((short) 0xFF80, BF16Buffer.toBits(Float.NEGATIVE_INFINITY));
    float payloadInLowBits = Float.intBitsToFloat(0x7F80_0001); // a NaN that plain truncation makes infinite
    assertTrue(Float.isNaN(BF16Buffer.fromBits(BF16Buffer.toBits(payloadInLowBits))));
    assertEquals(Float.intBitsToFloat(0x4049_0000), BF16Buffer.fromBits((short) 0x4049)); // widening is exact
  }

  /** Against the definition: the result is the nearer neighbour, ties to the one with an even last bit. */
  @Test
  void bf16MatchesTheDefinitionOnRandomFloats() {
    SplittableRandom random = new SplittableRandom(7);
    for (int n = 0; n < 200_000; n++) {
      float x = Float.intBitsToFloat(random.nextInt());
      if (!Float.isFinite(x) || Math.abs(x) > 0x1.fep127f) {
        continue; // (the top binade rounds to infinity, covered above)
      }
      int truncated = Float.floatToRawIntBits(x) >>> 16;
      double low = BF16Buffer.fromBits((short) truncated);
      double high = BF16Buffer.fromBits((short) (truncated + 1));
      double toLow = Math.abs(x - low);
      double toHigh = Math.abs(high - x);
      int expected = toLow < toHigh ? truncated : toHigh < toLow ? truncated + 1 : (truncated & 1) == 0 ? truncated : truncated + 1;
      assertEquals((short) expected, BF16Buffer.toBits(x), () -> "for " + x);
    }
  }

  @Test
  void halfBuffersRoundWhenWrittenAndKeepRawBits() {
    try (F16Buffer f16 = F16Buffer.allocate(comm, 2); BF16Buffer bf16 = BF16Buffer.allocate(comm, 2)) {
      f16.copyFrom(new float[] {1f + 3 * 0x1p-11f, 0.1f});
      assertArrayEquals(new short[] {0x3C02, 0x2E66}, f16.toBitsArray());
      bf16.copyFromBits(new short[] {0x3F81, (short) 0xFFC0});
      float[] widened = bf16.toArray();
      assertEquals(1f + 0x1p-7f, widened[0]);
      assertTrue(Float.isNaN(widened[1]));
      short[] bits = new short[2];
      bf16.copyToBits(bits);
      assertArrayEquals(new short[] {0x3F81, (short) 0xFFC0}, bits);
    }
  }
}
