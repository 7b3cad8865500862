package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.List;

/**
 * The edges of bucketed plans that issue 40 found giving wrong data silently, as scenarios any backend runs
 * (each rank calls one and gets back what was wrong; {@code LocalBucketEdgesTest} and {@code MpiBucketEdgesMain}
 * run them). The plan has three F32 fields {@code x, y, z} of {@link #COUNT} elements bound to the caller's
 * buffers, all-reduced (SUM) in place, with {@code bucketBytes = 1}: every field is a bucket of its own, cut
 * last-declared first (z, y, x). Rank r's data are {@code r + 1} (x), {@code 10 (r + 1)} (y) and {@code 100 (r +
 * 1)} (z): small integers, exact in F32.
 */
public final class BucketEdges {
  private BucketEdges() {}

  /** Elements of each field. */
  public static final int COUNT = 5;

  /** The three bound buffers of one rank, filled with its data. */
  public record Fields(F32Buffer x, F32Buffer y, F32Buffer z) implements AutoCloseable {
    /** Allocates the three on {@code comm} and fills them with this rank's data. */
    public static Fields allocate(Communicator comm) {
      Fields f = new Fields(F32Buffer.allocate(comm, COUNT), F32Buffer.allocate(comm, COUNT),
          F32Buffer.allocate(comm, COUNT));
      f.fill(comm.rank());
      return f;
    }

    /** Writes rank {@code rank}'s data (from the host: the buffers must not be in flight). */
    public void fill(int rank) {
      x.fill(rank + 1);
      y.fill(10 * (rank + 1));
      z.fill(100 * (rank + 1));
    }

    @Override
    public void close() {
      x.close();
      y.close();
      z.close();
    }
  }

  /** The handles of {@link #plan}'s fields. */
  public static final int X = 0;
  public static final int Y = 1;
  public static final int Z = 2;

  /** The plan over {@code fields}: x, y, z all-reduced in place, every field a bucket. */
  public static Plan plan(Communicator comm, String name, Fields fields) {
    return planBuilder(comm, name, fields).build();
  }

  /** {@link #plan}'s builder, for a test that sets more (its communication stream). */
  public static PlanBuilder planBuilder(Communicator comm, String name, Fields fields) {
    PlanBuilder b = new PlanBuilder(name, comm, 0).bucketBytes(1);
    String[] names = {"x", "y", "z"};
    F32Buffer[] bound = {fields.x(), fields.y(), fields.z()};
    for (int i = 0; i < names.length; i++) {
      int h = b.buffer(names[i], DataType.F32, COUNT, "{\"" + COUNT + "\"}", bound[i]);
      b.allReduce(0, h, h, ReduceOp.SUM);
    }
    return b;
  }

  /** The sum over the ranks of {@code r + 1}: x after one all-reduce. */
  public static float sum(Communicator comm) {
    return comm.size() * (comm.size() + 1) / 2f;
  }

  /** One round: every field marked ready on {@code producer}, in backward order, then finish on {@code consumer}. */
  public static void round(Plan plan, Stream producer, Stream consumer) {
    plan.ready(Z, producer);
    plan.ready(Y, producer);
    plan.ready(X, producer);
    plan.finish(consumer);
  }

  /**
   * Closing a plan issues no collective (issue 40, item 1): a round, then close, leaves every bound buffer as
   * the round made it; a plan built and closed with no round at all changes nothing either.
   */
  public static List<String> closeChangesNothing(Communicator comm) {
    List<String> wrong = new ArrayList<>();
    float s = sum(comm);
    try (Fields f = Fields.allocate(comm)) {
      try (Plan plan = plan(comm, "edges.CloseAfterRound", f)) {
        round(plan, comm.stream(), comm.stream());
        comm.stream().synchronize();
        expect(wrong, comm, "after the round", f, s);
      }
      comm.stream().synchronize();
      expect(wrong, comm, "after closing the plan", f, s);
      Plan idle = plan(comm, "edges.CloseAtOnce", f);
      idle.close();
      comm.stream().synchronize();
      expect(wrong, comm, "after building and closing a second plan", f, s);
    }
    return wrong;
  }

