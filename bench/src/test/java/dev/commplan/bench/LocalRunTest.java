package dev.commplan.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
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
      rows = Sweep.run(new Sweep.Config("local", 3, List.of(Coll.values()), DataType.F32, ReduceOp.SUM, 1,
          8, 64 * 1024, 8, 2, 1, 1, true), sink(text), sink(new ByteArrayOutputStream()), csv);
    }
    assertEquals(4 * 5 - 2, rows.size()); // AllGather and ReduceScatter skip 8 B: 2 floats on 3 ranks
    for (Sweep.Row r : rows) {
      assertEquals(0, r.outOfPlace().wrong(), r.toString());
      assertEquals(0, r.inPlace().wrong(), r.toString());
    }
    assertTrue(text.toString(StandardCharsets.UTF_8).contains("# Avg bus bandwidth"));
    SvgPlot.bandwidth(List.of(csvFile), dir.resolve("busbw.svg"), "busbw", Set.of("out", "in"));
    assertTrue(Files.exists(dir.resolve("busbw.svg")));
  }

  @Test
  void manyBuffersAllFourWaysAreRight() throws Exception {
    for (boolean inPlace : new boolean[] {true, false}) {
      Path csvFile = dir.resolve("many-" + inPlace + ".csv");
      List<ManyBuffers.Result> results;
      ByteArrayOutputStream text = new ByteArrayOutputStream();
      try (Csv csv = new Csv(csvFile)) {
        results = ManyBuffers.run(new ManyBuffers.Config("local", 2, ManyBuffers.Case.uniform(200, 16), DataType.F32,
            ReduceOp.SUM, inPlace, 2, 1, ManyBuffers.PlanSource.AUTO), sink(text), csv);
      }
      // 200 buffers have a generated plan both ways: Many200 (200 fields) and Many200Out (400 fields).
      String plan = inPlace ? "Many200Plan" : "Many200OutPlan";
      assertTrue(text.toString(StandardCharsets.UTF_8).contains("# plan: generated " + plan + ", 1 step, 1 call"),
          text.toString(StandardCharsets.UTF_8));
      assertEquals(ManyBuffers.MODES, results.stream().map(ManyBuffers.Result::mode).toList());
      for (ManyBuffers.Result r : results) {
        assertEquals(0, r.wrong(), r.toString());
      }
      SvgPlot.manyBuffers(List.of(csvFile), dir.resolve("many.svg"));
    }
  }

  @Test
  void commandLineRejectsUnknownOptions() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertEquals(2, BenchMain.run(new String[] {"sweep", "--itres", "3"}, sink(new ByteArrayOutputStream()), sink(err)));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown option --itres"));
  }
}
