package dev.commplan.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.timing.SteadyState;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Short runs on the local backend: every checked run is right, and the CSVs plot. */
class LocalRunTest {
  @TempDir Path dir;

  private static PrintStream sink(ByteArrayOutputStream bytes) {
    return new PrintStream(bytes, true, StandardCharsets.UTF_8);
  }

  @Test
  void sweepOfEveryCollectiveHasNoWrongElements() {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    Path csvFile = dir.resolve("sweep.csv");
    List<Sweep.Row> rows;
    try (Csv csv = new Csv(csvFile)) {
      rows = Sweep.run(new Sweep.Config("local", 3, Coll.values(), DataType.F32, ReduceOp.SUM, 1,
          8, 64 * 1024, 8, 2, 2, SteadyState.Rule.fixed(1), 0, 60, 1, Long.MAX_VALUE, 0, true), sink(text),
          sink(new ByteArrayOutputStream()), csv);
    }
    // 9 collectives × 5 sizes; the five per-rank ones (AllGather, ReduceScatter, Gather, Scatter, AllToAll)
    // skip 8 B: 2 floats on 3 ranks is less than 16 bytes a rank
    assertEquals(9 * 5 - 5, rows.size());
    for (Sweep.Row r : rows) {
      assertEquals(0, r.outOfPlace().wrong(), r.toString());
      assertEquals(r.coll().hasInPlace() ? 0 : -1, r.inPlace().wrong(), r.toString());
    }
    assertTrue(text.toString(StandardCharsets.UTF_8).contains("# Avg bus bandwidth"));
    SvgPlot.bandwidth(List.of(csvFile), dir.resolve("busbw.svg"), "busbw", Set.of("out", "in"));
    assertTrue(Files.exists(dir.resolve("busbw.svg")));
  }

  @Test
  void manyBuffersEveryWayIsRight() throws Exception {
    for (boolean inPlace : new boolean[] {true, false}) {
      Path csvFile = dir.resolve("many-" + inPlace + ".csv");
      List<ManyBuffers.Result> results;
      ByteArrayOutputStream text = new ByteArrayOutputStream();
      try (Csv csv = new Csv(csvFile)) {
        results = ManyBuffers.run(new ManyBuffers.Config("local", 2, ManyBuffers.Case.uniform(200, 16), DataType.F32,
            ReduceOp.SUM, inPlace, 2, SteadyState.Rule.fixed(1), ManyBuffers.PlanSource.AUTO), sink(text), csv);
      }
      // 200 buffers have a generated plan both ways: Many200 (200 fields) and Many200Out (400 fields).
      String plan = inPlace ? "Many200Plan" : "Many200OutPlan";
      assertTrue(text.toString(StandardCharsets.UTF_8).contains("# plan: generated " + plan + ", 1 step, 1 call"),
          text.toString(StandardCharsets.UTF_8));
      assertEquals(ManyBuffers.MODES, results.stream().map(ManyBuffers.Result::mode).toList());
      assertTrue(text.toString(StandardCharsets.UTF_8).contains("# graph: the local backend has no CUDA graphs:"
          + " launch() executes the plan"), text.toString(StandardCharsets.UTF_8));
      for (ManyBuffers.Result r : results) {
        assertEquals(0, r.wrong(), r.toString());
      }
      SvgPlot.manyBuffers(List.of(csvFile), dir.resolve("many.svg"));
    }
  }

