package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.agreement.Agreement;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.spi.FlightRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agreement check (issue 25) on NCCL, on the one GPU of the test machine: one rank has no one to
 * disagree with, so what it can show is that the check's own calls run there (its all-gathers after
 * calls 1, 3, 7, ..., 255 and every 256th, its messages beside a rank's sends to itself, its host copies of
 * records and headers) and that with them the results are those of the program without them: direct
 * calls out of place, plan executes, steps and captured launches, and sends to itself in groups, written
 * from the host and read at once after synchronize.
 *
 * <p>Between real peers (each world size of 2 or more of {@link GpuRanks}: several ranks on one GPU with
 * NCCL 2.30 and the opt-in), the disagreements the check catches on the local backend and MPI ({@code
 * MpiErrorsMain} lists them): each rank its own root, counts that differ (a collective's, a send's against
 * its receive's), a data type that differs (a collective's, a send's), a plan step and a direct call in
 * opposite orders. Where NCCL completes the mismatched calls (the same bytes moved: a data type, the order),
 * the check must name the disagreement; where it may not (other counts, other roots: NCCL's kernels may wait
 * for data that never comes), either the check names it or every rank that waits times out, naming the
 * call. In every case every rank ends within its timeout and nothing hangs. Skipped without a GPU.
 */
@NcclGpuTest
class NcclAgreementGpuTest {
  private static final int N = 1000; // not a multiple of any chunk: the boundaries are off the round sizes
  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  /** What a case may take at most: the timeout, the cluster's two grace periods, set-up and close. */
  private static final Duration LIMIT = TIMEOUT.plus(Duration.ofSeconds(2 * NcclCluster.GRACE_MILLIS / 1000 + 60));

  /** The disagreements; {@code completes}: NCCL moves the same bytes on every rank, so the check must catch it. */
  enum Disagreement {
    EACH_ITS_OWN_ROOT(false), COUNT(false), DATA_TYPE(true), STEP_AND_DIRECT_CALL_IN_OPPOSITE_ORDERS(true),
    SEND_DATA_TYPE(true), SEND_COUNT(false);

    final boolean completes;

    Disagreement(boolean completes) {
      this.completes = completes;
    }

    /** This rank's side of the disagreement, then a synchronize (where the check compares). */
    void run(Communicator c) {
      int r = c.rank();
      switch (this) {
        case EACH_ITS_OWN_ROOT -> {
          try (F32Buffer x = F32Buffer.allocate(c, 8)) {
            c.broadcast(x, x, r, c.stream());
            c.stream().synchronize();
          }
        }
        case COUNT -> {
          try (F32Buffer x = F32Buffer.allocate(c, r == 0 ? 4 : 8)) {
            c.allReduce(x, x, ReduceOp.SUM, c.stream());
            c.stream().synchronize();
          }
        }
        case DATA_TYPE -> {
          try (Buffer x = Buffer.allocate(r == 0 ? DataType.F32 : DataType.I32, c, 8)) {
            c.allReduce(x, x, ReduceOp.SUM, c.stream());
            c.stream().synchronize();
          }
        }
        case STEP_AND_DIRECT_CALL_IN_OPPOSITE_ORDERS -> {
          PlanBuilder b = new PlanBuilder("agree.Order", c, 0);
          int x = b.buffer("x", DataType.F32, 256, "{\"256\"}", null);
          b.allReduce(0, x, x, ReduceOp.SUM);
          try (Plan plan = b.build(); F32Buffer y = F32Buffer.allocate(c, 256)) {
            if (r == 1) {
              c.allReduce(y, y, ReduceOp.SUM, c.stream());
              plan.executeStep(0, c.stream());
            } else {
              plan.executeStep(0, c.stream());
              c.allReduce(y, y, ReduceOp.SUM, c.stream());
            }
            c.stream().synchronize();
          }
        }
        case SEND_DATA_TYPE, SEND_COUNT -> {
          try (F32Buffer out = F32Buffer.allocate(c, this == SEND_COUNT ? 4 : 8); F32Buffer in = F32Buffer.allocate(c, 8);
              I32Buffer ints = I32Buffer.allocate(c, 8)) {
            if (r == 0) {
              c.send(out, 1, c.stream());
            } else if (r == 1) {
              c.recv(this == SEND_DATA_TYPE ? ints : in, 0, c.stream());
            }
            c.stream().synchronize();
          }
        }
      }
    }
  }

  static Stream<Arguments> disagreements() {
    return GpuRanks.requested().stream() // every size, so that one without peers shows as skipped, saying why
        .flatMap(n -> Arrays.stream(Disagreement.values()).map(d -> Arguments.of(n, d)));
  }

  @ParameterizedTest(name = "{1} on {0} ranks")
  @MethodSource("disagreements")
  void aDisagreementBetweenRealPeersIsCaughtAndNoRankHangs(int ranks, Disagreement kase) {
    assumeTrue(ranks >= 2, () -> "a disagreement needs two ranks or more, not " + ranks + " (-D" + GpuRanks.PROPERTY + ")");
    GpuRanks.assumeRunnable(ranks);
    Map<Integer, Throwable> failed = new ConcurrentHashMap<>();
    AtomicReference<CommPlanException> thrown = new AtomicReference<>();
    assertTimeoutPreemptively(LIMIT, () -> {
      try (Cluster cluster = NcclBackend.cluster(ranks, CommOptions.timeout(TIMEOUT))) {
        thrown.set(assertThrows(CommPlanException.class, () -> cluster.run(c -> {
          try {
            kase.run(c);
          } catch (RuntimeException e) {
            failed.put(c.rank(), e);
            throw e;
          }
        }), kase + ": the run should fail"));
      }
    }, () -> kase + " on " + ranks + " ranks did not end within " + LIMIT + " (a rank hangs); failures so far: " + failed);
    List<Throwable> all = new ArrayList<>(failed.values());
    all.add(thrown.get());
    DisagreementException caught = all.stream().map(NcclAgreementGpuTest::disagreement).filter(Objects::nonNull)
        .findFirst().orElse(null);
    String outcomes = failed.entrySet().stream().sorted(Map.Entry.comparingByKey())
        .map(e -> "rank " + e.getKey() + ": " + e.getValue()).collect(Collectors.joining("\n  "));
    System.out.println("[commplan] " + kase + " on " + ranks + " ranks: " + (caught != null ? "caught by the check"
        : "NCCL did not complete it; the waiting ranks timed out") + "\n  " + outcomes);
    for (Map.Entry<Integer, Throwable> e : failed.entrySet()) {
      assertInstanceOf(CommPlanException.class, e.getValue(), "rank " + e.getKey() + " ended with " + e.getValue());
    }
    if (kase.completes || caught != null) {
      assertTrue(caught != null, () -> kase + ": NCCL completes it, so the check must catch it; outcomes:\n  " + outcomes);
      assertTrue(caught.getMessage().contains("disagree"), caught.getMessage());
      // Where NCCL moved the same bytes the records compare cleanly; where it did not, what the check read may be
      // garbled by the mismatched call's leftovers, so only that it names a disagreement is asserted.
      switch (kase) {
        case DATA_TYPE, SEND_DATA_TYPE -> assertTrue(caught.differingFields().contains("data type"), caught.getMessage());
        case STEP_AND_DIRECT_CALL_IN_OPPOSITE_ORDERS -> assertTrue(caught.getMessage().contains("agree.Order"),
            caught.getMessage());
        default -> { }
      }
    } else {
      assertTrue(all.stream().anyMatch(t -> cause(t, CommTimeoutException.class) != null),
          () -> kase + ": neither caught by the check nor timed out:\n  " + outcomes);
    }
  }

  /** The DisagreementException in {@code t}'s causes or suppressed exceptions, or null. */
  private static DisagreementException disagreement(Throwable t) {
    return cause(t, DisagreementException.class);
  }

  private static <T extends Throwable> T cause(Throwable t, Class<T> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return type.cast(c);
      }
      for (Throwable s : c.getSuppressed()) {
        T found = cause(s, type);
        if (found != null) {
          return found;
        }
      }
    }
    return null;
  }

  @Test
  void theCheckRunsBesideEveryKindOfCallAndChangesNoResult() {
    try (Cluster cluster = NcclBackend.cluster(1, CommOptions.timeout(Duration.ofSeconds(60)))) {
      cluster.run(c -> {
        PlanBuilder b = new PlanBuilder("agree.Gpu", c, 0);
        int x = b.buffer("x", DataType.F32, N, "{\"n\"}", null);
        int y = b.buffer("y", DataType.F32, N, "{\"n\"}", null);
        b.allReduce(0, x, y, ReduceOp.SUM);
        try (Plan plan = b.build(); CapturedPlan captured = plan.capture(c.stream());
            F32Buffer send = F32Buffer.allocate(c, N); F32Buffer recv = F32Buffer.allocate(c, N);
            F32Buffer mirror = F32Buffer.allocate(c, N)) {
          SplittableRandom random = new SplittableRandom(25);
          float[] data = new float[N];
          for (int round = 0; round < 400; round++) { // 320 units: past the checks after 1, 3, ..., 255
            for (int i = 0; i < N; i++) {
              data[i] = (float) random.nextDouble(-1, 1);
            }
            send.copyFrom(data); // written from the host, then enqueued at once
            ((F32Buffer) plan.buffer(x)).copyFrom(data);
            switch (round % 5) {
              case 0 -> c.allReduce(send, recv, ReduceOp.SUM, c.stream());
              case 1 -> plan.execute(c.stream());
              case 2 -> plan.executeStep(0, c.stream());
              case 3 -> captured.launch();
              default -> {
                c.groupStart();
                c.send(send, 0, c.stream());
                c.recv(mirror, 0, c.stream());
                c.groupEnd();
              }
            }
            c.stream().synchronize();
            float[] out = switch (round % 5) { // read at once after the synchronize
              case 0 -> recv.toArray();
              case 4 -> mirror.toArray();
              default -> ((F32Buffer) plan.buffer(y)).toArray();
            };
            assertArrayEquals(data, out, "round " + round);
          }
          // within the next 256 units a check runs: the recorder's last operations then include its own
          FlightRecorder recorder = ((NcclCommunicator) c).flightRecorder();
          for (int i = 0; i < Agreement.MAX_INTERVAL && !hasCheck(recorder.snapshot()); i++) {
            c.allReduce(send, recv, ReduceOp.SUM, c.stream());
            c.stream().synchronize();
          }
          assertTrue(hasCheck(recorder.snapshot()), recorder.format());
          assertArrayEquals(send.toArray(), recv.toArray());
        }
      });
    }
  }

  private static boolean hasCheck(List<FlightRecorder.Entry> entries) {
    return entries.stream().anyMatch(e -> e.label().isAgreementCheck());
  }

  /**
   * 20,000 calls enqueued without a synchronize: past 64 checks waiting, taking another waits for the oldest
   * (a synchronize inside the call), and the results are still right.
   */
  @Test
  void hundredsOfUnitsWithoutASynchronizeStayRight() {
    try (Cluster cluster = NcclBackend.cluster(1, CommOptions.timeout(Duration.ofSeconds(60)))) {
      cluster.run(c -> {
        try (F32Buffer a = F32Buffer.allocate(c, N); F32Buffer out = F32Buffer.allocate(c, N)) {
          float[] data = new float[N];
          for (int i = 0; i < N; i++) {
            data[i] = i * 0.25f;
          }
          a.copyFrom(data);
          for (int i = 0; i < 20_000; i++) {
            c.allReduce(a, out, ReduceOp.MAX, c.stream());
          }
          c.stream().synchronize();
          assertArrayEquals(data, out.toArray());
        }
      });
    }
  }
}
