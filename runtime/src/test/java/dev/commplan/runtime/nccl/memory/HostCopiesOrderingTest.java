package dev.commplan.runtime.nccl.memory;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.conformance.TypedBits;
import dev.commplan.runtime.U8Buffer;
import dev.commplan.runtime.local.LocalCluster;
import dev.commplan.runtime.nccl.CudaException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The NCCL backend's ordering contract for host access (issue 15), checked without a GPU against {@link
 * LateDmaDevice}, a model of CUDA in which every asynchronous copy lands as late as CUDA allows: a host
 * write must be in device memory, as a collective on another stream reads it, when it returns; a host
 * read must return what device memory holds. The buffers are the real {@link NcclMemory} and typed
 * {@link Buffer}s over the real {@link HostCopies}; only the CUDA calls are modelled.
 *
 * <p>{@link #theModelLosesTheWriteTheOldWayDid} shows that the model reproduces the bug the contract
 * prevents, so these tests can fail: the legacy-stream copy the backend used before leaves the collective
 * reading the old bytes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostCopiesOrderingTest {
  private static final int DEVICE = 3;
  private static final long COPY_STREAM = 0x5100;
  private static final long CHUNK = 64; // small, so that sizes around many chunk boundaries stay cheap
  private static final int MEMORY = 1 << 20;

  private LocalCluster cluster;
  private Communicator owner; // only for messages: the memory's owner as Buffer.toString names it

  @BeforeAll
  void start() {
    cluster = new LocalCluster(1);
    owner = cluster.call(c -> c).getFirst();
  }

  @AfterAll
  void stop() {
    cluster.close();
  }

  /** Sizes on both sides of every chunk boundary up to a few chunks, and random ones beyond. */
  private static List<Integer> sizes() {
    List<Integer> sizes = new ArrayList<>();
    for (int k = 0; k <= 5; k++) {
      for (int d = -3; d <= 3; d++) {
        long n = k * CHUNK + d;
        if (n > 0) {
          sizes.add((int) n);
        }
      }
    }
    SplittableRandom random = new SplittableRandom(15);
    for (int i = 0; i < 40; i++) {
      sizes.add(1 + random.nextInt(64 * 1024));
    }
    return sizes;
  }

  @Test
  void aWriteIsInDeviceMemoryWhenItReturns() {
    LateDmaDevice device = new LateDmaDevice(DEVICE, MEMORY);
    HostCopies copies = new HostCopies(device, DEVICE, COPY_STREAM, CHUNK);
    SplittableRandom random = new SplittableRandom(1);
    for (int size : sizes()) {
      long at = LateDmaDevice.BASE + random.nextInt(MEMORY - size + 1);
      byte[] data = randomBytes(random, size);
      copies.write(at, MemorySegment.ofArray(data), 0, size);
      assertArrayEquals(data, device.collectiveReads(at, size), () -> size + " bytes: a collective would read old bytes");
      assertEquals(0, device.pending(COPY_STREAM));
    }
  }

  @Test
  void zeroingIsInDeviceMemoryWhenItReturns() {
    LateDmaDevice device = new LateDmaDevice(DEVICE, MEMORY);
    HostCopies copies = new HostCopies(device, DEVICE, COPY_STREAM, CHUNK);
    SplittableRandom random = new SplittableRandom(2);
    for (int size : sizes()) {
      long at = LateDmaDevice.BASE + random.nextInt(MEMORY - size + 1);
      device.collectiveWrites(at, randomBytes(random, size)); // what an earlier allocation left there
      copies.zero(at, size);
      assertArrayEquals(new byte[size], device.collectiveReads(at, size), () -> size + " bytes: not zeroed yet");
    }
  }

  @Test
  void aFillIsInDeviceMemoryWhenItReturns() {
    LateDmaDevice device = new LateDmaDevice(DEVICE, MEMORY);
    HostCopies copies = new HostCopies(device, DEVICE, COPY_STREAM, CHUNK);
    SplittableRandom random = new SplittableRandom(7);
    for (int size : sizes()) {
      for (int patternSize : new int[] {1, 3, 4, 8, (int) CHUNK, (int) CHUNK + 5, 3 * (int) CHUNK}) {
        long at = LateDmaDevice.BASE + random.nextInt(MEMORY - size + 1);
        byte[] pattern = randomBytes(random, patternSize);
        device.collectiveWrites(at, new byte[size]);
        copies.fill(at, MemorySegment.ofArray(pattern), size);
        byte[] expected = new byte[size];
        for (int i = 0; i < size; i++) {
          expected[i] = pattern[i % patternSize];
        }
        assertArrayEquals(expected, device.collectiveReads(at, size), () -> size + " bytes of a " + patternSize + "-byte pattern");
        assertEquals(0, device.pending(COPY_STREAM));
      }
    }
  }

  @Test
  void aReadReturnsWhatDeviceMemoryHolds() {
    LateDmaDevice device = new LateDmaDevice(DEVICE, MEMORY);
    HostCopies copies = new HostCopies(device, DEVICE, COPY_STREAM, CHUNK);
    SplittableRandom random = new SplittableRandom(3);
    for (int size : sizes()) {
      long at = LateDmaDevice.BASE + random.nextInt(MEMORY - size + 1);
      byte[] result = randomBytes(random, size);
      device.collectiveWrites(at, result); // a collective that has finished (its stream was synchronized)
      byte[] back = new byte[size];
      copies.read(at, MemorySegment.ofArray(back), 0, size);
      assertArrayEquals(result, back);
    }
  }

  /** The user's way in: typed buffers over NCCL memory, every data type, whole and partial copies, set, fill. */
  @Test
  void everyBufferWriteIsVisibleToTheNextCollective() {
    LateDmaDevice device = new LateDmaDevice(DEVICE, MEMORY);
    HostCopies copies = new HostCopies(device, DEVICE, COPY_STREAM, CHUNK);
    NcclMemory block = new NcclMemory(owner, copies, DeviceAllocator.DEVICE_WIDE, m -> { }, LateDmaDevice.BASE, MEMORY, false);
    SplittableRandom random = new SplittableRandom(4);
    for (DataType type : DataType.values()) {
      for (int size : sizes()) {
        long length = Math.max(1, size / type.byteSize());
        long offset = (long) random.nextInt((int) (MEMORY - length * type.byteSize()) / 8) * 8;
        Buffer buffer = Buffer.view(type, block, offset, length);
        long[] bits = new long[(int) length];
        for (int i = 0; i < bits.length; i++) {
          bits[i] = random.nextLong() & TypedBits.mask(type);
        }
        TypedBits.write(buffer, bits);
        assertArrayEquals(bits, deviceBits(device, buffer), () -> type + "[" + length + "] copyFrom");
        assertArrayEquals(bits, TypedBits.read(buffer), () -> type + "[" + length + "] read back");
      }
    }
    F32Buffer f = (F32Buffer) Buffer.view(DataType.F32, block, 256, 3 * CHUNK + 1);
    f.fill(2.5f);
    float[] filled = new float[(int) f.length()];
    java.util.Arrays.fill(filled, 2.5f);
    assertArrayEquals(filled, floats(device.collectiveReads(LateDmaDevice.BASE + 256, (int) f.byteSize())), "fill");
    f.set(7, -1f);
    assertEquals(-1f, floats(device.collectiveReads(LateDmaDevice.BASE + 256 + 7 * 4, 4))[0], "set");
    f.copyFrom(5, new float[] {9f, 8f, 7f}, 0, 3);
    assertArrayEquals(new float[] {9f, 8f, 7f}, floats(device.collectiveReads(LateDmaDevice.BASE + 256 + 20, 12)),
        "partial copyFrom");
    U8Buffer u = (U8Buffer) Buffer.view(DataType.U8, block, 4096, CHUNK + 1);
    u.fill((byte) 0x5a);
    byte[] expected = new byte[(int) u.length()];
    java.util.Arrays.fill(expected, (byte) 0x5a);
    assertArrayEquals(expected, device.collectiveReads(LateDmaDevice.BASE + 4096, expected.length), "u8 fill");
  }

  @Test
  void aFailedChunkLeavesNothingInFlight() {
    LateDmaDevice device = new LateDmaDevice(DEVICE, MEMORY);
    HostCopies copies = new HostCopies(device, DEVICE, COPY_STREAM, CHUNK);
    byte[] data = randomBytes(new SplittableRandom(5), (int) (4 * CHUNK));
    device.failCopyAfter = 2;
    assertThrows(CudaException.class, () -> copies.write(LateDmaDevice.BASE, MemorySegment.ofArray(data), 0, data.length));
    assertEquals(0, device.pending(COPY_STREAM), "the chunks before the failure must have landed");
    byte[] landed = device.collectiveReads(LateDmaDevice.BASE, (int) (2 * CHUNK));
    assertArrayEquals(java.util.Arrays.copyOf(data, (int) (2 * CHUNK)), landed);
  }

  /** The test of the tests: the model loses a write made the way the backend made it before issue 15. */
  @Test
  void theModelLosesTheWriteTheOldWayDid() {
    LateDmaDevice device = new LateDmaDevice(DEVICE, MEMORY);
    device.setDevice(DEVICE);
    byte[] data = randomBytes(new SplittableRandom(6), 4096);
    device.legacyMemcpyToDevice(LateDmaDevice.BASE, MemorySegment.ofArray(data), data.length);
    assertFalse(java.util.Arrays.equals(data, device.collectiveReads(LateDmaDevice.BASE, data.length)),
        "cudaMemcpy may return before its DMA lands, and a collective on a non-blocking stream does not wait");
    device.synchronize(0);
    assertArrayEquals(data, device.collectiveReads(LateDmaDevice.BASE, data.length));
  }

  private static long[] deviceBits(LateDmaDevice device, Buffer buffer) {
    byte[] raw = device.collectiveReads(LateDmaDevice.BASE + buffer.byteOffset(), (int) buffer.byteSize());
    int size = buffer.dataType().byteSize();
    long[] out = new long[(int) buffer.length()];
    for (int i = 0; i < out.length; i++) {
      long v = 0;
      for (int b = size - 1; b >= 0; b--) { // little-endian, as the GPU and x86 store them
        v = (v << 8) | (raw[i * size + b] & 0xff);
      }
      out[i] = v;
    }
    return out;
  }

  private static float[] floats(byte[] raw) {
    return MemorySegment.ofArray(raw).toArray(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED);
  }

  private static byte[] randomBytes(SplittableRandom random, int size) {
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) random.nextInt(1, 256); // never all zeros: a write that did not land must show
    }
    return b;
  }
}
