package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.spi.FlightRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The agreement check (issue 25) on the local backend, where the rendezvous already names ranks that
 * disagree, so these tests ask what the check must never do: fail ranks that agree. Random programs of
 * direct collectives, sends and receives (alone and in groups), plan executes, steps and launches, on the
 * world and on split groups, run on 1 to 8 ranks past several check intervals with the check on, and
 * their results match a run with it off. The disagreements it finds are tested on MPI, which completes
 * them silently (MpiMultiProcessTest).
 */
class LocalAgreementCheckTest {
  private static final int CALLS = 600; // past checks 1, 3, ..., 255 and 511

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3, 4, 5, 8})
  void ranksThatAgreeNeverFailAndGetWhatTheyGetWithoutTheCheck(int ranks) {
    long seed = 0x25L * ranks;
    List<float[]> with = runProgram(ranks, seed, true);
    List<float[]> without = runProgram(ranks, seed, false);
    for (int r = 0; r < ranks; r++) {
      assertTrue(java.util.Arrays.equals(with.get(r), without.get(r)), "rank " + r + " of " + ranks);
    }
  }

  /** Every rank's final buffer after {@link #CALLS} random calls that every rank makes alike. */
  private static List<float[]> runProgram(int ranks, long seed, boolean check) {
    CommOptions options = CommOptions.timeout(Duration.ofSeconds(60)).withAgreementCheck(check);
    try (LocalCluster cluster = new LocalCluster(ranks, options)) {
      return cluster.call(comm -> {
        SplittableRandom random = new SplittableRandom(seed); // the same choices on every rank
        Communicator half = comm.split(comm.rank() % 2, comm.rank());
        try (F32Buffer x = F32Buffer.allocate(comm, 64L * ranks); F32Buffer y = F32Buffer.allocate(comm, 64L * ranks);
            F32Buffer h = F32Buffer.allocate(half, 16); I32Buffer ints = I32Buffer.allocate(comm, 8);
            Plan plan = plan(comm); CapturedPlan captured = plan.capture(comm.stream())) {
          float[] init = new float[(int) x.length()];
          for (int i = 0; i < init.length; i++) {
            init[i] = (comm.rank() + 1) * 0.5f + i % 7;
          }
          x.copyFrom(init);
          for (int call = 0; call < CALLS; call++) {
            int what = random.nextInt(10);
            switch (what) {
              case 0 -> comm.allReduce(x, x, ReduceOp.MAX, comm.stream());
              case 1 -> comm.broadcast(x, y, random.nextInt(ranks), comm.stream());
              case 2 -> comm.allGather(f32(x, comm.rank() * 64L, 64), y, comm.stream());
              case 3 -> comm.reduceScatter(x, f32(y, 0, 64), ReduceOp.MIN, comm.stream());
              case 4 -> plan.execute(comm.stream());
              case 5 -> plan.executeStep(0, comm.stream());
              case 6 -> captured.launch();
              case 7 -> half.allReduce(h, h, ReduceOp.SUM, half.stream());
              case 8 -> ring(comm, ints, random.nextBoolean());
              default -> comm.allToAll(x, y, comm.stream());
            }
            if (random.nextInt(8) == 0) {
              comm.stream().synchronize();
              half.stream().synchronize();
            }
          }
          comm.stream().synchronize();
          half.stream().synchronize();
          float[] out = new float[(int) y.length()];
          y.copyTo(out);
          return out;
        }
      });
    }
  }

  /** A ring exchange: each rank sends to the next and receives from the previous, grouped or one by one. */
  private static void ring(Communicator comm, I32Buffer ints, boolean grouped) {
    int next = (comm.rank() + 1) % comm.size();
    int previous = (comm.rank() + comm.size() - 1) % comm.size();
    if (comm.size() == 1 || grouped) {
      comm.groupStart();
      comm.send(i32(ints, 0, 4), next, comm.stream());
      comm.recv(i32(ints, 4, 4), previous, comm.stream());
      comm.groupEnd();
    } else if (comm.rank() % 2 == 0) { // even ranks send first, odd ranks receive first: no cycle of waits
      comm.send(i32(ints, 0, 4), next, comm.stream());
      comm.recv(i32(ints, 4, 4), previous, comm.stream());
    } else {
      comm.recv(i32(ints, 4, 4), previous, comm.stream());
      comm.send(i32(ints, 0, 4), next, comm.stream());
    }
  }

  private static F32Buffer f32(F32Buffer b, long from, long n) {
    return (F32Buffer) Buffer.view(DataType.F32, b.memory(), b.byteOffset() + from * Float.BYTES, n);
  }

  private static I32Buffer i32(I32Buffer b, long from, long n) {
    return (I32Buffer) Buffer.view(DataType.I32, b.memory(), b.byteOffset() + from * Integer.BYTES, n);
  }

  private static Plan plan(Communicator comm) {
    PlanBuilder b = new PlanBuilder("agree.Grads", comm, 0);
    int g = b.buffer("g", DataType.F32, 32, "{\"32\"}", null);
    b.allReduce(0, g, g, ReduceOp.SUM);
    return b.build();
  }

  /** The check's own calls are named as such where users see calls: the flight record and timeouts. */
  @Test
  void theChecksCallsAreLabelledAsTheChecksInTheFlightRecord() {
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.timeout(Duration.ofSeconds(30)))) {
      cluster.run(comm -> {
        try (F32Buffer x = F32Buffer.allocate(comm, 8)) {
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream()); // unit 1: a check follows
          comm.stream().synchronize();
        }
      });
      List<FlightRecorder.Entry> entries = cluster.communicator(0).flightRecorder().snapshot();
      List<String> labels = entries.stream().map(e -> e.label().toString()).toList();
      assertTrue(labels.contains("all-reduce F32 SUM, count 8 (called directly)"), labels.toString());
      assertTrue(labels.contains("agreement check: all-gather U64, count 6"), labels.toString());
      // the records of the longest window: four longs a call
      assertTrue(labels.contains("agreement check: all-gather U64, count " + 4 * dev.commplan.runtime.agreement.Agreement
          .MAX_INTERVAL), labels.toString());
      assertEquals(2, entries.stream().filter(e -> e.label().isAgreementCheck()).count(), labels.toString());
    }
  }

  /** Off, the communicator enqueues nothing of its own. */
  @Test
  void offTheCheckEnqueuesNothing() {
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.timeout(Duration.ofSeconds(30))
        .withAgreementCheck(false))) {
      cluster.run(comm -> {
        try (F32Buffer x = F32Buffer.allocate(comm, 8)) {
          for (int i = 0; i < 100; i++) {
            comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
          }
          comm.stream().synchronize();
        }
      });
      assertFalse(cluster.communicator(1).flightRecorder().snapshot().stream()
          .anyMatch(e -> e.label().isAgreementCheck()));
    }
  }

  /**
   * Checks on a mesh's axes run on each axis's own communicator, and ranks that agree pass them. 70 calls
   * over {@code tp} pass the checks after calls 1, 3, ..., 63: the last one's two all-gathers are in
   * {@code tp}'s flight record, just before the last 7 calls; the world's record is what the mesh's build
   * left there, and {@code dp}, which made no call, checked nothing. Each result is what the calls make
   * without a check: both ranks of a {@code tp} group hold 1 and 2, so 3 after the first sum, doubled by
   * each of the other 69.
   */
  @Test
  void axesOfAMeshCheckOnTheirOwnCommunicators() {
    try (LocalCluster cluster = new LocalCluster(4, CommOptions.timeout(Duration.ofSeconds(30)))) {
      cluster.run(comm -> {
        try (Mesh mesh = Mesh.builder(comm).axis("dp", 2).axis("tp", 2).build()) {
          Communicator tp = mesh.axis("tp");
          List<String> worldAfterBuild = labels(comm);
          try (F32Buffer x = F32Buffer.allocate(tp, 8)) {
            x.fill(mesh.coordinate("tp") + 1);
            for (int i = 0; i < 70; i++) {
              tp.allReduce(x, x, ReduceOp.SUM, tp.stream());
            }
            tp.stream().synchronize();
            float[] values = x.toArray();
            for (float v : values) {
              assertEquals(3 * Math.scalb(1f, 69), v, "rank " + comm.rank());
            }
          }
          List<String> onTp = labels(tp);
          String call = "all-reduce F32 SUM, count 8 (called directly)";
          List<String> expectedTail = new ArrayList<>(List.of(
              "agreement check: all-gather U64, count 6",
              "agreement check: all-gather U64, count " + 4 * dev.commplan.runtime.agreement.Agreement.MAX_INTERVAL));
          expectedTail.addAll(Collections.nCopies(70 - 63, call));
          assertEquals(expectedTail, onTp.subList(onTp.size() - expectedTail.size(), onTp.size()),
              "rank " + comm.rank() + ": " + onTp);
          assertEquals(worldAfterBuild, labels(comm), "rank " + comm.rank() + ": the world's record");
          assertEquals(List.of(), labels(mesh.axis("dp")), "rank " + comm.rank() + ": dp's record");
        }
      });
    }
  }

  /** The labels of a local communicator's flight record, oldest first. */
  private static List<String> labels(Communicator comm) {
    return ((LocalCommunicator) comm).flightRecorder().snapshot().stream().map(e -> e.label().toString()).toList();
  }
}
