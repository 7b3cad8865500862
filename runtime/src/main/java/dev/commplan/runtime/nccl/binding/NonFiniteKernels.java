package dev.commplan.runtime.nccl.binding;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.runtime.nccl.CudaException;
import dev.commplan.runtime.nccl.binding.raw.CudaDriver;
import dev.commplan.runtime.nccl.binding.raw.NativeAccess;
import dev.commplan.runtime.nccl.binding.raw.NativeLibrary;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The finite check's kernels on a GPU ({@code @CommPlan(checkFinite)}; runtime/src/main/cuda/nonfinite.cu): the PTX
 * committed beside this class's package ({@value #RESOURCE}), loaded at run time through the CUDA driver API
 * ({@link CudaDriver}: {@code cuModuleLoadData}, {@code cuModuleGetFunction}, {@code cuLaunchKernel}), so that users
 * need no compiler: the driver compiles the PTX for the GPU at hand. One module per device, loaded the first time a
 * plan with the check is built there and kept for the life of the process (the device's primary context, which the
 * runtime, NCCL and these kernels share, lives as long; CommPlan never resets a device).
 *
 * <p>The kernels: {@code commplan_nonfinite_u8}, {@code _u16}, {@code _u32} and {@code _u64} ({@code (const T*
 * data, u64 count, T-wide mask, u64* first)}, the mask passed as {@code unsigned int} but for {@code _u64}) lower
 * {@code *first} to the index of the first element whose masked bits are all ones; {@code commplan_nonfinite_value}
 * ({@code (const unsigned char* data, unsigned int width, u64* first)}, one thread) then writes {@code first[1]},
 * the bits of that element, or 0. {@link #prepare} lays out one region's arguments once; {@link #enqueue} launches
 * both kernels with them.
 */
public final class NonFiniteKernels {
  /** The PTX, a resource of the runtime's module. */
  public static final String RESOURCE = "/dev/commplan/runtime/kernels/nonfinite.ptx";
  /** The kernel that writes a finding's bits, after a search. */
  public static final String VALUE_KERNEL = "commplan_nonfinite_value";
  /** Threads per block of a search. */
  static final int THREADS = 256;
  /** The most blocks of one search: a grid-stride loop covers the rest (about two waves of a large GPU). */
  static final int MOST_BLOCKS = 2048;

  private static final Map<Integer, NonFiniteKernels> LOADED = new ConcurrentHashMap<>();

  /** Per element width 1, 2, 4, 8 (index: log2 of the width), the search's {@code CUfunction}. */
  private final long[] search;
  private final long value;

  private NonFiniteKernels(long[] search, long value) {
    this.search = search;
    this.value = value;
  }

  /**
   * The search kernel's name for elements of {@code width} bytes.
   *
   * @param width 1, 2, 4 or 8
   * @return {@code commplan_nonfinite_u32} for 4
   */
  public static String searchKernel(int width) {
    return switch (width) {
      case 1, 2, 4, 8 -> "commplan_nonfinite_u" + 8 * width;
      default -> throw new IllegalArgumentException("no element of " + width + " bytes");
    };
  }

  /**
   * How many parameters a kernel's launch passes ({@link #prepare} lays out their values and the pointers to them):
   * four for a search ({@code data, count, mask, first}), three for the value kernel ({@code data, width, first}).
   *
   * @param kernel a search kernel's name, or {@value #VALUE_KERNEL}
   * @return the length of its {@code kernelParams}
   */
  public static int parameterCount(String kernel) {
    return kernel.equals(VALUE_KERNEL) ? 3 : 4;
  }

  /**
   * The kernels on {@code device}, loaded on the first call for it (in any thread of the process; the others wait).
   *
   * <p>CUDA: {@code cuModuleLoadData} is synchronous: it returns once the driver has compiled the PTX for the device
   * (a JIT compile, tens of milliseconds, cached by the driver across runs) and loaded the module into the calling
   * thread's current context, which {@code cudaSetDevice(device)} just made the device's primary context. It enqueues
   * nothing on any stream and does not wait for the device's work. {@code cuModuleGetFunction} is a host lookup.
   *
   * @param device the CUDA device ordinal
   * @return its kernels
   * @throws IllegalStateException where the CUDA driver library cannot be opened
   * @throws CudaException where the driver refuses the PTX or a kernel is missing from it
   */
  public static NonFiniteKernels on(int device) {
    NonFiniteKernels loaded = LOADED.get(device);
    return loaded != null ? loaded : LOADED.computeIfAbsent(device, NonFiniteKernels::load);
  }

  private static NonFiniteKernels load(int device) {
    NativeLibrary driver = NativeLibrary.cudaDriver();
    if (!driver.isLoaded()) {
      throw new IllegalStateException("the finite check (checkFinite) runs its search on the GPU with kernels loaded"
          + " through the CUDA driver API, but " + driver.problem());
    }
    CheckedCuda.cudaSetDevice(device); // the device's primary context, current on this thread
    check("cuInit", CudaDriver.cuInit(0));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      check("cuModuleLoadData (" + RESOURCE + ", device " + device + ")",
          CudaDriver.cuModuleLoadData(out, arena.allocateFrom(ptx())));
      long module = out.get(JAVA_LONG, 0);
      long[] search = new long[4];
      for (int log = 0; log < 4; log++) {
        search[log] = function(arena, module, searchKernel(1 << log));
      }
      return new NonFiniteKernels(search, function(arena, module, VALUE_KERNEL));
    }
  }

  private static long function(Arena arena, long module, String name) {
    MemorySegment out = arena.allocate(ADDRESS);
    check("cuModuleGetFunction (" + name + ")", CudaDriver.cuModuleGetFunction(out, module, arena.allocateFrom(name)));
    return out.get(JAVA_LONG, 0);
  }

  /** {@return the PTX's text, read from {@value #RESOURCE}} */
  public static String ptx() {
    try (InputStream in = NonFiniteKernels.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is missing from the runtime's jar");
      }
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + RESOURCE, e);
    }
  }

  /**
   * One region's launches, laid out once: each kernel's argument values and the array of pointers to them that
   * {@code cuLaunchKernel} reads, in memory that lives as long as this object.
   */
  public static final class Prepared {
    private final long search;
    private final int blocks;
    private final MemorySegment searchParams;
    private final MemorySegment valueParams;
    private final String name;

    private Prepared(long search, int blocks, MemorySegment searchParams, MemorySegment valueParams, String name) {
      this.search = search;
      this.blocks = blocks;
      this.searchParams = searchParams;
      this.valueParams = valueParams;
      this.name = name;
    }
  }

  /**
   * Lays out the launches that search {@code count} elements of {@code width} bytes at {@code data} and write the
   * finding at {@code finding} (two {@code u64}: the first index, or all ones, and its bits).
   *
   * @param data the region's device address
   * @param count its element count
   * @param width its element width: 1, 2, 4 or 8
   * @param mask its type's exponent bits
   * @param finding the device address of its two findings
   * @return the launches, for {@link #enqueue}
   */
  public Prepared prepare(long data, long count, int width, long mask, long finding) {
    Arena arena = Arena.ofAuto();
    MemorySegment values = arena.allocate(JAVA_LONG, 5); // data, count, mask (low bytes first), finding, width
    values.setAtIndex(JAVA_LONG, 0, data);
    values.setAtIndex(JAVA_LONG, 1, count);
    values.setAtIndex(JAVA_LONG, 2, mask);
    values.setAtIndex(JAVA_LONG, 3, finding);
    values.setAtIndex(JAVA_LONG, 4, width);
    String kernel = searchKernel(width);
    MemorySegment searchParams = arena.allocate(ADDRESS, parameterCount(kernel));
    for (int i = 0; i < parameterCount(kernel); i++) {
      searchParams.setAtIndex(ADDRESS, i, values.asSlice(8L * i, 8));
    }
    MemorySegment valueParams = arena.allocate(ADDRESS, parameterCount(VALUE_KERNEL));
    valueParams.setAtIndex(ADDRESS, 0, values.asSlice(0, 8));
    valueParams.setAtIndex(ADDRESS, 1, values.asSlice(32, 8)); // an unsigned int: the slot's low bytes
    valueParams.setAtIndex(ADDRESS, 2, values.asSlice(24, 8));
    int blocks = (int) Math.max(1, Math.min(MOST_BLOCKS, (count + THREADS - 1) / THREADS));
    int log = Integer.numberOfTrailingZeros(width);
    return new Prepared(search[log], blocks, searchParams, valueParams, kernel);
  }

  /**
   * Enqueues one region's search and then its value kernel on {@code stream}, the device's current context's.
   *
   * <p>CUDA: {@code cuLaunchKernel} is asynchronous: it returns once the launch is queued, before the kernel runs
   * (usually before it starts). Stream order puts each kernel after all work enqueued on {@code stream} before it
   * (the steps that may write the region, the memset of the findings) and before all work enqueued after it (the
   * value kernel, the verdict's all-gather). The arguments are copied by the call, so {@link Prepared}'s memory is
   * free to reuse when it returns. A fault inside a kernel is not returned here: it surfaces at a later call on the
   * stream, the synchronize the verdict waits in. Allocates nothing.
   *
   * @param launch the region's launches
   * @param stream the {@code cudaStream_t} (a {@code CUstream})
   * @throws CudaException where the driver refuses a launch
   */
  public void enqueue(Prepared launch, long stream) {
    int rc = CudaDriver.cuLaunchKernel(launch.search, launch.blocks, THREADS, stream, launch.searchParams);
    if (rc != CudaDriver.SUCCESS) {
      throw driverError("cuLaunchKernel (" + launch.name + ")", rc);
    }
    rc = CudaDriver.cuLaunchKernel(value, 1, 1, stream, launch.valueParams);
    if (rc != CudaDriver.SUCCESS) {
      throw driverError("cuLaunchKernel (" + VALUE_KERNEL + ")", rc);
    }
  }

  private static void check(String function, int rc) {
    if (rc != CudaDriver.SUCCESS) {
      throw driverError(function, rc);
    }
  }

  /**
   * The exception for {@code CUresult} {@code code} of the driver's {@code function}, with the driver's name and text
   * for it ({@code cuGetErrorName}, {@code cuGetErrorString}). The driver's codes and the runtime's share their
   * numbers for the errors these calls return (invalid PTX, image or handle, out of memory, launch failures).
   */
  static CudaException driverError(String function, int code) {
    String name = null;
    String text = null;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      if (CudaDriver.cuGetErrorName(code, out) == CudaDriver.SUCCESS) {
        name = NativeAccess.cString(out.get(ADDRESS, 0));
      }
      if (CudaDriver.cuGetErrorString(code, out) == CudaDriver.SUCCESS) {
        text = NativeAccess.cString(out.get(ADDRESS, 0));
      }
    } catch (RuntimeException | LinkageError e) {
      // the code alone, then
    }
    return new CudaException(function, code, name, text);
  }
}
