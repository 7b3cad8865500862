package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.agreement.Agreement;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.spi.FlightRecorder;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The agreement check (issue 25) on NCCL, on the one GPU of the test machine: one rank has no one to
 * disagree with, so what it can show is that the check's own calls run there (its all-gathers after
 * calls 1, 3, 7, ..., 255 and every 256th, its messages beside a rank's sends to itself, its host copies of
 * records and headers) and that with them the results are those of the program without them: direct
 * calls out of place, plan executes, steps and captured launches, and sends to itself in groups, written
 * from the host and read at once after synchronize. Skipped without a GPU.
 */
@NcclGpuTest
class NcclAgreementGpuTest {
  private static final int N = 1000; // not a multiple of any chunk: the boundaries are off the round sizes

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
