package dev.commplan.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code report --multirank} on FABRICATED logs in the layouts of bin/gpu-multirank-perf's files (the C
 * baseline's output, our sweep's and our many's, each after the script's {@code $ command} line): every figure
 * below is made up to test the arithmetic and the parsing, and must never be copied into the docs.
 */
class MultiRankReportTest {
  @TempDir Path dir;

  static final String C = """
      $ /tmp/multirank_perf -n 2 -c 0 -b 8 -e 1K -f 128 -C 64M -d 35 --hard-limit 55
      # multirank_perf: NCCL 23007 (header 23007), CUDA runtime 13000, driver 13000; 2 ranks, one thread each, all on device 0; maxCTAs NCCL's default; NCCL_MULTI_RANK_GPU_ENABLE=1
      # communicators: 2 ranks on device 0, ncclCommInitRankConfig 100.0 ms on average, 110.0 ms the longest
      # many  ranks 2  200 x 256 float all-reduce sum, out of place (51200 floats): time per step (the calls and one wait)
      variant                                              median_us    min_us    p90_us enqueue_us
      C: 200 separate ncclAllReduce                           1000.0     900.0    1100.0      950.0
      #   separate: warm-up 300 steps, 300.0 ms, fixed; 200 steps timed; largest rank's median 1001.0 us; #wrong 0
      C: 200 ncclAllReduce in one group                        400.0     380.0     420.0      350.0
      #   group: warm-up 700 steps, 300.0 ms, fixed; 200 steps timed; largest rank's median 401.0 us; #wrong 0
      C: one ncclAllReduce over 51200 floats                    20.0      19.0      21.0       10.0
      #   flat: warm-up 9000 steps, 300.0 ms, fixed; 200 steps timed; largest rank's median 20.5 us; #wrong 0
      C: the group captured, cudaGraphLaunch                   200.0     190.0     210.0       20.0
      #   graph: warm-up 1400 steps, 300.0 ms, fixed; 200 steps timed; largest rank's median 201.0 us; #wrong 0
      # AllReduce  backend c  ranks 2  type float  op sum  iters 20  batches 20  check 1
      # time: per call, the median of 20 timed units
      #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
                 8             2     float     sum      -1    20.00    0.00    0.00       0    19.00    0.00    0.00       0
      #   warm-up  out-of-place: 9000 calls, 200.1 ms, fixed   in-place: 9100 calls, 200.0 ms, fixed
      #   largest rank  out-of-place:   20.10 us   in-place:   19.10 us
              1024           256     float     sum      -1     0.20    5.12    5.12       0     0.20    5.12    5.12       0
      #   warm-up  out-of-place: 900 calls, 20.0 ms, fixed   in-place: 900 calls, 20.0 ms, fixed
      #   largest rank  out-of-place:    0.21 us   in-place:    0.21 us
      # Avg bus bandwidth    : 2.5
      #
      # AlltoAll  backend c  ranks 2  type float  iters 20  batches 20  check 1
              1024           128     float    none      -1    10.00    0.10    0.05       0      N/A     N/A     N/A     N/A
      #   warm-up  out-of-place: 9000 calls, 200.0 ms, fixed   in-place: N/A
      # multirank_perf: 2 ranks, 3 sweep rows, 0 wrong elements, 9.0 s: ok
      rc=0
      $ /tmp/multirank_perf -n 4 -c 4 -b 8 -e 1K -f 128 -C 64M -d 35 --hard-limit 55
      # many  ranks 4  200 x 256 float all-reduce sum, out of place (51200 floats): time per step
      variant                                              median_us    min_us    p90_us enqueue_us
      C: 200 separate ncclAllReduce                           2000.0    1900.0    2100.0     1950.0
      C: 200 ncclAllReduce in one group                        480.0     470.0     490.0      400.0
      C: one ncclAllReduce over 51200 floats                    30.0      29.0      31.0       12.0
      C: the group captured, cudaGraphLaunch                   280.0     270.0     290.0       25.0
      # AllReduce  backend c  ranks 4  type float  op sum  iters 20  batches 20  check 1
                 8             2     float     sum      -1    30.00    0.00    0.00       0    30.00    0.00    0.00       0
      #   warm-up  out-of-place: 6000 calls, 200.0 ms, fixed   in-place: 6000 calls, 200.0 ms, fixed
      rc=0
      """;

