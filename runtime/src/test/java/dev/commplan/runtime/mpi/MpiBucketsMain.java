package dev.commplan.runtime.mpi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BucketSuite;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Event;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.Plan;
import java.util.ArrayList;
import java.util.List;

/**
 * One process of the MPI streams-and-buckets run ({@link MpiBucketsTest}): a second stream whose collective
 * waits for an event of the first (so it must complete the first's in-flight all-reduce before it starts on
 * its result), then {@link BucketSuite}'s bucketed plan over three rounds, every rank marking its fields in an
 * order of its own through two producer streams (MPI has no device queue: the writes are done when made).
 * Prints one line per rank and exits 0 when this rank had no failure, 1 otherwise.
 */
public final class MpiBucketsMain {
  private MpiBucketsMain() {}

  public static void main(String[] args) throws Exception {
    List<String> failures = new ArrayList<>();
    int rank;
    int size;
    try (MpiCommunicator world = MpiBackend.world()) {
      rank = world.rank();
      size = world.size();
      failures.addAll(streamsAndEvents(world));
      try (Plan plan = BucketSuite.build(world, "mpi.Buckets", true, null)) {
        List<Stream> producers = List.of(world.stream(), world.newStream());
        int[] next = {0};
        failures.addAll(BucketSuite.runRounds(world, plan, 3, new BucketSuite.Producer() {
          @Override
          public Stream write(Communicator comm, F32Buffer field, float[] values) {
            field.copyFrom(values);
            return producers.get(next[0]++ % producers.size());
          }

          @Override
          public void release(Communicator comm) {}
        }, () -> { }));
        producers.get(1).close();
      }
    }
    System.out.println("mpi buckets rank " + rank + " of " + size + ": "
        + (failures.isEmpty() ? "all right" : failures.size() + " wrong"));
    for (String failure : failures.subList(0, Math.min(20, failures.size()))) {
      System.out.println("  FAIL " + failure);
    }
    System.out.flush();
    MpiBackend.finalizeMpi();
    System.exit(failures.isEmpty() ? 0 : 1);
  }

  /** An all-reduce on a second stream that waits for the first's: it reduces the first's result. */
  private static List<String> streamsAndEvents(Communicator world) {
    List<String> wrong = new ArrayList<>();
    try (Stream second = world.newStream(); F32Buffer x = F32Buffer.allocate(world, 1000)) {
      Event nothing = second.record();
      if (!nothing.isDone()) {
        wrong.add("an event recorded on an idle stream is not done");
      }
      x.fill(world.rank() + 1);
      world.allReduce(x, x, ReduceOp.SUM, world.stream());
      Event reduced = world.stream().record();
      second.waitFor(reduced);
      world.allReduce(x, x, ReduceOp.SUM, second);
      Event twice = second.record();
      twice.synchronize();
      if (!reduced.isDone() || !twice.isDone()) {
        wrong.add("events not done after the synchronize of the later one");
      }
      float expected = (float) world.size() * (world.size() + 1) / 2 * world.size();
      if (x.get(999) != expected) {
        wrong.add("rank " + world.rank() + ": the second stream's all-reduce of the first's result gave " + x.get(999)
            + ", expected " + expected);
      }
      world.stream().synchronize();
    }
    return wrong;
  }
}
