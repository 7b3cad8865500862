package dev.commplan.runtime.mpi;

import dev.commplan.runtime.Churn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One process of the MPI backend's churn ({@link MpiChurnTest}), under mpirun with a small heap: {@code args[0]}
 * cycles of {@link Churn#cycle} on the world, a sample of this process's resources every {@code args[1]} cycles
 * (every rank between the same two cycles). Prints its samples and {@code mpi churn rank R: flat} or {@code
 * ... GREW ...}; exits 0 when flat.
 */
public final class MpiChurnMain {
  private MpiChurnMain() {}

  public static void main(String[] args) {
    int cycles = Integer.parseInt(args[0]);
    int perSample = Integer.parseInt(args[1]);
    List<Churn.Sample> samples = new ArrayList<>();
    long start = System.nanoTime();
    int rank;
    try (MpiCommunicator world = MpiBackend.world(Duration.ofSeconds(60))) {
      rank = world.rank();
      samples.add(Churn.sample(0));
      for (int done = 0; done < cycles; done += perSample) {
        for (int i = done; i < done + perSample; i++) {
          Churn.cycle(world, i);
        }
        samples.add(Churn.sample(done + perSample));
        if (rank == 0) {
          System.out.println("mpi churn rank 0 " + samples.getLast());
        }
      }
    }
    String grew = Churn.growth(samples, 2, Math.max(1, samples.size() / 4));
    // one println per line: mpirun interleaves the processes' output at each write
    System.out.println(String.format(Locale.ROOT, "mpi churn rank %d: %s (%d cycles in %.1f s; %s; %s)", rank,
        grew.isEmpty() ? "flat" : "GREW " + grew, cycles, (System.nanoTime() - start) / 1e9, samples.get(2),
        samples.getLast()));
    System.out.flush();
    MpiBackend.finalizeMpi();
    System.exit(grew.isEmpty() ? 0 : 1);
  }
}