  static final String SWEEP = """
      $ .device/run -Dcommplan.nccl.library=/tmp/nccl/lib/libnccl.so.2 dev.commplan.bench.BenchMain sweep --backend nccl --ranks 2
      # AllReduce  backend nccl  ranks 2  type float  op sum  iters 20  batches 20  check 1
      #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
                 8             2     float     sum      -1    20.80    0.00    0.00       0    20.00    0.00    0.00       0
      #   warm-up  out-of-place: 40000 calls, 1000.0 ms, stable   in-place: 40000 calls, 1000.0 ms, stable
              1024           256     float     sum      -1     0.49    2.09    2.09       0     0.52    1.97    1.97       0
      #   warm-up  out-of-place: 4000 calls, 100.0 ms, stable   in-place: 30000 calls, 3000.0 ms, cap
      # AlltoAll  backend nccl  ranks 2  type float  iters 20  batches 20  check 1
              1024           128     float    none      -1    10.40    0.10    0.05       0      N/A     N/A     N/A     N/A
      #   warm-up  out-of-place: 40000 calls, 1000.0 ms, stable   in-place: N/A
      rc=0
      $ .device/run dev.commplan.bench.BenchMain sweep --backend nccl --ranks 4
      # AllReduce  backend nccl  ranks 4  type float  op sum  iters 20  batches 20  check 1
                 8             2     float     sum      -1    31.00    0.00    0.00       0    32.00    0.00    0.00       0
      #   warm-up  out-of-place: 30000 calls, 1000.0 ms, stable   in-place: 30000 calls, 1000.0 ms, stable
      rc=0
      """;

  static final String MANY = """
      $ .device/run -Dcommplan.nccl.sharedGpu=true dev.commplan.bench.BenchMain many --backend nccl --ranks 2 --iters 50
      # many buffers: 200 x 256 float, 200 buffers, 51200 elements (200 KiB), float all-reduce sum, out of place
      # backend nccl  ranks 2  time per step: median and min of 50 steps (at most 2 s of them per way), each the issue and one synchronize, averaged over ranks
      #     mode   calls   median (us)      min (us)  #wrong  warm-up (steps, ms, end)
        separate     200        1100.0        1000.0       0  2000 steps, 2000.0 ms, stable
           group     200         430.0         400.0       0  3000 steps, 1000.0 ms, stable
      # plan: generated Many200OutPlan, 1 step, 200 calls
            plan     200         415.0         400.0       0  3000 steps, 1000.0 ms, stable
            flat       1          22.0          20.0       0  40000 steps, 1000.0 ms, stable
      # graph: one CUDA graph of the PlanBuilder plan's 200 calls, launched with cudaGraphLaunch
           graph     200         225.0         200.0       0  5000 steps, 3000.0 ms, cap
      rc=0
      $ .device/run -Dcommplan.nccl.sharedGpu=true -Dcommplan.agreementCheck=false dev.commplan.bench.BenchMain many --backend nccl --ranks 4 --modes plan
      # many buffers: 200 x 256 float, 200 buffers, 51200 elements (200 KiB), float all-reduce sum, out of place
      # backend nccl  ranks 4  time per step: median and min of 50 steps
            plan     200         505.0         490.0       0  2000 steps, 1000.0 ms, stable
      rc=0
      $ .device/run -Dcommplan.nccl.sharedGpu=true dev.commplan.bench.BenchMain many --backend nccl --ranks 4 --iters 50
      # many buffers: 200 x 256 float, 200 buffers, 51200 elements (200 KiB), float all-reduce sum, out of place
      # backend nccl  ranks 4  time per step: median and min of 50 steps
            plan     200         520.0         500.0       0  2000 steps, 1000.0 ms, stable
           graph     200         300.0         290.0       3  2000 steps, 1000.0 ms, stable
      rc=0
      $ .device/run -Dcommplan.nccl.sharedGpu=true -Dcommplan.agreementCheck=false dev.commplan.bench.BenchMain many --backend nccl --ranks 4 --modes plan
      # many buffers: 200 x 256 float, 200 buffers, 51200 elements (200 KiB), float all-reduce sum, out of place
      # backend nccl  ranks 4  time per step: median and min of 50 steps
            plan     200         500.0         480.0       0  2000 steps, 1000.0 ms, stable
      rc=0
      $ .device/run -Dcommplan.nccl.sharedGpu=true dev.commplan.bench.BenchMain many --backend nccl --ranks 8
      error: more ranks than devices
      rc=1
      """;

