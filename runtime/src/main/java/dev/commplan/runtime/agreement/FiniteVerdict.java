package dev.commplan.runtime.agreement;

import dev.commplan.runtime.BF16Buffer;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F16Buffer;
import dev.commplan.runtime.F8E4M3Buffer;
import dev.commplan.runtime.F8E5M2Buffer;
import dev.commplan.runtime.NonFiniteException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;
import java.util.List;
import java.util.Objects;

/**
 * The finite check's verdict ({@code @CommPlan(checkFinite)}; docs/dsl.md, "Finite checks"): what every rank's
 * search of one unit's send data found, compared so that every rank decides the same before any of them enqueues
 * the unit. The plan has the backend search (its {@code NonFiniteScan} writes, per region, the first non-finite
 * index, or all ones, and that element's bits into {@link #findings()}, in stream order); {@link #decide} then
 * enqueues one all-gather of every rank's findings on the same stream, through the agreement check's own calls
 * ({@link Agreement.Exchange}, as the fingerprint's), waits for the stream, and either returns (nothing found on
 * any rank) or throws {@link NonFiniteException} on every rank, naming the lowest rank that found one, the first
 * of the unit's fields (in the plan's order) where it did, the index and the value. One plan's checks, used by the
 * communicator's one thread.
 */
public final class FiniteVerdict implements AutoCloseable {
  /** A region's index slot where its search found nothing: all ones ({@code NonFiniteScan.NONE}). */
  public static final long NONE = -1L;
  /** How many ranks' findings a message lists, beyond which it counts them. */
  private static final int LISTED = 8;

  /**
   * What a unit is, for the message: its plan and step, where it is ({@code plan p.Grads, step 1}, and {@code ,
   * bucket 3} for a bucket), and its regions' fields and types, in the order the backend searched them.
   *
   * @param planName the plan's name
   * @param step the step number, as in the annotations
   * @param where {@code plan p.Grads, step 1} or {@code plan p.Grads, step 1, bucket 3}
   * @param fields per region, its field
   * @param types per region, its data type
   */
  public record Unit(String planName, int step, String where, List<String> fields, List<DataType> types) {
    /** Copies the lists. */
    public Unit {
      Objects.requireNonNull(where, "where");
      fields = List.copyOf(fields);
      types = List.copyOf(types);
      if (fields.size() != types.size()) {
        throw new IllegalArgumentException(fields.size() + " fields but " + types.size() + " types");
      }
    }
  }

  /** The communicator's agreement check, whose exchange carries the findings; null on one rank. */
  private final Agreement agreement;
  private final int ranks;
  /** Longs of one rank's findings: two per region of the plan's largest unit. */
  private final int longs;
  private final U64Buffer own;
  private final U64Buffer all;
  /** Where the ranks' findings are read to, made once. */
  private final long[] read;

  private FiniteVerdict(Agreement agreement, int ranks, int longs, U64Buffer own, U64Buffer all) {
    this.agreement = agreement;
    this.ranks = ranks;
    this.longs = longs;
    this.own = own;
    this.all = all;
    this.read = new long[longs * ranks];
  }

  /**
   * The verdicts of one plan on {@code comm}, whose units have at most {@code regions} regions each: its findings
   * buffer and, on more than one rank, the buffer every rank's findings are gathered into.
   *
   * @param planName the plan's name, for the message
   * @param comm the plan's communicator (a mesh plan's: the world), which every rank of the plan is a rank of
   * @param regions the most regions of one unit, at least 1
   * @return the verdicts, which own their buffers until {@link #close()}
   * @throws IllegalArgumentException where {@code comm} has several ranks but no agreement check to exchange through
   */
  public static FiniteVerdict of(String planName, Communicator comm, int regions) {
    int ranks = comm.size();
    Agreement agreement = Agreement.of(comm);
    int longs = 2 * Math.max(1, regions);
    if (ranks > 1 && agreement == null) {
      throw new IllegalArgumentException("plan " + planName + " is built with the finite check (checkFinite), whose"
          + " ranks agree on each verdict through the communicator's agreement check, but " + comm + " of the '"
          + comm.backendName() + "' backend has none (its communicator is not built on spi.AbstractCommunicator)");
    }
    U64Buffer own = (U64Buffer) Buffer.allocate(DataType.U64, comm, longs);
    if (ranks == 1) {
      return new FiniteVerdict(null, 1, longs, own, null);
    }
    try {
      return new FiniteVerdict(agreement, ranks, longs, own, agreement.exchange().allocate((long) longs * ranks));
    } catch (RuntimeException | Error e) {
      own.close();
      throw e;
    }
  }

  /** {@return this rank's findings, which the backend's search writes: per region, the first index and its bits} */
  public U64Buffer findings() {
    return own;
  }

  /**
   * Refuses a checked unit inside a group the user opened: its verdict is waited for on the host before the unit
   * is enqueued, and the group's calls (the verdict's exchange among them) are not issued until {@code groupEnd()}.
   *
   * @param planName the plan, for the message
   * @param what what was called: {@code execute()}, {@code ready()}
   * @throws IllegalStateException where a group is open
   */
  public void refuseInGroup(String planName, String what) {
    if (agreement != null && agreement.exchange().inGroup()) {
      throw new IllegalStateException("plan " + planName + ": " + what + " between groupStart() and groupEnd(), but"
          + " the plan is built with the finite check (checkFinite): the ranks' verdict is waited for on the host"
          + " before each checked step, and a group's calls are issued only at groupEnd(); call it outside the group");
    }
  }

