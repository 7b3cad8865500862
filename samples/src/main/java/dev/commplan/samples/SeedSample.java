package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.mpi.MpiBackend;
import dev.commplan.runtime.mpi.MpiCommunicator;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs the {@link Seed} plan on N ranks and prints, per collective and rank, exactly
 * {@code <collective> rank <r>: <values>}.
 */
final class SeedSample {
  /** What the root broadcasts; the other ranks start with -1 so that a missed broadcast shows. */
  static final float[] ROOT_PARAMS = {3f, 1f, 4f, 1f, 5f};

  private SeedSample() {}

  /** What one rank saw after the plan ran. */
  record RankResult(float[] allReduce, float[] allGather, float[] reduceScatter, float[] broadcast) {}

  static void run(String backend, int ranks, PrintStream out) {
    List<RankResult> results;
    try (Cluster cluster = Backends.cluster(backend, ranks)) {
      results = cluster.call(SeedSample::runRank);
    }
    printAll(results, out);
  }

  /**
   * The seed sample as one rank of {@code MPI_COMM_WORLD} (this process, started by mpirun): every rank
   * runs the plan, the ranks' results are gathered with the backend's own all-gather, and rank 0 prints
   * them exactly as the other backends do; the other ranks print nothing. MPI is finalized at the end.
   *
   * @param ranks the rank count the user asked for with --ranks, or 0; it must match mpirun's
   */
  static void runMpi(int ranks, PrintStream out) {
    try {
      List<RankResult> results;
      int rank;
      try (MpiCommunicator comm = MpiBackend.world()) {
        rank = comm.rank();
        if (ranks != 0 && ranks != comm.size()) {
          throw new CommPlanException("--ranks " + ranks + " but mpirun started " + comm.size()
              + " processes: with --backend mpi the rank count is mpirun's -np; drop --ranks or match it");
        }
        results = gather(comm, runRank(comm));
      }
      if (rank == 0) {
        printAll(results, out);
      }
    } finally {
      MpiBackend.finalizeMpi();
    }
  }

  /** Every rank's result, on every rank: one all-gather of the results packed as floats. */
  private static List<RankResult> gather(Communicator comm, RankResult mine) {
    int n = comm.size();
    int per = 1 + n + 1 + ROOT_PARAMS.length;
    float[] packed = new float[per];
    packed[0] = mine.allReduce()[0];
    System.arraycopy(mine.allGather(), 0, packed, 1, n);
    packed[1 + n] = mine.reduceScatter()[0];
    System.arraycopy(mine.broadcast(), 0, packed, 2 + n, ROOT_PARAMS.length);
    float[] all;
    try (F32Buffer send = F32Buffer.allocate(comm, per); F32Buffer recv = F32Buffer.allocate(comm, (long) n * per)) {
      send.copyFrom(packed);
      comm.allGather(send, recv, comm.stream());
      comm.stream().synchronize();
      all = recv.toArray();
    }
    List<RankResult> results = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      int at = r * per;
      results.add(new RankResult(Arrays.copyOfRange(all, at, at + 1), Arrays.copyOfRange(all, at + 1, at + 1 + n),
          Arrays.copyOfRange(all, at + 1 + n, at + 2 + n), Arrays.copyOfRange(all, at + 2 + n, at + per)));
    }
    return results;
  }

  private static RankResult runRank(Communicator comm) {
    int r = comm.rank();
    int n = comm.size();
    try (SeedPlan plan = SeedPlan.builder().build(comm)) {
      plan.total().set(0, r + 1);
      plan.mine().set(0, 10f * (r + 1));
      float[] contributions = new float[n];
      for (int i = 0; i < n; i++) {
        contributions[i] = i + 1;
      }
      plan.contributions().copyFrom(contributions);
      if (r == 0) {
        plan.params().copyFrom(ROOT_PARAMS);
      } else {
        plan.params().fill(-1f);
      }

      plan.execute(comm.stream());
      // execute only enqueues, as NCCL does: the results are not there until the stream is synchronized.
      comm.stream().synchronize();

      return new RankResult(
          plan.total().toArray(), plan.gathered().toArray(), plan.slice().toArray(), plan.params().toArray());
    }
  }

  private static void printAll(List<RankResult> results, PrintStream out) {
    for (int r = 0; r < results.size(); r++) {
      out.println("all-reduce rank " + r + ": " + Arrays.toString(results.get(r).allReduce()));
    }
    for (int r = 0; r < results.size(); r++) {
      out.println("all-gather rank " + r + ": " + Arrays.toString(results.get(r).allGather()));
    }
    for (int r = 0; r < results.size(); r++) {
      out.println("reduce-scatter rank " + r + ": " + Arrays.toString(results.get(r).reduceScatter()));
    }
    for (int r = 0; r < results.size(); r++) {
      out.println("broadcast rank " + r + ": " + Arrays.toString(results.get(r).broadcast()));
    }
  }
}