  @Test
  void theDirectCallTargetIsTheLargerOfFivePercentAndThreeTenthsOfAMicrosecond() {
    PerfReport.DirectTarget t = MultiRankReport.DIRECT;
    assertTrue(t.met(21.0, 20.0));
    assertFalse(t.met(21.01, 20.0));
    assertTrue(t.met(0.5, 0.2)); // 2.5x, but within 0.3 µs
    assertFalse(t.met(0.51, 0.2));
  }

  @Test
  void splitsEachLogByRankCountAndReadsEveryPart() {
    Map<Integer, Map<Coll, PerfLogs.Table>> c = MultiRankLogs.sweeps(C.lines().toList());
    assertEquals(List.of(2, 4), List.copyOf(c.keySet()));
    assertEquals(List.of(Coll.ALL_REDUCE, Coll.parse("alltoall")), List.copyOf(c.get(2).keySet()));
    assertEquals(19.0, c.get(2).get(Coll.ALL_REDUCE).inPlace.get(8L).median(), 1e-12);
    assertEquals("900 calls, 20.0 ms, fixed", c.get(2).get(Coll.ALL_REDUCE).outOfPlace.get(1024L).warmUp);
    assertEquals(30.0, c.get(4).get(Coll.ALL_REDUCE).outOfPlace.get(8L).median(), 1e-12);

    Map<Integer, Map<String, PerfLogs.HostRow>> cMany = MultiRankLogs.cMany(C.lines().toList());
    assertEquals(4, cMany.get(2).size(), cMany.toString());
    assertEquals(280.0, PerfLogs.find(cMany.get(4), "C: the group captured").medianUs(), 1e-12);
    assertEquals("200 x 256 float all-reduce sum, out of place (51200 floats)",
        MultiRankLogs.cManyCase(C.lines().toList()).get(4));

    Map<Integer, Map<Coll, PerfLogs.Table>> ours = MultiRankLogs.sweeps(SWEEP.lines().toList());
    assertEquals(0.52, ours.get(2).get(Coll.ALL_REDUCE).inPlace.get(1024L).median(), 1e-12);
    assertEquals(32.0, ours.get(4).get(Coll.ALL_REDUCE).inPlace.get(8L).median(), 1e-12);

    List<MultiRankLogs.ManyRun> runs = MultiRankLogs.many(MANY.lines().toList());
    assertEquals(5, runs.size());
    assertEquals(List.of(2, 4, 4, 4, 0), runs.stream().map(MultiRankLogs.ManyRun::ranks).toList());
    assertEquals(List.of(true, false, true, false, true), runs.stream().map(MultiRankLogs.ManyRun::agreementCheck).toList());
    assertEquals(List.of(0, 0, 0, 0, 1), runs.stream().map(MultiRankLogs.ManyRun::rc).toList());
    MultiRankLogs.ManyRow graph = runs.get(0).rows().get("graph");
    assertEquals(new MultiRankLogs.ManyRow("graph", 200, 225.0, 200.0, 0, "5000 steps, 3000.0 ms, cap"), graph);
    assertEquals(3, runs.get(2).rows().get("graph").wrong());
    assertTrue(runs.get(4).rows().isEmpty());
  }

