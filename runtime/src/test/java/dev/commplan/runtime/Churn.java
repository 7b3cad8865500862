package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Issue 34's churn, the same on every backend: build-and-close cycles of a mesh, a plan over one of its axes,
 * and a split with one direct call, on one rank of a world of an even size; and what a process's resources are
 * between cycles (heap after a full GC, live threads, open file descriptors), compared over a late window of
 * samples against an early one, so that what the first cycles make once (pools, classes, JIT) does not count,
 * and what every cycle leaves behind does.
 */
public final class Churn {
  /** Heap growth from the early window to the late one that still counts as flat (GC noise, lazy caches). */
  public static final long HEAP_SLACK_BYTES = 1L << 20;
  /** Threads and file descriptors that may come and go (the JVM's compiler threads, mpirun's pipes). */
  public static final int COUNT_SLACK = 4;

  private Churn() {}

  /**
   * One cycle on this rank of {@code world} (a collective: every rank calls it with the same {@code cycle}):
   * a mesh [dp=2, tp=size/2] ([dp=1, tp=size] for an odd size), a plan with an all-reduce over tp (built,
   * executed, synchronized, closed), a split of the world into even and odd ranks with one direct all-reduce
   * (then closed), and the mesh closed.
   */
  public static void cycle(Communicator world, int cycle) {
    int rank = world.rank();
    int dp = world.size() % 2 == 0 ? 2 : 1;
    try (Mesh mesh = Mesh.builder(world).axis("dp", dp).axis("tp", world.size() / dp).build()) {
      PlanBuilder b = new PlanBuilder("churn.Cycle", mesh, 0, "tp");
      int a = b.buffer("a", DataType.F32, 64, "{\"64\"}", null);
      b.collective(0, Collective.ALL_REDUCE, a, a, ReduceOp.SUM, -1, "tp");
      try (Plan plan = b.build()) {
        F32Buffer av = (F32Buffer) plan.buffer(a);
        av.fill(1);
        plan.execute(world.stream());
        world.stream().synchronize();
        check(av.get(63), mesh.size("tp"), "the plan's all-reduce over tp", cycle);
      }
      try (Communicator half = world.split(rank % 2, rank, "churn half");
          F32Buffer x = F32Buffer.allocate(half, 16)) {
        x.fill(cycle);
        half.allReduce(x, x, ReduceOp.SUM, half.stream());
        half.stream().synchronize();
        check(x.get(15), (float) cycle * half.size(), "the split's direct all-reduce", cycle);
      }
    }
  }

  /**
   * {@code cycles} cycles on every rank of {@code cluster}, {@code perSample} per run, with a sample of this
   * process before the first run and after each (every rank idle then), each handed to {@code printed} too.
   */
  public static List<Sample> onCluster(Cluster cluster, int cycles, int perSample, Consumer<Sample> printed) {
    List<Sample> samples = new ArrayList<>();
    samples.add(sample(0));
    for (int done = 0; done < cycles; done += perSample) {
      int from = done;
      cluster.run(world -> {
        for (int i = from; i < from + perSample; i++) {
          cycle(world, i);
        }
      });
      samples.add(sample(done + perSample));
      printed.accept(samples.getLast());
    }
    return samples;
  }

  private static void check(float got, float want, String what, int cycle) {
    if (got != want) {
      throw new AssertionError("cycle " + cycle + ": " + what + " gave " + got + ", not " + want);
    }
  }

  /**
   * What this process holds after {@code cycles} cycles; {@code rssBytes} (resident memory, -1 without /proc) is
   * printed, not compared: the JIT's code and malloc's arenas move it by megabytes.
   */
  public record Sample(long cycles, long heapBytes, int threads, long fds, long rssBytes) {
    @Override
    public String toString() {
      return String.format(Locale.ROOT, "after %d cycles: heap %.2f MB, %d threads, %d fds, RSS %.1f MB", cycles,
          heapBytes / 1e6, threads, fds, rssBytes / 1e6);
    }
  }

  /** This process's heap after a full GC, live threads and open file descriptors (-1 without /proc). */
  public static Sample sample(long cycles) {
    for (int i = 0; i < 3; i++) {
      System.gc(); // a full collection with the serial collector the children run with
    }
    long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    int threads = ManagementFactory.getThreadMXBean().getThreadCount();
    long fds;
    try (Stream<Path> open = Files.list(Path.of("/proc/self/fd"))) {
      fds = open.count();
    } catch (IOException | UnsupportedOperationException e) {
      fds = -1;
    }
    long rss = -1;
    try (Stream<String> status = Files.lines(Path.of("/proc/self/status"))) {
      rss = status.filter(l -> l.startsWith("VmRSS:")).mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024)
          .findFirst().orElse(-1);
    } catch (IOException | UncheckedIOException | NumberFormatException e) {
      rss = -1;
    }
    return new Sample(cycles, heap, threads, fds, rss);
  }

  /**
   * "" when {@code samples} stay flat: the mean of the last {@code window} samples against the mean of the
   * {@code window} samples after the first {@code skip} (warm-up): heap within {@link #HEAP_SLACK_BYTES}, the
   * highest thread and fd counts within {@link #COUNT_SLACK}. Else what grew, and by how much per cycle.
   */
  public static String growth(List<Sample> samples, int skip, int window) {
    if (samples.size() < skip + 2 * window) {
      throw new IllegalArgumentException(samples.size() + " samples; need " + (skip + 2 * window));
    }
    List<Sample> early = samples.subList(skip, skip + window);
    List<Sample> late = samples.subList(samples.size() - window, samples.size());
    long cycles = late.getLast().cycles() - early.getLast().cycles();
    double heap = mean(late, Sample::heapBytes) - mean(early, Sample::heapBytes);
    long threads = max(late, s -> s.threads()) - max(early, s -> s.threads());
    long fds = max(late, Sample::fds) - max(early, Sample::fds);
    StringBuilder grew = new StringBuilder();
    if (heap > HEAP_SLACK_BYTES) {
      grew.append(String.format(Locale.ROOT, "heap after GC grew %.2f MB (%.0f bytes per cycle); ", heap / 1e6,
          heap / cycles));
    }
    if (threads > COUNT_SLACK) {
      grew.append("live threads grew by ").append(threads).append("; ");
    }
    if (fds > COUNT_SLACK) {
      grew.append("open file descriptors grew by ").append(fds).append("; ");
    }
    return grew.toString();
  }

  private static double mean(List<Sample> samples, java.util.function.ToLongFunction<Sample> value) {
    return samples.stream().mapToLong(value).average().orElse(0);
  }

  private static long max(List<Sample> samples, java.util.function.ToLongFunction<Sample> value) {
    return samples.stream().mapToLong(value).max().orElse(0);
  }
}
