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
 * {@code report} on FABRICATED logs in the layouts of bin/gpu-run's PERF_ONLY files (nccl-tests' table,
 * ours with its warm-up lines, the probes' rows): every figure below is made up to test the arithmetic
 * and the parsing, and must never be copied into the docs.
 */
class PerfReportTest {
  @TempDir Path dir;

  static final String NCCL_TESTS = """
      $ make -C .device/nccl-tests MPI=0 CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr
      build rc=0 in 36 s
      $ .device/nccl-tests/build/all_reduce_perf -b 8 -e 1K -f 128 -g 1 -N 3
      # Collective test starting: all_reduce_perf
      # nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 128(factor) warmup iters: 1 iters: 20 agg iters: 1
      #
      #                                                              out-of-place                       in-place
      #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
      #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
                 8             2     float     sum      -1     5.00    0.00    0.00      0     0.20    0.04    0.00      0
              1024           256     float     sum      -1     5.00    0.20    0.00      0     0.30    3.41    0.00      0
                 8             2     float     sum      -1     6.00    0.00    0.00      0     0.25    0.03    0.00      0
              1024           256     float     sum      -1     4.00    0.26    0.00      0     0.30    3.41    0.00      0
                 8             2     float     sum      -1     5.50    0.00    0.00      0     0.30    0.03    0.00      0
              1024           256     float     sum      -1     6.00    0.17    0.00      0     0.30    3.41    0.00      0
      # Out of bounds values : 0 OK
      # Avg bus bandwidth    : 0
      rc=0
      $ .device/nccl-tests/build/alltoall_perf -b 8 -e 1K -f 128 -g 1 -N 3
                16             4     float    none      -1    10.00    0.00    0.00      0     9.00    0.00    0.00      0
              1024           256     float    none      -1    12.00    0.09    0.00      0    11.00    0.09    0.00      0
      rc=0
      """;

  static final String SWEEP = """
      $ .device/run dev.commplan.bench.BenchMain sweep --backend nccl --ranks 1 --coll all-reduce
      # AllReduce  backend nccl  ranks 1  type float  op sum  iters 20  batches 20  check 1
      # time: per call, the median of 20 timed units (one batch of 20 calls back to back and one synchronize)
      #                                                             out-of-place                       in-place
      #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
                 8             2     float     sum      -1     5.90    0.00    0.00       0     0.38    0.02    0.00       0
      #   warm-up  out-of-place: 120000 calls, 1000.0 ms, stable   in-place: 900000 calls, 1000.1 ms, stable
              1024           256     float     sum      -1     6.00    0.17    0.00       0     0.50    2.05    0.00       0
      #   warm-up  out-of-place: 2000 calls, 100.0 ms, stable   in-place: 200000 calls, 10000.2 ms, cap
      # Avg bus bandwidth    : 0
      #
      # AlltoAll  backend nccl  ranks 1  type float  iters 20  batches 20  check 1
                16             4     float    none      -1    10.50    0.00    0.00       0      N/A     N/A     N/A     N/A
      #   warm-up  out-of-place: 40000 calls, 1000.0 ms, stable   in-place: N/A
              1024           256     float    none      -1    14.00    0.07    0.00       0      N/A     N/A     N/A     N/A
      #   warm-up  out-of-place: 3000 calls, 100.0 ms, stable   in-place: N/A
      # Broadcast  backend nccl  ranks 1  type float  root 0  iters 20  batches 20  check 1
                 8             2     float    none       0     5.00    0.00    0.00       0     0.30    0.03    0.03       0
      #   warm-up  out-of-place: 40000 calls, 1000.0 ms, stable   in-place: 800000 calls, 1000.0 ms, stable
      rc=0
      """;

