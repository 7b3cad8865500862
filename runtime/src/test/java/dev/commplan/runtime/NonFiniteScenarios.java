package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.conformance.TypedBits;
import dev.commplan.model.Collective;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The finite check's proof (issue 43, item 3), the same on every backend: run by every rank of a communicator of 4
 * ranks (local: {@code NonFinitePlanTest}; MPI: {@code MpiFiniteMain}, one process a rank), each scenario a plan built
 * with {@code checkFinite}, every rank in the same order. Where one rank holds a NaN or an infinity in a field a
 * reduction sends, every rank must get {@link NonFiniteException} naming that rank, the field, the index and the
 * value, and no rank's buffers (send and receive, every field of the plan) may differ from what they held before
 * the execute; with the value made finite again, the same plan must give bitwise what a twin plan without the
 * check gives. Each scenario records what went wrong instead of throwing, so that every rank goes on to the same
 * collectives.
 */
public final class NonFiniteScenarios {
  /** Where the bad value goes: index 12,345 of the field. */
  public static final int INDEX = 12_345;
  /** The rank that holds it. */
  public static final int BAD_RANK = 2;
  /** Elements of the field a reduction sends: 4 × 4096, at least {@link #INDEX} + 1 and a multiple of 4. */
  static final int COUNT = 16_384;
  /** The reductions and where they put the result. */
  private static final Collective[] REDUCTIONS = {Collective.ALL_REDUCE, Collective.REDUCE, Collective.REDUCE_SCATTER};
  private static final DataType[] FLOATS = {DataType.F64, DataType.F32, DataType.F16, DataType.BF16, DataType.F8E4M3,
      DataType.F8E5M2};

  private NonFiniteScenarios() {}

  /** The bits of a NaN of {@code type}. */
  public static long nanBits(DataType type) {
    return switch (type) {
      case F64 -> 0x7FF8000000000000L;
      case F32 -> 0x7FC00000L;
      case F16 -> 0x7E00L;
      case BF16 -> 0x7FC0L;
      case F8E4M3 -> 0x7FL;
      case F8E5M2 -> 0x7EL;
      default -> throw new IllegalArgumentException(type.toString());
    };
  }

  /** The bits of an infinity of {@code type} (negative: with the sign bit), or -1 for F8E4M3, which has none. */
  public static long infinityBits(DataType type, boolean negative) {
    long bits = switch (type) {
      case F64 -> 0x7FF0000000000000L;
      case F32 -> 0x7F800000L;
      case F16 -> 0x7C00L;
      case BF16 -> 0x7F80L;
      case F8E5M2 -> 0x7CL;
      default -> -1L;
    };
    return bits < 0 || !negative ? bits : bits | 1L << (8 * type.byteSize() - 1);
  }

  /** {@code (rank + 1) / 2 + (i % 4) / 4}, rounded to {@code type}: finite, different per rank and element. */
  static long[] finite(DataType type, long count, int rank) {
    long[] bits = new long[Math.toIntExact(count)];
    for (int i = 0; i < bits.length; i++) {
      float v = (rank + 1) * 0.5f + (i % 4) * 0.25f;
      bits[i] = switch (type) {
        case F64 -> Double.doubleToRawLongBits(v);
        case F32 -> Float.floatToRawIntBits(v) & 0xFFFF_FFFFL;
        case F16 -> F16Buffer.toBits(v) & 0xFFFFL;
        case BF16 -> BF16Buffer.toBits(v) & 0xFFFFL;
        case F8E4M3 -> F8E4M3Buffer.toBits(v) & 0xFFL;
        case F8E5M2 -> F8E5M2Buffer.toBits(v) & 0xFFL;
        default -> throw new IllegalArgumentException(type.toString());
      };
    }
    return bits;
  }

  /**
   * Every scenario on this rank; collective over {@code comm}, which must have 4 ranks.
   *
   * @return what went wrong on this rank, empty when all is right
   */
  public static List<String> run(Communicator comm) {
    List<String> wrong = new ArrayList<>();
    if (comm.size() != 4) {
      wrong.add("the scenarios need 4 ranks, not " + comm.size());
      return wrong;
    }
    for (DataType type : FLOATS) {
      for (Collective c : REDUCTIONS) {
        for (boolean inPlace : new boolean[] {false, true}) {
          reduction(comm, c, type, inPlace, nanBits(type), wrong);
          if (infinityBits(type, false) >= 0) {
            reduction(comm, c, type, inPlace, infinityBits(type, c == Collective.REDUCE), wrong);
          }
        }
      }
    }
    lowestRankAndSecondField(comm, wrong);
    afterAnEarlierStep(comm, wrong);
    captured(comm, wrong);
    bucketed(comm, wrong);
    nothingToSearch(comm, wrong);
    return wrong;
  }