  /**
   * Half the ranks close a plan (after a round) and then make a direct all-reduce, the others make the
   * all-reduce first: the same single call on every rank, since a close is not a collective (issue 40, item 1).
   */
  public static List<String> closeAndDirectCallInEitherOrder(Communicator comm) {
    List<String> wrong = new ArrayList<>();
    float s = sum(comm);
    try (Fields f = Fields.allocate(comm); F32Buffer v = F32Buffer.allocate(comm, COUNT)) {
      v.fill(comm.rank() + 1);
      Plan plan = plan(comm, "edges.CloseOrCall", f);
      round(plan, comm.stream(), comm.stream());
      comm.stream().synchronize();
      if (comm.rank() % 2 == 0) {
        plan.close();
        comm.allReduce(v, v, ReduceOp.SUM, comm.stream());
      } else {
        comm.allReduce(v, v, ReduceOp.SUM, comm.stream());
        plan.close();
      }
      comm.stream().synchronize();
      for (int i = 0; i < COUNT; i++) {
        if (v.get(i) != s) {
          wrong.add("rank " + comm.rank() + ": the direct all-reduce beside a plan's close gave v[" + i + "] = "
              + v.get(i) + ", expected " + s);
          break;
        }
      }
      expect(wrong, comm, "after the close", f, s);
    }
    return wrong;
  }

  /**
   * The two-stream rule (issue 40, item 2): {@code rounds} times, a round finished on the communicator's stream,
   * then at once, with no event or synchronize between them, the whole plan executed on a second stream and a
   * direct all-reduce of x on a third; then the same plan executed on two streams one after the other. Every
   * result must be what one stream would give.
   */
  public static List<String> twoStreamsWithoutAnEvent(Communicator comm, int rounds) {
    List<String> wrong = new ArrayList<>();
    float s = sum(comm);
    float n = comm.size();
    try (Fields f = Fields.allocate(comm); Stream other = comm.newStream(); Stream third = comm.newStream();
        Plan plan = plan(comm, "edges.TwoStreams", f)) {
      for (int round = 0; round < rounds && wrong.isEmpty(); round++) {
        f.fill(comm.rank());
        round(plan, comm.stream(), comm.stream());
        plan.execute(other);                                        // after the buckets: x = n * s
        comm.allReduce(f.x(), f.x(), ReduceOp.SUM, third);          // after the execute: x = n * n * s
        third.synchronize();
        other.synchronize();
        comm.stream().synchronize();
        expectX(wrong, comm, "round " + round + ", finish then execute(other) then a direct call on a third stream",
            f, n * n * s);
        f.fill(comm.rank());
        plan.execute(other);
        plan.execute(third);                                        // after the first execute
        third.synchronize();
        other.synchronize();
        expectX(wrong, comm, "round " + round + ", execute(other) then execute(third)", f, n * s);
      }
    }
    return wrong;
  }

  private static void expect(List<String> wrong, Communicator comm, String when, Fields f, float s) {
    check(wrong, comm, when, "x", f.x(), s);
    check(wrong, comm, when, "y", f.y(), 10 * s);
    check(wrong, comm, when, "z", f.z(), 100 * s);
  }

  private static void expectX(List<String> wrong, Communicator comm, String when, Fields f, float x) {
    check(wrong, comm, when, "x", f.x(), x);
  }

  private static void check(List<String> wrong, Communicator comm, String when, String name, F32Buffer b, float e) {
    for (int i = 0; i < COUNT; i++) {
      if (b.get(i) != e) {
        wrong.add("rank " + comm.rank() + " of " + comm.size() + ", " + when + ": " + name + "[" + i + "] = "
            + b.get(i) + ", expected " + e);
        return;
      }
    }
  }
}