  static final String HOST = """
      # NcclHostCostProbe: 200 all-reduces of 256 float32, out of place, 1 rank; median of 200 runs after the warm-up
      variant                                                    median_us    min_us    p90_us enqueue_us  heap_B/run warmup_runs  warmup_ms warmup
      (d) one direct call over 51,200 floats                          11.0      10.0      12.0        6.0         0.0      100000     1000.0 stable
      Plan of 200 @AllReduce fields (coalesced: 1 call)               11.5      10.5      12.5        6.1         4.9       90000     1000.0 stable
      raw FFM: one call over 51,200 floats                             9.5       9.0      10.0        4.2         0.0      110000     1000.0 stable
      Plan again, waiting with cudaStreamSynchronize                   9.6       9.1      10.2        4.1         0.0      105000     1000.0 stable
      # NcclGraphProbe (issue 18): 1 rank, out of place
      variant                                                            median_us    min_us    p90_us enqueue_us  heap_B/run warmup_runs  warmup_ms warmup
      raw FFM: one ncclAllReduce over 51,200 floats                           9.4       9.0       9.9        4.3         0.0      120000     1000.0 stable
      raw FFM: the same call captured by hand, cudaGraphLaunch (floor)        6.9       6.5       7.2        1.4         0.0      150000     1000.0 stable
      (a) Plan 200 x 256 float (coalesced: 1 call), execute                  10.0       9.5      10.5        4.6         0.0      100000     1000.0 stable
      (a) the same plan captured, launch()                                    7.5       7.0       8.0        2.0         0.0      140000    10000.0 cap
      # target (a): captured 200 x 256 plan / one raw flat call = 0.80
      $ /tmp/graph_probe 51200 200 200 2000
      # graph_probe: NCCL 22803, 1 rank, 51200 floats out of place
      variant                                                  median_us    min_us    p90_us enqueue_us
      C: one ncclAllReduce                                            9.2       8.9       9.8        4.4
      C: the same call captured, cudaGraphLaunch                      6.6       6.3       7.0        1.3
      rc=0
      """;

  @Test
  void theDirectCallTargetIsTheLargerOfTenPercentAndFifteenHundredthsOfAMicrosecond() {
    assertTrue(PerfReport.directMet(5.5, 5.0));
    assertFalse(PerfReport.directMet(5.51, 5.0));
    assertTrue(PerfReport.directMet(0.40, 0.25)); // 1.6x, but within 0.15 µs
    assertFalse(PerfReport.directMet(0.41, 0.25));
  }

  @Test
  void readsBothTablesTakingMediansOfCyclesAndTheWarmUpLines() {
    Map<Coll, PerfLogs.Table> theirs = PerfLogs.ncclTests(NCCL_TESTS.lines().toList());
    assertEquals(List.of(Coll.ALL_REDUCE, Coll.parse("alltoall")), List.copyOf(theirs.keySet()));
    assertEquals(List.of(5.0, 6.0, 5.5), theirs.get(Coll.ALL_REDUCE).outOfPlace.get(8L).times);
    assertEquals(5.5, theirs.get(Coll.ALL_REDUCE).outOfPlace.get(8L).median(), 1e-12);
    assertEquals(0.25, theirs.get(Coll.ALL_REDUCE).inPlace.get(8L).median(), 1e-12);
    assertEquals(5.0, theirs.get(Coll.ALL_REDUCE).outOfPlace.get(1024L).median(), 1e-12);

    Map<Coll, PerfLogs.Table> ours = PerfLogs.sweep(SWEEP.lines().toList());
    assertEquals(List.of(Coll.ALL_REDUCE, Coll.parse("alltoall"), Coll.BROADCAST), List.copyOf(ours.keySet()));
    PerfLogs.Cell ip = ours.get(Coll.ALL_REDUCE).inPlace.get(1024L);
    assertEquals(0.50, ip.median(), 1e-12);
    assertEquals("200000 calls, 10000.2 ms, cap", ip.warmUp);
    assertTrue(Double.isNaN(ours.get(Coll.parse("alltoall")).inPlace.get(16L).median()));

    Map<String, PerfLogs.HostRow> host = PerfLogs.host(HOST.lines().toList());
    assertEquals(10, host.size(), host.keySet().toString());
    PerfLogs.HostRow launch = PerfLogs.find(host, "(a) the same plan captured, launch()");
    assertEquals(7.5, launch.medianUs(), 1e-12);
    assertEquals("140000 runs, 10000.0 ms, cap", launch.warmUp());
    assertEquals(4.9, PerfLogs.find(host, "Plan of 200 @AllReduce fields").heapBytes(), 1e-12);
    assertEquals(6.6, PerfLogs.find(host, "C: the same call captured, cudaGraphLaunch").medianUs(), 1e-12);
  }