  /**
   * The default warm-up runs the steady-state rule per row and says what it took, on a comment line after the
   * row (nccl-tests' thirteen columns stay as they are), and in the CSV.
   */
  @Test
  void sweepReportsEachRowsWarmUpAfterTheRow() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Path csvFile = dir.resolve("warm.csv");
    int status = BenchMain.run(new String[] {"sweep", "--ranks", "2", "--coll", "all-reduce,alltoall", "--min", "1K",
        "--max", "4K", "--factor", "4", "--iters", "5", "--batches", "4", "--warmup-min", "0.1", "--warmup-max", "0.5",
        "--warmup-min-next", "0.05", "--warmup-window", "3",
        "--csv", csvFile.toString(), "--quiet"}, sink(out), sink(err));
    String text = out.toString(StandardCharsets.UTF_8);
    assertEquals(0, status, err.toString(StandardCharsets.UTF_8));
    assertTrue(text.contains("# time: per call, the median of 4 timed units (one batch of 5 calls back to back and"
        + " one synchronize; wall time / 5, averaged over ranks)"), text);
    assertTrue(text.contains("# warm-up: units (one batch of 5 calls back to back and one synchronize) until the"
        + " median time per call of the last 3 is within 5% of the 3 before"), text);
    List<String> lines = text.lines().toList();
    int rows = 0;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.startsWith("#")) {
        continue;
      }
      rows++;
      assertEquals(13, line.trim().split("\\s+").length, "nccl-tests' columns: " + line);
      String warm = lines.get(i + 1);
      assertTrue(warm.matches("#   warm-up  out-of-place: \\d+ calls, [0-9.]+ ms, (stable|cap)   in-place: "
          + "(\\d+ calls, [0-9.]+ ms, (stable|cap)|N/A)"), warm);
    }
    assertEquals(4, rows, text);
    List<List<String>> csv = Csv.read(csvFile);
    List<String> header = csv.get(0);
    for (List<String> row : csv.subList(1, csv.size())) {
      long calls = Long.parseLong(row.get(header.indexOf("oop_warmup_calls")));
      String end = row.get(header.indexOf("oop_warmup_end"));
      assertTrue(List.of("stable", "cap").contains(end), row.toString());
      assertTrue(calls >= 5 && calls % 5 == 0, "whole batches: " + calls);
      // stable needs two windows of 3 batches; the cap may come first on a busy machine
      assertTrue(end.equals("cap") || calls >= 2 * 3 * 5, "two windows of whole batches at least: " + row);
      assertEquals("4", row.get(header.indexOf("oop_batches")), row.toString());
    }
  }

  /** --time-limit: no new size (sweep) or way (many) starts once it is reached, and what ran is printed. */
  @Test
  void aTimeLimitStopsBetweenRowsAndKeepsWhatRan() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status = BenchMain.run(new String[] {"sweep", "--ranks", "2", "--coll", "all-reduce,broadcast", "--min", "8",
        "--max", "1M", "--iters", "2", "--batches", "2", "--warmup", "1", "--time-limit", "0.000001", "--quiet"},
        sink(out), sink(new ByteArrayOutputStream()));
    String text = out.toString(StandardCharsets.UTF_8);
    assertEquals(0, status, text);
    assertTrue(text.contains("# stopped: --time-limit 0.000001 s reached before all-reduce 16 B; 1 of 36 sizes were"
        + " run"), text);
    assertEquals(1, text.lines().filter(l -> !l.startsWith("#")).count(), text);

    out.reset();
    status = BenchMain.run(new String[] {"many", "--buffers", "3", "--count", "8", "--iters", "2", "--warmup", "1",
        "--time-limit", "0.000001", "--quiet"}, sink(out), sink(new ByteArrayOutputStream()));
    text = out.toString(StandardCharsets.UTF_8);
    assertEquals(0, status, text);
    assertTrue(text.contains("# stopped: --time-limit 0.000001 s reached before group; 1 of 5 ways were run"), text);
    assertTrue(text.lines().anyMatch(l -> l.trim().startsWith("separate ")), text);
    assertTrue(text.lines().noneMatch(l -> l.startsWith("# separate/plan")), text);
  }

  @Test
  void manyRunsTheWaysAskedInTheirUsualOrder() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status = BenchMain.run(new String[] {"many", "--buffers", "3", "--count", "8", "--iters", "2", "--warmup", "1",
        "--modes", "graph,plan", "--quiet"}, sink(out), sink(new ByteArrayOutputStream()));
    String text = out.toString(StandardCharsets.UTF_8);
    assertEquals(0, status, text);
    List<String[]> rows = text.lines().filter(l -> !l.startsWith("#")).map(l -> l.trim().split("\\s+")).toList();
    assertEquals(List.of("plan", "graph"), rows.stream().map(r -> r[0]).toList(), text);
    assertTrue(rows.stream().allMatch(r -> r[4].equals("0")), "#wrong: " + text);
  }

  @Test
  void everyCommandLineMistakeIsOneLineWithStatusTwoBeforeAnyWork() {
    String[][] cases = {
      {}, {"nope"}, {"sweep", "--itres", "3"}, {"sweep", "--iters", "x"}, {"sweep", "--iters", "0"},
      {"sweep", "--backend", "gloo"}, {"sweep", "--ranks", "100000"}, {"sweep", "--max", "99999999999G"},
      {"sweep", "--max", "lots"}, {"sweep", "--min", "1K", "--max", "8"}, {"sweep", "--type", "float99"},
      {"sweep", "--op", "mean"}, {"sweep", "--csv", "/proc/x/sweep.csv"}, {"sweep", "stray"}, {"sweep", "--iters"},
      {"many", "--model", "gpt3"}, {"many", "--plan", "magic"}, {"many", "--csv", "/proc/x/many.csv"},
      {"local-target", "--ranks", "2,1000"}, {"local-target", "--ranks", "2,x"},
      {"plot"}, {"plot", "--sweep", "no-such.csv"}, {"plot", "--many", "no-such.csv"},
      {"sweep", "--warmup", "lots"}, {"sweep", "--warmup", "-3"}, {"sweep", "--warmup", "5", "--warmup-max", "2"},
      {"sweep", "--warmup-min", "3", "--warmup-max", "1"}, {"sweep", "--warmup-window", "0"},
      {"sweep", "--batches", "0"}, {"sweep", "--check-max", "x"}, {"many", "--time-limit", "-1"},
      {"many", "--measure-max", "soon"}, {"local-target", "--warmup-tolerance", "-0.1"},
      {"many", "--modes", "plan,nope"}, {"report", "--multirank", "--host", "host-cost.txt"},
      {"finite-cost", "--type", "int32"}, {"finite-cost", "--size", "1"}, {"finite-cost", "--ranks", "0"},
    };
    for (String[] args : cases) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      long t0 = System.nanoTime();
      int status = BenchMain.run(args, sink(out), sink(err));
      String e = err.toString(StandardCharsets.UTF_8);
      String what = String.join(" ", args) + " -> " + e;
      assertEquals(2, status, what);
      assertEquals("", out.toString(StandardCharsets.UTF_8), what);
      assertTrue(e.startsWith("error: "), what);
      assertEquals(1, e.lines().count(), what);
      assertTrue((System.nanoTime() - t0) / 1e9 < 5, "not up front: " + what);
    }
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    BenchMain.run(new String[] {"sweep", "--itres", "3"}, sink(new ByteArrayOutputStream()), sink(err));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown option --itres"));
    err.reset();
    BenchMain.run(new String[] {"many", "--ranks", "100000"}, sink(new ByteArrayOutputStream()), sink(err));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("at most " + BenchMain.MAX_LOCAL_RANKS), err.toString());
  }

  /** Small and short: every way runs, the ratios are printed, and the check refuses the NaN at the end. */
  @Test
  void finiteCostTimesEveryWayAndTheCheckRefusesANaN() {
    for (boolean inPlace : new boolean[] {false, true}) {
      ByteArrayOutputStream text = new ByteArrayOutputStream();
      FiniteCost.Result r = FiniteCost.run(new FiniteCost.Config("local", 2, 64 * 1024, DataType.BF16, inPlace, 2, 3,
          SteadyState.Rule.fixed(2)), sink(text));
      assertEquals(FiniteCost.WAYS, r.lines().stream().map(FiniteCost.Line::way).toList());
      assertTrue(r.onOverOff() > 0 && r.offOverDirect() > 0, r.toString());
      String out = text.toString(StandardCharsets.UTF_8);
      assertTrue(out.contains("# check on / check off: ") && out.contains("plan, check on"), out);
    }
  }

  @Test
  void plottingSomethingThatIsNotOurCsvIsOneLineWithStatusOne() throws Exception {
    Path notOurs = Files.writeString(dir.resolve("other.csv"), "a,b\n1,2\n");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = BenchMain.run(new String[] {"plot", "--sweep", notOurs.toString(), "--out", dir.toString()},
        sink(new ByteArrayOutputStream()), sink(err));
    assertEquals(1, status, err.toString(StandardCharsets.UTF_8));
    assertEquals(1, err.toString(StandardCharsets.UTF_8).lines().count(), err.toString(StandardCharsets.UTF_8));
  }

  /** Long many-buffers runs say how far they are on stderr (thresholds set to 0 here), unless --quiet. */
  @Test
  void manyBuffersShowsProgressUnlessQuiet() {
    double quietFor = ManyBuffers.quietForS;
    double every = ManyBuffers.everyS;
    try {
      ManyBuffers.quietForS = 0;
      ManyBuffers.everyS = 0;
      for (boolean quiet : new boolean[] {false, true}) {
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        ManyBuffers.run(new ManyBuffers.Config("local", 2, ManyBuffers.Case.uniform(3, 8), DataType.F32, ReduceOp.SUM,
            false, 2, SteadyState.Rule.fixed(1), 60, 0, ManyBuffers.PlanSource.AUTO, quiet),
            sink(new ByteArrayOutputStream()), sink(progress), null);
        String p = progress.toString(StandardCharsets.UTF_8);
        if (quiet) {
          assertEquals("", p);
        } else {
          for (int i = 0; i < ManyBuffers.MODES.size(); i++) {
            assertTrue(p.contains("# progress: " + ManyBuffers.MODES.get(i) + " done (" + (i + 1) + "/"
                + ManyBuffers.MODES.size() + "): "), p);
          }
          assertTrue(p.contains("# progress: plan: warming up (1 steps), "), p);
          assertTrue(p.contains("# progress: plan: warm-up 1 steps, "), p);
        }
      }
    } finally {
      ManyBuffers.quietForS = quietFor;
      ManyBuffers.everyS = every;
    }
  }
}
