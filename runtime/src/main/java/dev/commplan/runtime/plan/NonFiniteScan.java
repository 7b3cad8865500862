package dev.commplan.runtime.plan;

import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * The finite check's search of one unit's send data ({@code @CommPlan(checkFinite)}; docs/dsl.md, "Finite
 * checks"): for each {@link Region} (a field that a floating-point reduction of the unit sends), the index of its
 * first element whose exponent bits are all ones (a NaN or an infinity) and that element's bits. A backend makes
 * one per checked step or bucket when the plan is built ({@link CompiledSchedule#nonFiniteScan}); the plan calls
 * {@link #enqueue} before each enqueue of that unit, then has the ranks agree on what was found before any data
 * moves.
 *
 * <p>Every floating-point type CommPlan has marks its non-finite values by an exponent field of all ones, so one
 * test serves them all, on the element's bits: {@code (bits & mask) == mask} with the type's {@linkplain
 * #mask(DataType) mask} (F64 {@code 0x7FF0000000000000}, F32 {@code 0x7F800000}, F16 {@code 0x7C00}, BF16 {@code
 * 0x7F80}, F8E5M2 {@code 0x7C}, F8E4M3 {@code 0x7F}: it has no infinities, and S.1111.111 is its NaN).
 */
public interface NonFiniteScan {
  /** What a region's index slot holds where it has no non-finite element: all ones. */
  long NONE = -1L;

  /**
   * One field's send data, as the unit's reduction reads it: the whole field (an in-place ReduceScatter's too).
   *
   * @param memory the block the field lies in
   * @param byteOffset where it starts there, in bytes
   * @param count its element count
   * @param type its element type, a floating-point one
   */
  record Region(DeviceMemory memory, long byteOffset, long count, DataType type) {
    /**
     * Checks the arguments.
     *
     * @param memory the block the field lies in
     * @param byteOffset where it starts there, in bytes
     * @param count its element count
     * @param type its element type, a floating-point one
     */
    public Region {
      Objects.requireNonNull(memory, "memory");
      if (!Objects.requireNonNull(type, "type").isFloatingPoint()) {
        throw new IllegalArgumentException("the finite check searches floating-point data, not " + type);
      }
    }

    /** {@return the bits of the type's exponent field ({@link NonFiniteScan#mask(DataType)})} */
    public long mask() {
      return NonFiniteScan.mask(type);
    }
  }

  /**
   * Enqueues the search on {@code stream}, after the work enqueued on it before (which may write the fields):
   * once that work and the search are done, elements {@code 2i} and {@code 2i + 1} of the unit's findings hold
   * region {@code i}'s first non-finite index (or {@link #NONE}) and that element's bits, zero-extended (0 where
   * there is none). A backend whose memory the host reads ({@link #onHost}) waits for the stream first and has
   * written the findings when this returns; a GPU's search runs on the device, in stream order, and returns
   * before it is done. Called holding the communicator's gate; allocates nothing.
   *
   * @param stream the stream the unit is about to be enqueued on
   */
  void enqueue(Stream stream);

  /**
   * The bits of {@code type}'s exponent field: an element is a NaN or an infinity exactly where they are all ones.
   *
   * @param type a floating-point type
   * @return the mask, in the low bits of the element's width
   * @throws IllegalArgumentException for an integer type
   */
  static long mask(DataType type) {
    return switch (type) {
      case F64 -> 0x7FF0000000000000L;
      case F32 -> 0x7F800000L;
      case F16 -> 0x7C00L;
      case BF16 -> 0x7F80L;
      case F8E5M2 -> 0x7CL;
      case F8E4M3 -> 0x7FL;
      default -> throw new IllegalArgumentException("the finite check searches floating-point data, not " + type);
    };
  }

  /**
   * The index of the first element of {@code count} elements of {@code type} at the start of {@code data} (host
   * memory) whose exponent bits are all ones, or {@link #NONE}: what the host-side searches run, and the rule the
   * device kernels implement (runtime/src/main/cuda/nonfinite.cu).
   *
   * @param data host memory, at least {@code count * type.byteSize()} bytes
   * @param count the element count
   * @param type a floating-point type
   * @return the first index, or {@link #NONE}
   */
  static long firstNonFinite(MemorySegment data, long count, DataType type) {
    return NonFiniteSearch.first(data, count, type.byteSize(), mask(type));
  }

  /**
   * The search of a backend whose device memory the host can read: its {@link #enqueue} synchronizes the stream,
   * searches each region on the calling thread and writes the findings (a host write, complete on return). A region
   * whose memory {@code hostView} maps to host memory (the block's segment, from its start) is searched in place;
   * any other is copied to the host through {@link DeviceMemory#copyToHost} a megabyte at a time. What {@link
   * CompiledSchedule#nonFiniteScan} gives by default, with a {@code hostView} that maps nothing.
   *
   * @param regions the unit's regions, in the plan's order
   * @param findings where the findings go: at least {@code 2 * regions.size()} elements
   * @param hostView a block's memory as host memory, or null where the host cannot read it in place
   * @return the search
   */
  static NonFiniteScan onHost(List<Region> regions, U64Buffer findings,
      Function<DeviceMemory, MemorySegment> hostView) {
    return new NonFiniteSearch.OnHost(regions, findings, hostView);
  }
}
