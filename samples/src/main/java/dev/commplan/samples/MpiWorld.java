package dev.commplan.samples;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.mpi.MpiBackend;
import dev.commplan.runtime.mpi.MpiCommunicator;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * A sample as one rank of {@code MPI_COMM_WORLD} (this process, started by mpirun): the rank runs its
 * part, and every rank's result, packed as floats, is all-gathered with the backend's own all-gather, so
 * that rank 0 can print the same report as the other backends. MPI is finalized before this returns.
 */
final class MpiWorld {
  private MpiWorld() {}

  /**
   * What this process gathered: its rank, every rank's packed result in rank order, and where to print
   * (the caller's stream on rank 0, nowhere on the others, so that the report appears once).
   */
  record Gathered(int rank, List<float[]> results, PrintStream out) {}

  /**
   * Runs {@code rank} on this process's rank and gathers every rank's result.
   *
   * @param ranks the rank count asked for with --ranks, or 0; it must match mpirun's -np
   * @param rank this rank's part; its result must have the same length on every rank
   */
  static Gathered run(int ranks, Function<Communicator, float[]> rank, PrintStream out) {
    return run(ranks, null, rank, out);
  }

  /**
   * Runs {@code rank} on this process's rank and gathers every rank's result, on exactly {@code ranks}
   * processes, which {@code asked} asked for ({@code "--mesh [dp=2, tp=4]"}).
   */
  static Gathered run(int ranks, String asked, Function<Communicator, float[]> rank, PrintStream out) {
    try (MpiCommunicator comm = MpiBackend.world()) {
      if (ranks != 0 && ranks != comm.size()) {
        throw new CommPlanException(asked == null
            ? "--ranks " + ranks + " but mpirun started " + comm.size()
                + " processes: with --backend mpi the rank count is mpirun's -np; drop --ranks or match it"
            : asked + " has " + ranks + " ranks but mpirun started " + comm.size()
                + (comm.size() == 1 ? " process" : " processes") + ": run mpirun -np " + ranks + ", or give a mesh of "
                + LossTable.ranks(comm.size()));
      }
      float[] mine = rank.apply(comm);
      int n = comm.size();
      float[] all;
      try (F32Buffer send = F32Buffer.allocate(comm, mine.length);
          F32Buffer recv = F32Buffer.allocate(comm, (long) n * mine.length)) {
        send.copyFrom(mine);
        comm.allGather(send, recv, comm.stream());
        comm.stream().synchronize();
        all = recv.toArray();
      }
      List<float[]> results = new ArrayList<>();
      for (int r = 0; r < n; r++) {
        results.add(Arrays.copyOfRange(all, r * mine.length, (r + 1) * mine.length));
      }
      return new Gathered(comm.rank(), results,
          comm.rank() == 0 ? out : new PrintStream(OutputStream.nullOutputStream()));
    } finally {
      MpiBackend.finalizeMpi();
    }
  }

  /** {@code values} as floats, for packing counts next to results (exact below 2^24). */
  static float[] floats(int[] values) {
    float[] f = new float[values.length];
    for (int i = 0; i < values.length; i++) {
      f[i] = values[i];
    }
    return f;
  }

  /** The inverse of {@link #floats}. */
  static int[] ints(float[] values, int from, int to) {
    int[] v = new int[to - from];
    for (int i = from; i < to; i++) {
      v[i - from] = Math.round(values[i]);
    }
    return v;
  }
}