  @Test
  void theTablesSayWhatIsMetAndWhatIsNot() throws Exception {
    String text = report();
    // direct calls at 2 ranks: 8 B out of place met by 5 % (20.80 ≤ 21.0), in place missed (20.00 > 19.95);
    // 1 KiB out of place met by the 0.3 µs slack (0.49 ≤ 0.50), in place missed (0.52 > 0.50)
    assertTrue(text.contains("## 2 ranks on one GPU"), text);
    assertTrue(text.contains("| AllReduce | 2 | 2 / 2 | 0 / 2 | 8 B: 20.8 / 20.0 | 1 KiB: 0.52 / 0.20 |"
        + " 40000 calls, 1000.0 ms, stable | 1 |"), text);
    assertTrue(text.contains("| 8 | 20.0 | 20.8 | 1.04 | yes | 19.0 | 20.0 | 1.05 | **no** |"), text);
    assertTrue(text.contains("| 1024 | 0.20 | 0.49 | 2.45 | yes | 0.20 | 0.52 | 2.60 | **no** |"), text);
    assertTrue(text.contains("| AlltoAll | 1 | 1 / 1 | — | 1 KiB: 10.4 / 10.0 | — |"), text);
    assertTrue(text.contains("| size (B) | C out of place | ours | ours / C | met |"), text);
    assertTrue(text.contains("ours ≤ max(1.05 × C, C + 0.3 µs)"), text);
    // the many buffers: at 2 ranks the plan meets 1.05 × the group, the launch misses 1.1 × C's graph
    assertTrue(text.contains("| a 200-buffer plan ≤ 1.05 × one grouped C call of the same calls | plan (200 calls a"
        + " step) | 415 | C: 200 ncclAllReduce in one group | 400 | 1.04 | 1.05 | yes |"), text);
    assertTrue(text.contains("| a captured plan's launch() ≤ 1.1 × C's cudaGraphLaunch of the same calls | graph (200"
        + " calls a step) | 225 | C: the group captured, cudaGraphLaunch | 200 | 1.13 | 1.10 | **no** |"), text);
    assertTrue(text.contains("| for reference: one flat call over the same bytes | flat (1 call a step) | 22.0 |"
        + " C: one ncclAllReduce over 51200 floats | 20.0 | 1.10 | — | — |"), text);
    // at 4 ranks: the run with the check on, whose graph row was wrong (shown, not hidden)
    assertTrue(text.contains("| a K-buffer plan ≤ 1.05 × one grouped C call of the same calls | plan (200 calls a step)"
        + " | 520 | C: 200 ncclAllReduce in one group | 480 | 1.08 | 1.05 | **no** |"), text);
    assertTrue(text.contains("| graph | 200 | 300 | 290 | **3** | 2000 steps, 1000.0 ms, stable |"), text);
    // the agreement check at 4 ranks: (520 - min(505, 500)) / 500 = 4 %
    assertTrue(text.contains("| 4 | 520 | 505, 500 | 20.0 | 4.0 % | 5 % | yes |"), text);
    // the failed run at 8 ranks is listed with its exit status
    assertTrue(text.contains("many --backend nccl --ranks 8` | — | on | none | 1 |"), text);
    assertFalse(text.contains("## 8 ranks"), text);
  }

  @Test
  void whatIsMissingIsSaidNotFilled() throws Exception {
    Files.writeString(dir.resolve("c-baseline.txt"), C);
    String text = run("report", "--multirank", "--dir", dir.toString());
    assertTrue(text.contains("| AllReduce | 0 | | | no rows of ours | | | |"), text);
    assertTrue(text.contains("Ours: no run in the log"), text);
    assertTrue(text.contains("| a K-buffer plan ≤ 1.05 × one grouped C call of the same calls | not in the log | |"
        + " C: 200 ncclAllReduce in one group | | | | |"), text);
    assertTrue(text.contains("| 4 | not in the log | not in the log | | | | |"), text);

    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = BenchMain.run(new String[] {"report", "--multirank", "--dir", dir.resolve("none").toString()},
        sink(new ByteArrayOutputStream()), sink(err));
    assertEquals(2, status);
    Files.delete(dir.resolve("c-baseline.txt"));
    status = BenchMain.run(new String[] {"report", "--multirank", "--dir", dir.toString()},
        sink(new ByteArrayOutputStream()), sink(err));
    assertEquals(2, status, "an empty folder: nothing to report");
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("error: report --multirank needs"), err.toString());
  }

  private String report() throws Exception {
    Files.writeString(dir.resolve("c-baseline.txt"), C);
    Files.writeString(dir.resolve("sweep.txt"), SWEEP);
    Files.writeString(dir.resolve("many.txt"), MANY);
    Path md = dir.resolve("multirank-report.md");
    String out = run("report", "--multirank", "--dir", dir.toString(), "--out", md.toString());
    assertEquals("wrote " + md + System.lineSeparator(), out);
    String text = Files.readString(md);
    assertTrue(text.startsWith("Generated by `commplan-bench report --multirank` from `c-baseline.txt`, `sweep.txt`,"
        + " `many.txt`."), text);
    return text;
  }

  private static String run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = BenchMain.run(args, sink(out), sink(err));
    assertEquals(0, status, err.toString(StandardCharsets.UTF_8));
    return out.toString(StandardCharsets.UTF_8);
  }

  private static PrintStream sink(ByteArrayOutputStream bytes) {
    return new PrintStream(bytes, true, StandardCharsets.UTF_8);
  }
}
