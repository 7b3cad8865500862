package dev.commplan.runtime.local;

import dev.commplan.runtime.Churn;
import dev.commplan.runtime.CommOptions;
import java.time.Duration;
import java.util.List;

/**
 * The local backend's churn ({@link LocalChurnTest}), in a JVM of its own with a small heap: {@code args[0]}
 * cycles of {@link Churn#cycle} on a cluster of 4 ranks, {@code args[1]} per run, with the agreement check
 * {@code args[2]} ({@code on} or {@code off}); a sample of the process's resources between runs, when every
 * rank is idle. Prints each sample and {@code churn: flat} or {@code churn: GREW ...}; exits 0 when flat.
 */
public final class LocalChurnMain {
  private LocalChurnMain() {}

  public static void main(String[] args) {
    int cycles = Integer.parseInt(args[0]);
    int perRun = Integer.parseInt(args[1]);
    boolean check = args[2].equals("on");
    List<Churn.Sample> samples;
    long start = System.nanoTime();
    try (LocalCluster cluster = new LocalCluster(4, CommOptions.timeout(Duration.ofSeconds(60)).withAgreementCheck(check))) {
      samples = Churn.onCluster(cluster, cycles, perRun, sample -> System.out.println("churn " + sample));
    }
    String grew = Churn.growth(samples, 2, Math.max(1, samples.size() / 4));
    System.out.printf(java.util.Locale.ROOT, "churn: %s (%d cycles in %.1f s)%n", grew.isEmpty() ? "flat" : "GREW " + grew,
        cycles, (System.nanoTime() - start) / 1e9);
    System.exit(grew.isEmpty() ? 0 : 1);
  }
}