  @Test
  void theTablesSayWhatIsMetAndWhatIsNot() throws Exception {
    Files.writeString(dir.resolve("nccl-tests.txt"), NCCL_TESTS);
    Files.writeString(dir.resolve("sweep.txt"), SWEEP);
    Files.writeString(dir.resolve("host-cost.txt"), HOST);
    Path md = dir.resolve("out/report.md");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = BenchMain.run(new String[] {"report", "--dir", dir.toString(), "--out", md.toString()},
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(0, status, err.toString(StandardCharsets.UTF_8));
    String text = Files.readString(md);

    // AllReduce: 8 B met both ways (in place by the 0.15 µs slack), 1 KiB missed both ways
    assertTrue(text.contains("| AllReduce | 2 | 1 / 2 | 1 / 2 | 1 KiB: 6.00 / 5.00 | 1 KiB: 0.50 / 0.30 |"
        + " 120000 calls, 1000.0 ms, stable | 1 |"), text);
    assertTrue(text.contains("| 8 | 5.50 | 5.90 | 1.07 | yes | 0.25 | 0.38 | 1.52 | yes |"
        + " 120000 calls, 1000.0 ms, stable; 900000 calls, 1000.1 ms, stable |"), text);
    assertTrue(text.contains("| 1024 | 5.00 | 6.00 | 1.20 | **no** | 0.30 | 0.50 | 1.67 | **no** |"), text);
    // AlltoAll: no in-place column of ours, so in place is not compared
    assertTrue(text.contains("| AlltoAll | 2 | 1 / 2 | — | 1 KiB: 14.0 / 12.0 | — |"), text);
    assertTrue(text.contains("| 16 | 10.0 | 10.5 | 1.05 | yes | 9.00 | — | — | — |"), text);
    // Broadcast: ours only
    assertTrue(text.contains("| Broadcast | 0 | | | no nccl-tests rows |"), text);
    assertFalse(text.contains("#### Broadcast"), text);

    assertTrue(text.contains("| execute ≤ 1.05 × one raw flat call (NcclHostCostProbe) | Plan again, waiting with"
        + " cudaStreamSynchronize | 9.60 | raw FFM: one call over 51,200 floats | 9.50 | 1.01 | 1.05 | yes |"), text);
    assertTrue(text.contains("| execute ≤ 1.05 × one raw flat call (NcclGraphProbe) | (a) Plan 200 x 256 float"
        + " (coalesced: 1 call), execute | 10.0 | raw FFM: one ncclAllReduce over 51,200 floats | 9.40 | 1.06 | 1.05 |"
        + " **no** |"), text);
    assertTrue(text.contains("| launch() ≤ 1.1 × C's cudaGraphLaunch of the same call | (a) the same plan captured,"
        + " launch() | 7.50 | C: the same call captured, cudaGraphLaunch | 6.60 | 1.14 | 1.10 | **no** |"), text);
    assertTrue(text.contains("| Plan of 200 @AllReduce fields (coalesced: 1 call) | 4.9 | **no** |"), text);
    assertTrue(text.contains("| (d) one direct call over 51,200 floats | 0.0 | yes |"), text);
    assertTrue(text.contains("| (b) the same plan captured, launch() | not in the log | |"), text);
    assertTrue(text.contains("| C: one ncclAllReduce | 9.20 | 8.90 | 9.80 | 4.40 | — | — (C: fixed count) |"), text);
    assertEquals("wrote " + md + System.lineSeparator(), out.toString(StandardCharsets.UTF_8));
  }

  @Test
  void aMissingLogIsSaidNotFilled() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = BenchMain.run(new String[] {"report", "--dir", dir.toString()},
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(2, status, "an empty folder: nothing to report");
    assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("error: report needs"), err.toString());
  }
}
