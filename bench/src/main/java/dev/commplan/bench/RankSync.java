package dev.commplan.bench;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.timing.SteadyState;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What nccl-tests' {@code Barrier} and {@code Allreduce(args, &value, average)} do between the threads
 * of one process: all ranks of a {@code Cluster} run as threads of this JVM on both backends, so a
 * barrier and one slot per rank are enough to line the ranks up before a timed loop and to average (or
 * sum) what each measured.
 */
final class RankSync {
  /** Long enough for a 1 GiB collective on the local backend; short enough that a lost rank fails the run. */
  private static final long TIMEOUT_S = 600;

  private final CyclicBarrier barrier;
  private final double[][] slots;

  RankSync(int ranks) {
    this.barrier = new CyclicBarrier(ranks);
    this.slots = new double[ranks][];
  }

  /** The warm-up's agreement for {@code rank}: every rank's figures averaged, through this barrier. */
  SteadyState.Consensus consensus(int rank) {
    return slots.length == 1 ? SteadyState.Consensus.ALONE : values -> average(rank, values);
  }

  /** Waits for every rank. */
  void await() {
    if (slots.length == 1) {
      return;
    }
    try {
      barrier.await(TIMEOUT_S, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CommPlanException("interrupted while waiting for the other ranks", e);
    } catch (BrokenBarrierException | TimeoutException e) {
      throw new CommPlanException("another rank stopped (or took more than " + TIMEOUT_S + " s)", e);
    }
  }

  /**
   * Breaks the barrier so that the other ranks stop waiting for one that failed: call from a rank's
   * {@code catch} before rethrowing.
   */
  void fail() {
    barrier.reset();
  }

  /** Every rank's {@code value}, averaged over ranks; every rank gets the result. */
  double average(int rank, double value) {
    return sum(rank, value) / slots.length;
  }

  /** Every rank's {@code value}, summed over ranks; every rank gets the result. */
  double sum(int rank, double value) {
    return sums(rank, new double[] {value})[0];
  }

  /** Every rank's {@code values}, averaged element by element over ranks; every rank gets the same array. */
  double[] average(int rank, double[] values) {
    double[] total = sums(rank, values);
    for (int i = 0; i < total.length; i++) {
      total[i] /= slots.length;
    }
    return total;
  }

  /** Every rank's {@code values}, summed element by element in rank order (so equal on every rank). */
  private double[] sums(int rank, double[] values) {
    slots[rank] = values.clone();
    await(); // all written
    double[] total = new double[values.length];
    for (double[] v : slots) {
      for (int i = 0; i < total.length; i++) {
        total[i] += v[i];
      }
    }
    await(); // all read, slots free for the next round
    return total;
  }
}