  /**
   * After the unit's search was enqueued on {@code stream}: gathers every rank's findings on that stream (a
   * collective: every rank of the plan calls it, at the same unit), waits for the stream, and decides. Allocates
   * nothing where nothing was found.
   *
   * @param stream the stream the search was enqueued on, and the unit will be
   * @param unit what the unit is, for the message
   * @throws NonFiniteException on every rank, with the same message, where any rank's search found one
   */
  public void decide(Stream stream, Unit unit) {
    if (all != null) {
      agreement.exchange().allGather(own, all, stream);
    }
    // The host waits here: a stream's synchronize returns once all its work is done (on NCCL a cudaStreamSynchronize,
    // after the search's kernels and the all-gather, which stream order put before it), and copyTo is a host copy
    // complete on return (on NCCL a device-to-host copy finished before it returns), so read holds every rank's
    // findings and every rank decides the same.
    stream.synchronize();
    (all != null ? all : own).copyTo(read);
    int regions = unit.fields().size();
    for (int r = 0; r < ranks; r++) {
      for (int i = 0; i < regions; i++) {
        if (read[r * longs + 2 * i] != NONE) {
          throw refused(unit, r, i);
        }
      }
    }
  }

  /** What every rank throws: the lowest rank {@code rank} found one first in region {@code region}. */
  private NonFiniteException refused(Unit unit, int rank, int region) {
    long index = read[rank * longs + 2 * region];
    DataType type = unit.types().get(region);
    double value = value(type, read[rank * longs + 2 * region + 1]);
    String field = unit.fields().get(region);
    String message = unit.where() + ": rank " + rank + " would send " + describe(value) + " in field '" + field
        + "' (" + type + "), at index " + index + " (bits " + hex(type, read[rank * longs + 2 * region + 1]) + "),"
        + " into a reduction. The ranks agreed on it before any data moved: every rank fails here, the step goes out"
        + " on none of them, and no rank's data changed. Ranks whose send data holds a NaN or an infinity: "
        + listing(unit) + ". Find where rank " + rank + " produced it (the finite check: @CommPlan(checkFinite),"
        + " PlanBuilder.checkFinite or -Dcommplan.checkFinite; docs/dsl.md, \"Finite checks\")";
    return new NonFiniteException(message, unit.planName(), unit.step(), rank, field, index, value);
  }

  /** Each rank's first finding, {@code rank 2: grads[12345] = NaN}, up to {@value #LISTED} ranks. */
  private String listing(Unit unit) {
    StringBuilder out = new StringBuilder();
    int listed = 0;
    int more = 0;
    for (int r = 0; r < ranks; r++) {
      for (int i = 0; i < unit.fields().size(); i++) {
        long index = read[r * longs + 2 * i];
        if (index == NONE) {
          continue;
        }
        if (listed++ < LISTED) {
          out.append(listed == 1 ? "" : ", ").append("rank ").append(r).append(": ").append(unit.fields().get(i))
              .append('[').append(index).append("] = ")
              .append(text(value(unit.types().get(i), read[r * longs + 2 * i + 1])));
        } else {
          more++;
        }
        break; // a rank's first finding only
      }
    }
    return more == 0 ? out.toString() : out + " and " + more + " more";
  }

  /**
   * The value of an element of {@code type} with {@code bits}, widened to a double (exactly: every value of these
   * types is a double too).
   *
   * @param type a floating-point type
   * @param bits the element's bits, zero-extended
   * @return its value
   */
  public static double value(DataType type, long bits) {
    return switch (type) {
      case F64 -> Double.longBitsToDouble(bits);
      case F32 -> Float.intBitsToFloat((int) bits);
      case F16 -> F16Buffer.fromBits((short) bits);
      case BF16 -> BF16Buffer.fromBits((short) bits);
      case F8E4M3 -> F8E4M3Buffer.fromBits((byte) bits);
      case F8E5M2 -> F8E5M2Buffer.fromBits((byte) bits);
      default -> throw new IllegalArgumentException("not a floating-point type: " + type);
    };
  }

  private static String text(double value) {
    return Double.isNaN(value) ? "NaN" : value > 0 ? "+Infinity" : value < 0 ? "-Infinity" : Double.toString(value);
  }

  private static String describe(double value) {
    return Double.isNaN(value) ? "a NaN" : "an infinity (" + text(value) + ")";
  }

  private static String hex(DataType type, long bits) {
    String digits = Long.toHexString(bits);
    int width = 2 * type.byteSize();
    return "0x" + "0".repeat(Math.max(0, width - digits.length())) + digits;
  }

  /** Frees the findings' buffers; idempotent. Nothing is in flight on them: every decision waited for its stream. */
  @Override
  public void close() {
    own.close();
    if (all != null) {
      all.close();
    }
  }
}
