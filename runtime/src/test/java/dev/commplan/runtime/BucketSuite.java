package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Bucketed plans on any backend: a rank calls {@link #runRounds} and gets back what was wrong. The plan has F32
 * fields of the {@link #COUNTS} below, all-reduced (SUM, in place) in step 0, and one more field all-reduced in
 * step 1, cut with {@link #BUCKET_BYTES} around the boundaries (a field of exactly the cap, one of the cap plus
 * one element, two that fill it exactly). Each round every rank writes new random data into every field through
 * a backend's {@link Producer} (whose work the backend holds back until every rank has finished the round, where
 * it can, so that a bucket that did not wait for its producer reduces the old data every time, not by luck),
 * marks the fields ready in an order of its own, and finishes on its communicator's stream; the results are then
 * compared with the sum of every rank's data, element by element (the data are small integers: exact in F32).
 */
public final class BucketSuite {
  private BucketSuite() {}

  /** The cap: 16 F32 elements. */
  public static final long BUCKET_BYTES = 64;

  /**
   * The step-0 fields' counts; reversed (the cut's order) with a 16-element cap: f6 + f5 = 13 + 3 (exactly the
   * cap), f4 = 17 (over it: alone), f3 + f2 = 8 + 8 (exactly), f1 = 16 (exactly, alone), f0 = 5.
   */
  public static final long[] COUNTS = {5, 16, 8, 8, 17, 3, 13};

  /** The buckets {@link #COUNTS} make, in enqueue order: step 0's latest fields first, then step 1's one field. */
  public static final List<List<String>> EXPECTED_BUCKETS = List.of(List.of("f6", "f5"), List.of("f4"),
      List.of("f3", "f2"), List.of("f1"), List.of("f0"), List.of("late"));

  /** How a backend writes a field on a stream: work it holds back, where it can, until {@link #release}. */
  public interface Producer {
    /**
     * Enqueues the write of {@code values} into {@code field} on a producer stream of {@code comm}'s rank.
     *
     * @return the stream the write is on, for {@link Plan#ready}
     */
    Stream write(Communicator comm, F32Buffer field, float[] values) throws Exception;

    /** Every rank has finished its round: held writes may run. */
    void release(Communicator comm) throws Exception;
  }

  /** The plan: fields f0..f6 of {@link #COUNTS} in step 0 and {@code late} (7 elements) in step 1. */
  public static Plan build(Communicator comm, String name, boolean hostAccessGuard, Stream commStream) {
    PlanBuilder b = new PlanBuilder(name, comm, 0).bucketBytes(BUCKET_BYTES).hostAccessGuard(hostAccessGuard);
    if (commStream != null) {
      b.commStream(commStream);
    }
    for (int i = 0; i < COUNTS.length; i++) {
      int h = b.buffer("f" + i, DataType.F32, COUNTS[i], "{\"" + COUNTS[i] + "\"}", null);
      b.allReduce(0, h, h, ReduceOp.SUM);
    }
    int late = b.buffer("late", DataType.F32, 7, "{\"7\"}", null);
    b.allReduce(1, late, late, ReduceOp.SUM);
    return b.build();
  }

  /** The fields of {@link #build}'s plan, by handle. */
  public static int fields() {
    return COUNTS.length + 1;
  }

  /** The count of field {@code handle}. */
  public static long count(int handle) {
    return handle < COUNTS.length ? COUNTS[handle] : 7;
  }

  /** What {@code rank} writes into field {@code handle} in round {@code round}: small random integers. */
  public static float[] values(int round, int rank, int handle) {
    Random random = new Random(1_000_003L * round + 1_009L * rank + handle);
    float[] v = new float[(int) count(handle)];
    for (int j = 0; j < v.length; j++) {
      v[j] = random.nextInt(201) - 100;
    }
    return v;
  }

  /** The order {@code rank} marks the fields in, in round {@code round}: a shuffle of its own. */
  public static int[] markOrder(int round, int rank) {
    List<Integer> order = new ArrayList<>();
    for (int h = 0; h < fields(); h++) {
      order.add(h);
    }
    java.util.Collections.shuffle(order, new Random(31L * round + rank));
    return order.stream().mapToInt(Integer::intValue).toArray();
  }

  /**
   * Runs {@code rounds} rounds of {@code plan} (made by {@link #build}) on this rank: writes through {@code
   * producer}, marks every field ready in this rank's order, finishes on the communicator's stream, waits for
   * every rank ({@code everyRankFinished}), releases the producer, synchronizes and compares.
   *
   * @return what was wrong, one line each; empty when every element of every round was right
   */
  public static List<String> runRounds(Communicator comm, Plan plan, int rounds, Producer producer,
      Runnable everyRankFinished) throws Exception {
    List<String> wrong = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      for (int h : markOrder(round, comm.rank())) {
        Stream s = producer.write(comm, (F32Buffer) plan.buffer(h), values(round, comm.rank(), h));
        plan.ready(h, s);
      }
      plan.finish(comm.stream());
      everyRankFinished.run();
      producer.release(comm);
      comm.stream().synchronize();
      for (int h = 0; h < fields(); h++) {
        float[] expected = new float[(int) count(h)];
        for (int r = 0; r < comm.size(); r++) {
          float[] v = values(round, r, h);
          for (int j = 0; j < expected.length; j++) {
            expected[j] += v[j];
          }
        }
        float[] got = ((F32Buffer) plan.buffer(h)).toArray();
        for (int j = 0; j < expected.length; j++) {
          if (got[j] != expected[j]) {
            if (wrong.size() < 20) {
              wrong.add("rank " + comm.rank() + " of " + comm.size() + ", round " + round + ", field "
                  + plan.schedule().planName() + "." + (h < COUNTS.length ? "f" + h : "late") + "[" + j + "]: "
                  + got[j] + ", expected " + expected[j]);
            } else if (wrong.size() == 20) {
              wrong.add("... (more not shown)");
            }
            break;
          }
        }
      }
    }
    return wrong;
  }
}