  /**
   * A plan of one step: {@code c} of field {@code grads} ({@code type}, {@value #COUNT} elements sent; out of place
   * into {@code out}), then an in-place all-reduce of a clean F32 field {@code bias}. Rank {@value #BAD_RANK} puts
   * {@code badBits} at {@value #INDEX} of {@code grads}.
   */
  private static void reduction(Communicator comm, Collective c, DataType type, boolean inPlace, long badBits,
      List<String> wrong) {
    String what = c.annotation() + " " + type + (inPlace ? " in place" : " out of place") + " bits 0x"
        + Long.toHexString(badBits);
    try (Plan checked = reductionPlan(comm, "t.Checked", c, type, inPlace, true);
        Plan twin = reductionPlan(comm, "t.Twin", c, type, inPlace, false)) {
      fill(checked, comm.rank());
      if (comm.rank() == BAD_RANK) {
        setBits(checked.buffer(0), INDEX, badBits);
      }
      long[][] before = snapshot(checked);
      NonFiniteException e = refused(checked, comm, wrong, what);
      expect(e, BAD_RANK, "grads", INDEX, FiniteValue.of(type, badBits), what, wrong);
      unchanged(checked, before, what, wrong);
      // made finite again, the checked plan gives bitwise what its twin without the check gives
      fill(checked, comm.rank());
      fill(twin, comm.rank());
      checked.execute(comm.stream());
      twin.execute(comm.stream());
      comm.stream().synchronize();
      if (!Arrays.deepEquals(snapshot(checked), snapshot(twin))) {
        wrong.add(what + ": the clean run differs from the plan without the check");
      }
    }
  }

  static Plan reductionPlan(Communicator comm, String name, Collective c, DataType type, boolean inPlace,
      boolean check) {
    PlanBuilder b = new PlanBuilder(name, comm, 0).checkFinite(check);
    long recvCount = c == Collective.REDUCE_SCATTER ? COUNT / comm.size() : COUNT;
    int grads = b.buffer("grads", type, COUNT, "{\"" + COUNT + "\"}", null);
    int out = inPlace ? grads : b.buffer("out", type, recvCount, "{\"" + recvCount + "\"}", null);
    int bias = b.buffer("bias", DataType.F32, 1000, "{\"1000\"}", null);
    b.collective(0, c, grads, out, ReduceOp.SUM, c.hasRoot() ? 0 : -1);
    b.allReduce(0, bias, bias, ReduceOp.SUM);
    return b.build();
  }

  /**
   * Ranks 3 and 1 hold an infinity in {@code b} (the second field of a step of two checked fields), rank 3 a NaN
   * in {@code a} too: every rank names rank 1 (the lowest), field {@code b}.
   */
  private static void lowestRankAndSecondField(Communicator comm, List<String> wrong) {
    String what = "two ranks, the second field";
    try (Plan plan = twoFields(comm, "t.Two")) {
      fill(plan, comm.rank());
      if (comm.rank() == 3) {
        setBits(plan.buffer(0), 7, nanBits(DataType.F32));
        setBits(plan.buffer(1), 5, infinityBits(DataType.F64, true));
      }
      if (comm.rank() == 1) {
        setBits(plan.buffer(1), 4095, infinityBits(DataType.F64, false));
      }
      long[][] before = snapshot(plan);
      NonFiniteException e = refused(plan, comm, wrong, what);
      expect(e, 1, "b", 4095, Double.POSITIVE_INFINITY, what, wrong);
      if (e != null && !e.getMessage().contains("rank 1: b[4095] = +Infinity, rank 3: a[7] = NaN")) {
        wrong.add(what + ": the message does not list both ranks: " + e.getMessage());
      }
      unchanged(plan, before, what, wrong);
    }
  }

  private static Plan twoFields(Communicator comm, String name) {
    PlanBuilder b = new PlanBuilder(name, comm, 0).checkFinite(true);
    int a = b.buffer("a", DataType.F32, 4096, "{\"4096\"}", null);
    int bb = b.buffer("b", DataType.F64, 4096, "{\"4096\"}", null);
    int sum = b.buffer("sum", DataType.F32, 4096, "{\"4096\"}", null);
    b.allReduce(0, a, sum, ReduceOp.SUM);
    b.allReduce(0, bb, bb, ReduceOp.MAX);
    return b.build();
  }

  /**
   * Step 0 gathers every rank's {@code part} into {@code all}, step 1 all-reduces {@code all}: rank 1's NaN at
   * {@code part[4153]} lands at {@code all[12345]} on every rank, so the search, in stream order after step 0, finds
   * it on every rank and all name rank 0. Step 0 went out (every rank holds the gathered data), step 1 did not.
   */
  private static void afterAnEarlierStep(Communicator comm, List<String> wrong) {
    String what = "after an earlier step";
    PlanBuilder b = new PlanBuilder("t.Steps", comm, 0).checkFinite(true);
    int part = b.buffer("part", DataType.F32, 8192, "{\"8192\"}", null);
    int all = b.buffer("all", DataType.F32, 8192L * comm.size(), "{\"ranks\", \"8192\"}", null);
    b.allGather(0, part, all);
    b.allReduce(1, all, all, ReduceOp.SUM);
    try (Plan plan = b.build()) {
      fill(plan, comm.rank());
      if (comm.rank() == 1) {
        setBits(plan.buffer(part), INDEX - 8192, nanBits(DataType.F32));
      }
      long[] partBefore = TypedBits.read(plan.buffer(part));
      NonFiniteException e = refused(plan, comm, wrong, what);
      expect(e, 0, "all", INDEX, Double.NaN, what, wrong);
      F32Buffer gathered = (F32Buffer) plan.buffer(all);
      if (!Float.isNaN(gathered.get(INDEX)) || gathered.get(0) != 0.5f) {
        wrong.add(what + ": step 0's all-gather did not go out before the refusal (all[0] = " + gathered.get(0) + ")");
      }
      if (!Arrays.equals(partBefore, TypedBits.read(plan.buffer(part)))) {
        wrong.add(what + ": part changed");
      }
      if (e != null && e.step() != 1) {
        wrong.add(what + ": the exception names step " + e.step() + ", not 1");
      }
    }
  }

  /** A captured plan with the check is no graph: each launch checks, as an execute does. */
  private static void captured(Communicator comm, List<String> wrong) {
    String what = "a captured plan";
    try (Plan plan = reductionPlan(comm, "t.Captured", Collective.ALL_REDUCE, DataType.F32, true, true)) {
      CapturedPlan launches = plan.capture(comm.stream());
      if (launches.isGraph()) {
        wrong.add(what + ": a plan with the finite check was captured into a graph");
      }
      fill(plan, comm.rank());
      if (comm.rank() == BAD_RANK) {
        setBits(plan.buffer(0), INDEX, nanBits(DataType.F32));
      }
      long[][] before = snapshot(plan);
      NonFiniteException e = null;
      try {
        launches.launch();
        comm.stream().synchronize();
        wrong.add(what + ": the launch was not refused");
      } catch (NonFiniteException refused) {
        e = refused;
      }
      expect(e, BAD_RANK, "grads", INDEX, Double.NaN, what, wrong);
      unchanged(plan, before, what, wrong);
      fill(plan, comm.rank());
      launches.launch();
      comm.stream().synchronize();
    }
  }

  /**
   * A bucketed plan: {@code f1} and {@code f2} in buckets of their own (bucket 0 is {@code f2}, the last declared).
   * Rank {@value #BAD_RANK}'s NaN in {@code f1}: {@code ready(f1)} throws on every rank, bucket 0 went out, bucket 1
   * did not, and {@code finish} ends the round without more; the next round, clean, reduces both.
   */
  private static void bucketed(Communicator comm, List<String> wrong) {
    String what = "a bucketed plan";
    PlanBuilder b = new PlanBuilder("t.Buckets", comm, 0).checkFinite(true).bucketBytes(4096 * 4);
    int f1 = b.buffer("f1", DataType.F32, 4096, "{\"4096\"}", null);
    int f2 = b.buffer("f2", DataType.F32, 4096, "{\"4096\"}", null);
    b.allReduce(0, f1, f1, ReduceOp.SUM);
    b.allReduce(0, f2, f2, ReduceOp.SUM);
    try (Plan plan = b.build()) {
      fill(plan, comm.rank());
      if (comm.rank() == BAD_RANK) {
        setBits(plan.buffer(f1), INDEX % 4096, nanBits(DataType.F32));
      }
      long[] f1Before = TypedBits.read(plan.buffer(f1));
      plan.ready(f2, comm.stream());
      NonFiniteException e = null;
      try {
        plan.ready(f1, comm.stream());
        wrong.add(what + ": ready(f1) was not refused");
      } catch (NonFiniteException refused) {
        e = refused;
      }
      expect(e, BAD_RANK, "f1", INDEX % 4096, Double.NaN, what, wrong);
      plan.finish(comm.stream());
      comm.stream().synchronize();
      float sum = 0.5f + 1f + 1.5f + 2f; // element 0 of every rank's f2
      if (((F32Buffer) plan.buffer(f2)).get(0) != sum || !Arrays.equals(f1Before, TypedBits.read(plan.buffer(f1)))) {
        wrong.add(what + ": bucket 0 should have gone out and bucket 1 not: f2[0] = "
            + ((F32Buffer) plan.buffer(f2)).get(0));
      }
      fill(plan, comm.rank());
      plan.ready(f1, comm.stream());
      plan.ready(f2, comm.stream());
      plan.finish(comm.stream());
      comm.stream().synchronize();
      if (((F32Buffer) plan.buffer(f1)).get(0) != sum || ((F32Buffer) plan.buffer(f2)).get(0) != sum) {
        wrong.add(what + ": the clean round did not reduce both fields");
      }
    } catch (RuntimeException e) {
      wrong.add(what + ": " + e);
    }
  }

  /** A plan with the check but no floating-point reduction searches nothing, and says so. */
  private static void nothingToSearch(Communicator comm, List<String> wrong) {
    PlanBuilder b = new PlanBuilder("t.Integers", comm, 0).checkFinite(true);
    int x = b.buffer("x", DataType.I32, 64, "{\"64\"}", null);
    int y = b.buffer("y", DataType.F32, 64, "{\"64\"}", null);
    int all = b.buffer("all", DataType.F32, 64L * comm.size(), "{\"ranks\", \"64\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    b.allGather(0, y, all);
    try (Plan plan = b.build()) {
      ((F32Buffer) plan.buffer(y)).fill(Float.NaN);
      plan.execute(comm.stream());
      comm.stream().synchronize();
      if (!plan.checkFinite() || !plan.describe().contains("finite check: no step reduces a floating-point field")) {
        wrong.add("nothing to search: " + plan.describe());
      }
    } catch (RuntimeException e) {
      wrong.add("nothing to search: " + e);
    }
  }

  /** Executes {@code plan}, expecting the refusal; synchronizes. */
  private static NonFiniteException refused(Plan plan, Communicator comm, List<String> wrong, String what) {
    try {
      plan.execute(comm.stream());
      comm.stream().synchronize();
      wrong.add(what + ": not refused on rank " + comm.rank());
      return null;
    } catch (NonFiniteException e) {
      return e;
    }
  }

  private static void expect(NonFiniteException e, int rank, String field, long index, double value, String what,
      List<String> wrong) {
    if (e == null) {
      return;
    }
    boolean valueRight = Double.isNaN(value) ? Double.isNaN(e.value()) : value == e.value();
    if (e.rank() != rank || !e.field().equals(field) || e.index() != index || !valueRight) {
      wrong.add(what + ": expected rank " + rank + ", " + field + "[" + index + "] = " + value + ", got rank " + e.rank()
          + ", " + e.field() + "[" + e.index() + "] = " + e.value() + ": " + e.getMessage());
    }
    if (!e.getMessage().contains("rank " + rank + " would send") || !e.getMessage().contains("at index " + index)) {
      wrong.add(what + ": the message does not name rank, field and index: " + e.getMessage());
    }
  }

  private static void unchanged(Plan plan, long[][] before, String what, List<String> wrong) {
    long[][] after = snapshot(plan);
    for (int h = 0; h < before.length; h++) {
      if (!Arrays.equals(before[h], after[h])) {
        wrong.add(what + ": buffer " + h + " (" + plan.buffer(h) + ") changed after the refusal");
      }
    }
  }

  /** Every buffer of the plan, as bits. */
  static long[][] snapshot(Plan plan) {
    List<long[]> out = new ArrayList<>();
    for (int h = 0; ; h++) {
      try {
        out.add(TypedBits.read(plan.buffer(h)));
      } catch (IndexOutOfBoundsException e) {
        return out.toArray(long[][]::new);
      }
    }
  }

  /** Every buffer of the plan filled with this rank's finite pattern. */
  static void fill(Plan plan, int rank) {
    for (int h = 0; ; h++) {
      Buffer b;
      try {
        b = plan.buffer(h);
      } catch (IndexOutOfBoundsException e) {
        return;
      }
      if (b.dataType().isFloatingPoint()) {
        TypedBits.write(b, finite(b.dataType(), b.length(), rank));
      } else {
        TypedBits.write(b, new long[Math.toIntExact(b.length())]);
      }
    }
  }

  static void setBits(Buffer buffer, long index, long bits) {
    long[] all = TypedBits.read(buffer);
    all[Math.toIntExact(index)] = bits;
    TypedBits.write(buffer, all);
  }

  /** The value of bits of a type, as the exception widens it. */
  static final class FiniteValue {
    private FiniteValue() {}

    static double of(DataType type, long bits) {
      return switch (type) {
        case F64 -> Double.longBitsToDouble(bits);
        case F32 -> Float.intBitsToFloat((int) bits);
        case F16 -> F16Buffer.fromBits((short) bits);
        case BF16 -> BF16Buffer.fromBits((short) bits);
        case F8E4M3 -> F8E4M3Buffer.fromBits((byte) bits);
        case F8E5M2 -> F8E5M2Buffer.fromBits((byte) bits);
        default -> throw new IllegalArgumentException(type.toString());
      };
    }
  }
}
